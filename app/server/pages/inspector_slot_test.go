package pages_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/testwait"
)

// A step its concurrency pool holds back links, from its panel, to the
// attempt that holds the pool's slot: the other run's step.
func TestInspectorHeldStepLinksToTheSlotHolders(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: vendor
steps:
  - {ref: call, type: task, concurrency: {key_expr: '"vendor"', limit: 1}, with: {handler: builtin.sleep, input_expr: '{"ms": 30000}'}}
`)
	first := b.start(t, runs.Trigger{Definition: "vendor"})
	b.waitNode(t, first, "call", engine.NodeRunning)
	second := b.start(t, runs.Trigger{Definition: "vendor"})
	path := "/runs/" + second.String() + "?node=call"
	var body string
	if !testwait.Until(context.Background(), 20*time.Second, func() bool {
		a := b.get(b.viewer, path)
		body = a.Body
		return a.Status == http.StatusOK && strings.Contains(body, `id="node-slot-holders"`) && strings.Contains(body, `class="mono slot-holder"`)
	}) {
		t.Fatalf("the held step's panel never linked its pool's holder: %.2000s", body[max(0, strings.Index(body, `id="node"`)):])
	}
	wantPage(t, "held step", b.get(b.viewer, path), http.StatusOK,
		`id="node-state">held`, `a slot of concurrency pool &#34;vendor&#34;`,
		`href="`+b.base+`/runs/`+first.String()+`?node=call#node"`, `data-run="`+first.String()+`" data-node="call"`)
	if strings.Contains(body, `data-run="`+second.String()+`"`) {
		t.Error("the held step is listed among the pool's holders")
	}
	// The holder's own panel holds no such list: it is not held.
	if a := b.get(b.viewer, "/runs/"+first.String()+"?node=call"); strings.Contains(a.Body, `id="node-slot-holders"`) {
		t.Error("the step holding the slot lists holders")
	}
	for _, id := range []string{first.String(), second.String()} {
		b.post(b.owner, "/runs/"+id+"/cancel", nil)
	}
}
