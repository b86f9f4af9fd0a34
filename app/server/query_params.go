package server

import (
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
)

// The query parameters each list of the JSON API takes. A name ending in
// "." admits every parameter that starts with it (attr.NAME).
var (
	runListParams = []string{"status", "definition", "definition_match", "subject", "q", "parent_run_id",
		"attr.", "attrs", "from", "to", "count", "include", "limit", "cursor"}
	historyParams   = []string{"after", "limit"}
	childrenParams  = []string{"state", "q", "after", "limit", "cursor"}
	approvalParams  = []string{"status", "limit"}
	caseListParams  = []string{"status", "include", "limit"}
	keyedListParams = []string{"limit", "cursor"} // definitions, schedules, webhooks
)

// allowQuery refuses a request whose query string holds a parameter
// outside allowed: a misspelt filter would otherwise be ignored, and the
// answer look like the filtered list. The answer is a 422 naming every
// unknown parameter (details: [{"parameter": NAME}]).
func allowQuery(allowed ...string) echo.MiddlewareFunc {
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

// refuseNUL answers a request whose path or query holds a NUL character,
// which no stored text can hold: in the path it names nothing (404), in
// the query it is a 422 naming the parameter.
func refuseNUL(next echo.HandlerFunc) echo.HandlerFunc {
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
