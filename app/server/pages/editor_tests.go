package pages

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/wftest"
	"github.com/ductor/ductor/views"
)

// The editor's "Run tests" runs the posted cases against the posted
// document with the runner behind `ductor test`: in memory, in virtual
// time, nothing stored. It is a tenant's input run on the server's CPU,
// so it is bounded: one run at a time per tenant (another gets 429),
// at most maxEditorCases cases, and editorTestBudget of wall time, after
// which the case under way fails with "stopped".
const (
	maxEditorCases   = 50
	editorTestBudget = 3 * time.Second
)

// editorTester runs the editor's tests; built once with the routes.
type editorTester struct {
	runner func() (*wftest.Runner, error) // built on first use
	mu     sync.Mutex
	busy   map[uuid.UUID]bool // tenants with a run under way
}

func newEditorTester() *editorTester {
	return &editorTester{runner: sync.OnceValues(wftest.NewRunner), busy: map[uuid.UUID]bool{}}
}

// handleEditorTests answers the results (script: JSON with the results'
// HTML) or the editor page with them (a plain form post).
func handleEditorTests(s *store.Store, t *editorTester) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, key := httpx.ViewerOf(c), c.Param("key")
		doc, tests := c.FormValue("document"), c.FormValue("tests")
		if !t.claim(v.Tenant.ID) {
			return apperr.New(apperr.RateLimited, "tests of this tenant are already running; try again when they end")
		}
		res, err := t.run(c.Request().Context(), key, []byte(doc), []byte(tests))
		t.release(v.Tenant.ID)
		if err != nil {
			return err
		}
		if wantsJSON(c) {
			var html bytes.Buffer
			if err := views.TestResults(res).Render(c.Request().Context(), &html); err != nil {
				return err
			}
			return c.JSON(http.StatusOK, map[string]any{
				"html": html.String(), "ran": res.Ran, "cases": len(res.Cases), "failed": res.Failed(), "updated": res.Updated,
			})
		}
		def, err := s.DefinitionGet(c.Request().Context(), v.Tenant.ID, key)
		if err != nil {
			return err
		}
		return renderEditor(c, s, http.StatusOK, def, doc, "", func(d *views.EditorData) { d.Tests = res })
	}
}

func (t *editorTester) claim(tenant uuid.UUID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.busy[tenant] {
		return false
	}
	t.busy[tenant] = true
	return true
}

func (t *editorTester) release(tenant uuid.UUID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.busy, tenant)
}

// run compiles doc as the editor's check does (under the page's key) and
// runs the cases in tests against it.
func (t *editorTester) run(ctx context.Context, key string, doc, tests []byte) (views.EditorTests, error) {
	out := views.EditorTests{Source: string(tests)}
	runner, err := t.runner()
	if err != nil {
		return out, err
	}
	check := checkDocument(key, doc)
	if !check.Valid() {
		out.Error = "the document has problems; fix them to run its tests"
		if len(check.Problems) > 0 {
			out.Error += " (" + check.Problems[0].String() + ")"
		}
		return out, nil
	}
	f, err := wftest.ParseCases(tests, check.Document)
	if err != nil {
		out.Error = "the tests: " + err.Error()
		return out, nil
	}
	if len(f.Tests) == 0 {
		out.Error = "the tests list no case: add one under tests:"
		return out, nil
	}
	if len(f.Tests) > maxEditorCases {
		out.Error = fmt.Sprintf("the tests list %d cases; the editor runs at most %d (run more with ductor test)", len(f.Tests), maxEditorCases)
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, editorTestBudget)
	defer cancel()
	results := runner.RunCases(ctx, f, check.Manifest, nil, nil)
	out.Ran = true
	for _, r := range results {
		tc := views.EditorTestCase{Name: r.Name, Passed: r.Passed(), Failures: r.Failures}
		if r.Err != nil {
			tc.Failures = []string{r.Err.Error()}
		}
		if o := r.Outcome; o != nil {
			tc.Status, tc.Ticks, tc.Duration = o.Status, o.Ticks, o.Duration
		}
		out.Cases = append(out.Cases, tc)
	}
	if out.Failed() > 0 {
		if text, err := wftest.Update(f, results); err == nil {
			out.Updated = string(text)
		}
	}
	return out, nil
}
