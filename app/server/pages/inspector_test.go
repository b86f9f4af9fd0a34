package pages_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/pages"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// gateFlow runs a, waits at gate for signal "go", then runs b.
const gateFlow = `
key: gated
steps:
  - { ref: a, type: task, with: { handler: builtin.echo } }
  - { ref: gate, type: signal, with: { name: go } }
  - { ref: b, type: task, with: { handler: builtin.noop } }
edges:
  - { from: a, to: gate }
  - { from: gate, to: b }
`

// The inspector shows the graph coloured by state, the selected step's
// waiting and attempts, history and the live JSON; a viewer sees it all
// but no action; an operator's signal moves the run on.
func TestInspectorShowsARunAndSendsASignal(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, gateFlow)
	id := b.start(t, runs.Trigger{Definition: "gated", Input: map[string]any{"order": 7}, Subject: "order-7"})
	b.waitNode(t, id, "gate", engine.NodeWaiting)
	path := "/runs/" + id.String()

	page := b.get(b.viewer, path+"?node=gate")
	wantPage(t, "viewer's inspector", page, http.StatusOK,
		`id="run-id"`, id.String(), `id="run-status" class="status waiting"`,
		`data-ref="gate" data-state="waiting"`, `data-ref="a" data-state="succeeded"`, `data-ref="b" data-state="pending"`,
		`id="node-waiting"`, "signal go", `id="timeline"`, "order-7", `js/inspector.`)
	for _, action := range []string{`id="actions"`, `id="cancel-run"`, `id="send-signal"`} {
		if strings.Contains(page.Body, action) {
			t.Errorf("the viewer is offered %s", action)
		}
	}
	wantPage(t, "step a", b.get(b.viewer, path+"?node=a"), http.StatusOK, `id="attempts"`, `id="node-output"`, `&#34;order&#34;: 7`)
	wantPage(t, "unknown step", b.get(b.viewer, path+"?node=nope"), http.StatusNotFound, `id="error-title"`, `class="user-email"`, "Back to the runs")
	if a := b.post(b.viewer, path+"/signal", url.Values{"name": {"go"}}); a.Status != http.StatusForbidden {
		t.Fatalf("viewer's signal = %d, want 403", a.Status)
	}

	live := b.get(b.viewer, path+"/live")
	var l pages.LiveRun
	if err := json.Unmarshal([]byte(live.Body), &l); err != nil || l.Status != "waiting" || l.Nodes["gate"].State != "waiting" || l.Final {
		t.Fatalf("live = %d %s (%v)", live.Status, live.Body, err)
	}

	wantPage(t, "owner's inspector", b.get(b.owner, path), http.StatusOK, `id="actions"`, `id="cancel-run"`, `id="send-signal"`, `id="continue-as-new"`)
	bad := b.post(b.owner, path+"/signal", url.Values{"name": {"go"}, "payload": {"{nope"}})
	wantPage(t, "signal with bad JSON", bad, http.StatusBadRequest, `id="action-error"`, "payload must be JSON", `value="go"`, "{nope")
	wantRedirect(t, "signal", b.post(b.owner, path+"/signal", url.Values{"name": {"go"}, "request_id": {"r-1"}, "payload": {`{"ok": true}`}}), path+"?done=signal")
	b.waitStatus(t, id, engine.RunSucceeded)

	wantPage(t, "after the signal", b.get(b.owner, path+"?done=signal"), http.StatusOK,
		`id="notice"`, "Signal sent", `id="signal-list"`, "r-1", `data-ref="b" data-state="succeeded"`)
	again := b.post(b.owner, path+"/signal", url.Values{"name": {"go"}})
	wantPage(t, "signal to an ended run", again, http.StatusConflict, `id="action-error"`)
}

// Cancel and continue-as-new from the inspector's forms; the lineage
// links the two runs both ways.
func TestInspectorCancelAndContinueAsNew(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, gateFlow)
	first := b.start(t, runs.Trigger{Definition: "gated", Input: map[string]any{"n": 1}})
	b.waitNode(t, first, "gate", engine.NodeWaiting)

	wantRedirect(t, "continue as new", b.post(b.owner, "/runs/"+first.String()+"/continue-as-new", url.Values{"input": {`{"n": 2}`}}), "?done=can")
	ended := b.waitRun(t, first, "continued", func(r store.Run) bool { return r.ContinuedToRunID != nil })
	next := *ended.ContinuedToRunID
	wantPage(t, "predecessor", b.get(b.viewer, "/runs/"+first.String()), http.StatusOK, `id="successor-link"`, next.String(), "terminated", `id="continued-banner"`)
	wantPage(t, "successor", b.get(b.viewer, "/runs/"+next.String()), http.StatusOK, `id="predecessor-link"`, first.String())

	b.waitNode(t, next, "gate", engine.NodeWaiting)
	wantRedirect(t, "cancel", b.post(b.owner, "/runs/"+next.String()+"/cancel", url.Values{"reason": {"not needed"}}), "?done=cancel")
	b.waitStatus(t, next, engine.RunCancelled)
	page := b.get(b.owner, "/runs/"+next.String())
	wantPage(t, "cancelled run", page, http.StatusOK, `id="run-status" class="status cancelled"`, `data-ref="gate" data-state="cancelled"`, "not needed")
	if strings.Contains(page.Body, `id="cancel-run"`) {
		t.Error("an ended run still offers cancel")
	}
	if a := b.post(b.viewer, "/runs/"+next.String()+"/cancel", nil); a.Status != http.StatusForbidden {
		t.Errorf("viewer's cancel = %d, want 403", a.Status)
	}
	if a := b.post(b.owner, "/runs/00000000-0000-0000-0000-000000000001/cancel", nil); a.Status != http.StatusNotFound {
		t.Errorf("cancel of an unknown run = %d, want 404", a.Status)
	}
}

// A failed node offers retry; the retry starts a new generation; a node
// that did not fail is refused with the reason.
func TestInspectorRetriesAFailedNode(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: flaky
steps:
  - { ref: ok, type: task, with: { handler: builtin.noop } }
  - { ref: boom, type: task, with: { handler: builtin.fail, input_expr: '{"message": "broken"}' } }
edges:
  - { from: ok, to: boom }
`)
	id := b.start(t, runs.Trigger{Definition: "flaky"})
	b.waitStatus(t, id, engine.RunFailed)
	path := "/runs/" + id.String()
	wantPage(t, "failed run", b.get(b.owner, path+"?node=boom"), http.StatusOK,
		`id="run-error"`, `id="node-error"`, "broken", `id="retry-node"`, `data-ref="boom" data-state="failed"`)
	if strings.Contains(b.get(b.viewer, path+"?node=boom").Body, `id="retry-node"`) {
		t.Error("the viewer is offered retry")
	}
	refused := b.post(b.owner, path+"/retry", url.Values{"node": {"ok"}})
	wantPage(t, "retry of a succeeded node", refused, http.StatusConflict, `id="action-error"`, "only a failed or cancelled node")
	wantRedirect(t, "retry", b.post(b.owner, path+"/retry", url.Values{"node": {"boom"}}), "?done=retry")
	b.waitRun(t, id, "retried and failed again", func(store.Run) bool {
		nodes, err := b.store.RunNodesByName(context.Background(), b.tenant.ID, id, []string{"boom"})
		return err == nil && len(nodes) == 1 && nodes[0].Generation == 1 && nodes[0].State == engine.NodeFailed
	})
	wantPage(t, "after the retry", b.get(b.owner, path+"?node=boom"), http.StatusOK, `id="attempts"`)
	// The history of one step alone.
	one := b.get(b.viewer, path+"?history_step=boom")
	wantPage(t, "boom's history", one, http.StatusOK, `<option value="boom" selected>`, `<span class="mono">boom</span>`)
	if strings.Contains(one.Body, `<span class="mono">ok</span>`) || strings.Contains(one.Body, `<span class="mono">run</span>`) {
		t.Error("the history of boom shows other steps' transitions")
	}

	// A failed attempt that answered (an http step's unexpected status)
	// shows the response beside the error.
	if _, err := b.store.DB().Exec(context.Background(), `UPDATE run_attempt SET output = '{"status": 503, "body": "upstream down"}'
		WHERE tenant_id = $1 AND run_id = $2 AND node = 'boom'`, b.tenant.ID, id); err != nil {
		t.Fatal(err)
	}
	wantPage(t, "a failed attempt's response", b.get(b.owner, path+"?node=boom"), http.StatusOK, `class="json attempt-response"`, "upstream down")
}

// A scatter's 120 children page by 50 with their counts; "only
// unfinished" leaves none once all succeeded.
func TestInspectorPagesScatterChildren(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: wide
limits: {max_inline_children: 500}
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, max_inline_children: 500, do: {type: transform, with: {expr: item}}}
`)
	items := make([]any, 120)
	for i := range items {
		items[i] = i * 10
	}
	id := b.start(t, runs.Trigger{Definition: "wide", Input: map[string]any{"items": items}})
	b.waitStatus(t, id, engine.RunSucceeded)
	path := "/runs/" + id.String() + "?node=fan"
	first := b.get(b.viewer, path)
	wantPage(t, "first page", first, http.StatusOK, `id="children-total">120`, `data-count="succeeded">succeeded 120`, `data-index="0"`, `data-index="49"`, `id="children-next"`, "after=49")
	if strings.Contains(first.Body, `data-index="50"`) {
		t.Error("the first page shows child 50")
	}
	second := b.get(b.viewer, path+"&after=49")
	wantPage(t, "second page", second, http.StatusOK, `data-index="50"`, `data-index="99"`, "after=99", `id="children-first"`)
	third := b.get(b.viewer, path+"&after=99")
	wantPage(t, "third page", third, http.StatusOK, `data-index="100"`, `data-index="119"`)
	if strings.Contains(third.Body, `id="children-next"`) {
		t.Error("the last page links a next one")
	}
	running := b.get(b.viewer, path+"&state=running")
	if wantPage(t, "running children", running, http.StatusOK, `id="children-none"`); strings.Contains(running.Body, `data-index=`) {
		t.Error("the running filter lists finished children")
	}
	keyed := b.get(b.viewer, path+"&state=succeeded&q=11")
	wantPage(t, "children by key", keyed, http.StatusOK, `data-index="11"`, `data-index="110"`, `data-index="119"`)
	if strings.Contains(keyed.Body, `data-index="12"`) || strings.Contains(keyed.Body, `id="children-next"`) {
		t.Error("the key filter lists children whose key does not contain 11, or pages")
	}
	child := b.get(b.viewer, "/runs/"+id.String()+"?node="+url.QueryEscape("fan[42]"))
	wantPage(t, "one child", child, http.StatusOK, `id="node-h"`, "fan[42]", `id="scatter-link"`, `id="node-input"`, `id="node-output"`, "420", `id="node-history"`, `id="attempts"`)
	wantPage(t, "no such child", b.get(b.viewer, "/runs/"+id.String()+"?node="+url.QueryEscape("fan[999]")), http.StatusNotFound)
	wantPage(t, "bad state", b.get(b.viewer, path+"&state=sleepy"), http.StatusBadRequest)
	wantPage(t, "bad page", b.get(b.viewer, path+"&after=x"), http.StatusBadRequest)
}

// The inspector says what a task waits for while no worker claims it, and
// lists the events a run discarded because its match_expr failed on them.
func TestInspectorShowsWorkerWaitsAndDiscardedEvents(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, "key: lonely\nsteps:\n  - {ref: t, type: task, with: {handler: nobody.serves, queue: far}}\n")
	b.publish(t, "key: paid\nsteps:\n  - {ref: p, type: event, with: {name: paid, match_expr: 'event.order == 1'}}\n")
	lonely := b.start(t, runs.Trigger{Definition: "lonely"})
	b.waitNode(t, lonely, "t", engine.NodeRunning)
	wantPage(t, "a task without a worker", b.get(b.viewer, "/runs/"+lonely.String()+"?node=t"), http.StatusOK,
		`class="waiting-worker"`, `id="node-worker"`, "handler nobody.serves on queue far", "fails as no_worker at")

	paid := b.start(t, runs.Trigger{Definition: "paid"})
	b.waitNode(t, paid, "p", engine.NodeWaiting)
	if _, _, err := b.runs.Events.Publish(context.Background(), store.Event{TenantID: b.tenant.ID, Name: "paid", Data: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	b.waitRun(t, paid, "a discarded event", func(r store.Run) bool { return r.State.DiscardedTotal == 1 })
	wantPage(t, "a discarded event", b.get(b.viewer, "/runs/"+paid.String()), http.StatusOK,
		`id="discard-list"`, "no such key: order", "counted as no match")
}
