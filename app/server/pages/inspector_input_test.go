package pages_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
)

// A step's panel shows the input its attempt received, its settings as
// the tick evaluated them, beside its settings as written.
func TestInspectorShowsTheInputAnAttemptReceived(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: doubled
steps:
  - { ref: a, type: task, with: { handler: builtin.echo, input_expr: '{"order": input.order * 2, "who": input.who}' } }
`)
	id := b.start(t, runs.Trigger{Definition: "doubled", Input: map[string]any{"order": 21, "who": "ada"}})
	b.waitStatus(t, id, engine.RunSucceeded)
	page := b.get(b.viewer, "/runs/"+id.String()+"?node=a")
	wantPage(t, "the step", page, http.StatusOK, `id="node-attempt-input"`, `as attempt 1 received it`, `id="node-settings-details"`, "as written in the definition")
	body := page.Body
	in := body[strings.Index(body, `id="node-attempt-input"`):]
	in = in[:strings.Index(in, "</pre>")]
	for _, want := range []string{`&#34;order&#34;: 42`, `&#34;who&#34;: &#34;ada&#34;`, `&#34;handler&#34;: &#34;builtin.echo&#34;`} {
		if !strings.Contains(in, want) {
			t.Errorf("the attempt's input lacks %s: %s", want, in)
		}
	}
	if strings.Contains(in, "input_expr") {
		t.Errorf("the attempt's input shows the expression, not its value: %s", in)
	}
	settings := body[strings.Index(body, `id="node-settings-details"`):]
	if !strings.Contains(settings[:strings.Index(settings, "</details>")], "input_expr") {
		t.Error("the settings no longer show the step as written")
	}
}
