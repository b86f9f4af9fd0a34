package pages_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
)

// deepList is [[[…]]] nested depth deep: 2 × depth bytes of JSON.
func deepList(depth int) any {
	var v any = []any{}
	for range depth {
		v = []any{v}
	}
	return v
}

// deepObject is {"a": {"a": …}} nested depth deep.
func deepObject(depth int) any {
	var v any = map[string]any{}
	for range depth {
		v = map[string]any{"a": v}
	}
	return v
}

// A run whose input is deeply nested renders its page, the inbox showing
// it to an approver and the runs list in well under 2 MB: pages show a
// bounded preview, and the whole value downloads from its link.
func TestDeepInputRendersSmall(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: deep
steps:
  - { ref: ok, type: approval, with: { approvers: [ "abe@t.example" ], title: Look at this } }
`)
	for name, input := range map[string]any{
		"3,000-deep object":     map[string]any{"x": deepObject(3000)},
		"9,000-deep 18 KB list": map[string]any{"x": deepList(9000)},
	} {
		raw, _ := json.Marshal(input)
		id := b.start(t, runs.Trigger{Definition: "deep", Input: input})
		b.waitNode(t, id, "ok", engine.NodeWaiting)
		for what, a := range map[string]servertest.Answer{
			"run page":  b.get(b.owner, "/runs/"+id.String()),
			"inbox":     b.get(b.approver, "/inbox"),
			"runs list": b.get(b.owner, "/runs"),
		} {
			if a.Status != 200 || len(a.Body) > 2<<20 {
				t.Errorf("%s, %s: %d, %d bytes; want 200 under 2 MB", name, what, a.Status, len(a.Body))
			}
			if what != "runs list" && !strings.Contains(a.Body, "preview cut short") {
				t.Errorf("%s, %s: no cut preview of the input", name, what)
			}
		}
		link := regexp.MustCompile(`href="(/t/[^"]+/runs/` + id.String() + `/json/input)"`).FindStringSubmatch(b.get(b.approver, "/inbox").Body)
		if link == nil {
			t.Fatalf("%s: the inbox has no download link for the input", name)
		}
		full := b.approver.Get(b.srvURL + link[1])
		if full.Status != 200 || full.Body != string(raw) || !strings.Contains(full.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("%s: download = %d, %d bytes (want %d), %q", name, full.Status, len(full.Body), len(raw), full.Header.Get("Content-Disposition"))
		}
		t.Logf("%s: input %d bytes; run page %d bytes", name, len(raw), len(b.get(b.owner, "/runs/"+id.String()).Body))
	}
}
