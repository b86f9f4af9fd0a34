package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// waitingNodeFixture gives the run a node "hold" that waits, for the
// routes that act on a running or waiting node.
func waitingNodeFixture(t *testing.T, s *store.Store, tenant store.Tenant, run store.Run) {
	t.Helper()
	hold := &engine.Node{ID: "hold", Ref: "hold", State: engine.NodeWaiting, Attempt: 1, Waiting: &engine.Waiting{Type: engine.WaitSignal, Name: "go"}}
	if err := s.RunNodesUpsert(context.Background(), tenant.ID, run.ID, []*engine.Node{hold}); err != nil {
		t.Fatal(err)
	}
}

// The inspector offers "Cancel NODE" on a running or waiting step (to
// operators only), asks to confirm it (data-confirm, read by
// js/confirm.js), and shows why the node was cancelled once it is; the
// run goes on down the node's error edge. A scatter's live children each
// offer it too, and the panel says when a scatter completed early.
func TestInspectorCancelsANode(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: park
steps:
  - {ref: hold, type: signal, with: {name: go}, on_error: continue}
  - {ref: after, type: transform, with: {expr: 'steps.hold.error.message'}}
edges:
  - {from: hold, to: after, on: error}
`)
	id := b.start(t, runs.Trigger{Definition: "park"})
	b.waitNode(t, id, "hold", engine.NodeWaiting)
	path := "/runs/" + id.String()
	wantPage(t, "waiting node", b.get(b.owner, path+"?node=hold"), http.StatusOK,
		`id="cancel-node"`, `data-confirm="Cancel hold?`, `action="`+b.base+path+`/cancel-node"`, `js/confirm.`)
	if strings.Contains(b.get(b.viewer, path+"?node=hold").Body, `id="cancel-node"`) {
		t.Error("the viewer is offered to cancel a node")
	}
	wantRedirect(t, "cancel node", b.post(b.owner, path+"/cancel-node", url.Values{"node": {"hold"}, "reason": {"no signal will come"}}), "?done=cancel-node")
	done := b.waitStatus(t, id, engine.RunSucceeded)
	if prettyOutput(done) != `{"after":"cancelled by an operator: no signal will come"}` {
		t.Errorf("output %s", prettyOutput(done))
	}
	page := b.get(b.owner, path+"?node=hold")
	wantPage(t, "cancelled node", page, http.StatusOK, `id="node-cancel-reason">cancelled by an operator: no signal will come<`)
	if strings.Contains(page.Body, `id="cancel-node"`) {
		t.Error("a cancelled node is offered to cancel")
	}
	wantPage(t, "cancel in an ended run", b.post(b.owner, path+"/cancel-node", url.Values{"node": {"hold"}}), http.StatusConflict, "run is succeeded")
}

func TestInspectorCancelsAScatterChild(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: slow-fan
steps:
  - ref: fan
    type: scatter
    with: {items_expr: '[1, 2]', do: {type: task, with: {handler: builtin.sleep, input_expr: '{"ms": 30000}'}}}
`)
	id := b.start(t, runs.Trigger{Definition: "slow-fan"})
	path := "/runs/" + id.String()
	b.waitRun(t, id, "with both children running", func(store.Run) bool {
		kids, err := b.store.RunNodesChildren(context.Background(), b.tenant.ID, id, engine.Need{Scatter: "fan", From: 0, To: 2})
		return err == nil && len(kids) == 2 && kids[0].State == engine.NodeRunning && kids[1].State == engine.NodeRunning
	})
	wantPage(t, "running scatter", b.get(b.owner, path+"?node=fan"), http.StatusOK, `id="cancel-child-0"`, `id="cancel-child-1"`, `value="fan[1]"`)
	wantRedirect(t, "cancel a child", b.post(b.owner, path+"/cancel-node", url.Values{"node": {"fan[1]"}}), "?done=cancel-node")
	b.waitRun(t, id, "with fan[1] cancelled", func(store.Run) bool {
		kids, err := b.store.RunNodesByName(context.Background(), b.tenant.ID, id, []string{"fan[1]"})
		return err == nil && len(kids) == 1 && kids[0].State == engine.NodeCancelled && kids[0].Error.Code == engine.CodeCancelled
	})
	wantRedirect(t, "cancel the scatter", b.post(b.owner, path+"/cancel-node", url.Values{"node": {"fan"}}), "?done=cancel-node")
	done := b.waitStatus(t, id, engine.RunFailed)
	if done.State.Error == nil || done.State.Error.Code != engine.CodeCancelled || done.State.Error.Node != "fan" {
		t.Errorf("run error %+v", done.State.Error)
	}
}

func TestInspectorShowsEarlyCompletion(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: early
steps:
  - ref: fan
    type: scatter
    with:
      items_expr: '[0, 1, 2, 3]'
      complete_when: 'succeeded >= 1'
      do: {type: task, with: {handler: builtin.sleep, input_expr: '{"ms": item == 0 ? 0 : 30000}'}}
`)
	id := b.start(t, runs.Trigger{Definition: "early"})
	b.waitStatus(t, id, engine.RunSucceeded)
	wantPage(t, "early scatter", b.get(b.owner, "/runs/"+id.String()+"?node=fan"), http.StatusOK,
		`id="node-early">complete_when held once 1 of 4 children had finished (1 succeeded, 0 failed); 3 unfinished children were cancelled`,
		`scatter fan completed early (complete_when)`, `class="gtags"`, "Completes early")
}
