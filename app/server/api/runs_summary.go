package api

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

// MaxIncludedBytes caps each value a list answer includes on request
// (?include=input,output,context): a larger one is left out and named in
// the run's truncated list, for GET /runs/{id} to fetch whole.
const MaxIncludedBytes = 64 << 10

// includable are the values a list leaves out unless asked for them.
var includable = []string{"input", "output", "context"}

// RunSummaryJSON is a run as lists show it: without its input, output and
// context unless ?include= asks for them.
type RunSummaryJSON struct {
	RunJSON
	Input     any      `json:"input,omitempty"`
	Output    any      `json:"output,omitempty"`
	Context   any      `json:"context,omitempty"`
	Truncated []string `json:"truncated,omitempty"`
}

// includeParam reads a run list's ?include=a,b.
func includeParam(c echo.Context) (map[string]bool, error) {
	return includeOf(c, includable)
}

// includeOf reads ?include=a,b, each among allowed.
func includeOf(c echo.Context, includable []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, v := range strings.Split(c.QueryParam("include"), ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if !slices.Contains(includable, v) {
			return nil, apperr.New(apperr.Invalid, "include takes %s, not %q", strings.Join(includable, ", "), v)
		}
		out[v] = true
	}
	return out, nil
}

func runSummary(r store.Run, include map[string]bool) RunSummaryJSON {
	full := runJSON(r)
	out := RunSummaryJSON{RunJSON: full}
	for _, part := range []struct {
		name string
		from any
		to   *any
	}{{"input", full.Input, &out.Input}, {"output", full.Output, &out.Output}, {"context", full.Context, &out.Context}} {
		if !include[part.name] || part.from == nil {
			continue
		}
		if raw, err := json.Marshal(part.from); err != nil || len(raw) > MaxIncludedBytes {
			out.Truncated = append(out.Truncated, part.name)
			continue
		}
		*part.to = part.from
	}
	return out
}
