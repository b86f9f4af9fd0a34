package httpx

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
)

// The query parameters each list of the JSON API takes. A name ending in
// "." admits every parameter that starts with it (attr.NAME).
var (
	RunListParams = []string{"status", "definition", "definition_match", "subject", "q", "parent_run_id",
		"attr.", "attrs", "from", "to", "count", "include", "limit", "cursor"}
	HistoryParams   = []string{"after", "limit"}
	ChildrenParams  = []string{"state", "q", "after", "limit", "cursor"}
	ApprovalParams  = []string{"status", "limit"}
	CaseListParams  = []string{"status", "include", "limit"}
	KeyedListParams = []string{"limit", "cursor"} // definitions, schedules, webhooks
)

// AllowQuery refuses a request whose query string holds a parameter
// outside allowed: a misspelt filter would otherwise be ignored, and the
// answer look like the filtered list. The answer is a 422 naming every
// unknown parameter (details: [{"parameter": NAME}]).
func AllowQuery(allowed ...string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := checkQuery(c.QueryParams(), allowed); err != nil {
				return err
			}
			return next(c)
		}
	}
}

type unknownParam struct {
	Parameter string `json:"parameter"`
}

func checkQuery(q url.Values, allowed []string) error {
	var unknown []string
	for name := range q {
		if !queryAllowed(name, allowed) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	details := make([]unknownParam, len(unknown))
	for i, name := range unknown {
		details[i] = unknownParam{name}
	}
	return apperr.New(apperr.Unprocessable, "unknown query parameter %q: this list takes %s",
		unknown[0], strings.ReplaceAll(strings.Join(allowed, ", "), "attr.", "attr.NAME")).WithDetails(details)
}

func queryAllowed(name string, allowed []string) bool {
	for _, a := range allowed {
		if name == a || (strings.HasSuffix(a, ".") && len(name) > len(a) && strings.HasPrefix(name, a)) {
			return true
		}
	}
	return false
}

// RefuseNUL answers a request whose path or query holds a NUL character,
// which no stored text can hold: in the path it names nothing (404), in
// the query it is a 422 naming the parameter.
func RefuseNUL(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		if strings.IndexByte(u.Path, 0) >= 0 {
			return apperr.New(apperr.NotFound, "not found")
		}
		if !strings.Contains(u.RawQuery, "%00") {
			return next(c)
		}
		for name, values := range c.QueryParams() {
			if strings.IndexByte(name, 0) >= 0 || slices.ContainsFunc(values, func(v string) bool { return strings.IndexByte(v, 0) >= 0 }) {
				return apperr.New(apperr.Unprocessable, "query parameter %q must not contain a NUL character", name).
					WithDetails([]unknownParam{{name}})
			}
		}
		return next(c)
	}
}

const (
	DefaultPage = 50
	MaxPage     = 500
)

// LimitParam is ?limit=, from 1 to MaxPage (DefaultPage when absent).
func LimitParam(c echo.Context) (int, error) {
	v := c.QueryParam("limit")
	if v == "" {
		return DefaultPage, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxPage {
		return 0, apperr.New(apperr.Invalid, "limit must be between 1 and %d", MaxPage)
	}
	return n, nil
}

// PageParams reads after (a sequence number) and limit.
func PageParams(c echo.Context) (int64, int, error) {
	limit, err := LimitParam(c)
	if err != nil {
		return 0, 0, err
	}
	v := c.QueryParam("after")
	if v == "" {
		return 0, limit, nil
	}
	after, err := strconv.ParseInt(v, 10, 64)
	if err != nil || after < 0 {
		return 0, 0, apperr.New(apperr.Invalid, "after must be a sequence number")
	}
	return after, limit, nil
}

// ChildStateParam checks a ?state= of a run's children.
func ChildStateParam(v string) (string, error) {
	if v == "" || slices.Contains(childStates, engine.NodeState(v)) {
		return v, nil
	}
	return "", apperr.New(apperr.Invalid, "state %q is not a node state", v)
}

// childStates are the states a child can be in, for ?state=.
var childStates = []engine.NodeState{
	engine.NodePending, engine.NodeReady, engine.NodeRunning, engine.NodeWaiting,
	engine.NodeSucceeded, engine.NodeFailed, engine.NodeSkipped, engine.NodeCancelled,
}
