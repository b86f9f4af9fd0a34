package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/testwait"
)

// A sync child that continues as new keeps its parent: the parent waits
// for the latest successor of the chain, resumes with its output and,
// cancelled, cancels it.

const pagerChild = `
key: pager
output_expr: '{"n": steps.go.output.n}'
steps:
  - {ref: go, type: signal, with: {name: go}}
`

const pagerParent = `
key: pager-parent
steps:
  - {ref: sub, type: subworkflow, with: {workflow: pager}}
  - {ref: after, type: transform, with: {expr: '{"got": steps.sub.output.n}'}}
edges:
  - {from: sub, to: after}
`

// waitChildRun polls until the parent's node waits for a child run other
// than not, and returns that child run's id.
func (b *apiBundle) waitChildRun(t *testing.T, parent, node, not string) string {
	t.Helper()
	return testwait.Value(t, 20*time.Second, fmt.Sprintf("node %s of run %s waits for a child run other than %q", node, parent, not), func() (string, bool) {
		w, _ := b.waitWaiting(t, parent, node)["waiting"].(map[string]any)
		id, _ := w["child_run_id"].(string)
		return id, id != "" && id != not
	})
}

// continueChild asks the child to continue as new once it waits, and
// returns its successor's id once the parent waits for it.
func (b *apiBundle) continueChild(t *testing.T, parent, child, request string) string {
	t.Helper()
	b.waitWaiting(t, child, "go")
	code, body := b.call(t, "POST", "/api/v1/runs/"+child+"/continue-as-new", b.keyA, `{"request_id": "`+request+`"}`)
	if code != http.StatusAccepted {
		t.Fatalf("continue %s: %d %v", child, code, body)
	}
	next := b.waitChildRun(t, parent, "sub", child)
	if next != body["successor_run_id"] {
		t.Fatalf("parent waits for %s, the successor is %v", next, body["successor_run_id"])
	}
	return next
}

func (b *apiBundle) signalRun(t *testing.T, id, request, payload string) {
	t.Helper()
	code, body := b.call(t, "POST", "/api/v1/runs/"+id+"/signals", b.keyA, `{"request_id": "`+request+`", "name": "go", "payload": `+payload+`}`)
	if code != http.StatusAccepted {
		t.Fatalf("signal %s: %d %v", id, code, body)
	}
}

func TestContinuedSyncChildResumesItsParent(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, pagerChild)
	b.publishYAML(t, pagerParent)
	parent := b.startRun(t, "pager-parent")
	chain := []string{b.waitChildRun(t, parent, "sub", "")}
	for _, req := range []string{"r1", "r2", "r3"} {
		chain = append(chain, b.continueChild(t, parent, chain[len(chain)-1], req))
	}
	b.signalRun(t, chain[len(chain)-1], "last", `{"n": 3}`)
	run := b.waitStatus(t, parent)
	if run["status"] != "succeeded" || nodeOf(t, run, "after")["output"].(map[string]any)["got"] != 3.0 {
		t.Fatalf("parent %v", run)
	}
	for _, id := range chain[:len(chain)-1] {
		if r := b.waitStatus(t, id); r["status"] != "terminated" || r["reason"] != "continued_as_new" {
			t.Errorf("child %s is %v (%v), want terminated continued_as_new", id, r["status"], r["reason"])
		}
	}
}

func TestCancelledParentCancelsTheLatestSuccessor(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, pagerChild)
	b.publishYAML(t, pagerParent)
	parent := b.startRun(t, "pager-parent")
	child := b.waitChildRun(t, parent, "sub", "")
	child = b.continueChild(t, parent, child, "r1")
	child = b.continueChild(t, parent, child, "r2")
	if code, body := b.call(t, "POST", "/api/v1/runs/"+parent+"/cancel", b.keyA, `{"reason": "enough"}`); code != http.StatusAccepted && code != http.StatusOK {
		t.Fatalf("cancel: %d %v", code, body)
	}
	last := b.waitStatus(t, child)
	if last["status"] != "cancelled" || last["reason"] != "parent cancelled" {
		t.Errorf("latest successor is %v (%v), want cancelled by its parent", last["status"], last["reason"])
	}
}

// The hard transition tier continues a child by itself: its parent
// follows the same way. A signal {done: false} takes the child past the
// tier (the padding steps run, then it parks again); {done: true} skips
// them and it succeeds.
func TestChildContinuedByTheTransitionTierResumesItsParent(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: pager
limits: {transitions_soft: 15, transitions_hard: 15}
output_expr: '{"n": steps.go.output.n}'
steps:
  - {ref: go, type: signal, with: {name: go}}
  - {ref: p1, type: transform, run_if: '!steps.go.output.done', with: {expr: '1'}}
  - {ref: p2, type: transform, with: {expr: '2'}}
  - {ref: p3, type: transform, with: {expr: '3'}}
  - {ref: hold, type: signal, with: {name: never}}
edges:
  - {from: go, to: p1}
  - {from: p1, to: p2}
  - {from: p2, to: p3}
  - {from: p3, to: hold}
`)
	b.publishYAML(t, pagerParent)
	parent := b.startRun(t, "pager-parent")
	child := b.waitChildRun(t, parent, "sub", "")
	for i, req := range []string{"a", "b"} {
		b.waitWaiting(t, child, "go")
		b.signalRun(t, child, req, `{"done": false}`)
		if r := b.waitStatus(t, child); r["status"] != "terminated" || r["reason"] != "continued_as_new" {
			t.Fatalf("round %d: child %s is %v (%v), want continued by the tier", i, child, r["status"], r["reason"])
		}
		child = b.waitChildRun(t, parent, "sub", child)
	}
	b.signalRun(t, child, "c", `{"done": true, "n": 7}`)
	run := b.waitStatus(t, parent)
	if run["status"] != "succeeded" || nodeOf(t, run, "after")["output"].(map[string]any)["got"] != 7.0 {
		t.Fatalf("parent %v", run)
	}
}

// waitChildCancelled polls until the child run is cancelled and returns
// its reason.
func (b *apiBundle) waitChildCancelled(t *testing.T, id string) string {
	t.Helper()
	run := b.waitStatus(t, id)
	if run["status"] != "cancelled" {
		t.Fatalf("child %s ended %v, want cancelled", id, run["status"])
	}
	reason, _ := run["reason"].(string)
	return reason
}

// A child run cancelled by its parent says why: its parent run was
// cancelled, its node was cancelled or lost a race, or its scatter
// completed early.
func TestCancelledChildRunsSayWhy(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: idle
steps:
  - {ref: go, type: signal, with: {name: go}}
`)
	b.publishYAML(t, `
key: napper
steps:
  - {ref: nap, type: task, with: {handler: builtin.sleep, input_expr: '{"ms": int(input.ms)}'}}
`)
	b.publishYAML(t, `
key: one-child
steps:
  - {ref: sub, type: subworkflow, with: {workflow: idle}}
`)
	b.publishYAML(t, `
key: child-race
steps:
  - {ref: quick, type: task, with: {handler: builtin.sleep, input_expr: '{"ms": 200}'}}
  - {ref: sub, type: subworkflow, with: {workflow: idle}}
  - {ref: won, type: transform, with: {expr: '1'}, join: {at_least: 1, cancel_rest: true}}
edges:
  - {from: quick, to: won}
  - {from: sub, to: won}
`)
	b.publishYAML(t, `
key: child-fan
steps:
  - ref: fan
    type: scatter
    with: {items_expr: '[0, 30000]', mode: child_workflow, workflow: napper, input_expr: '{"ms": item}', complete_when: 'done >= 1'}
`)
	cancelled := b.startRun(t, "one-child")
	child := b.waitChildRun(t, cancelled, "sub", "")
	b.waitWaiting(t, child, "go")
	if code, body := b.call(t, "POST", "/api/v1/runs/"+cancelled+"/cancel", b.keyA, `{"reason": "enough"}`); code >= 300 {
		t.Fatalf("cancel: %d %v", code, body)
	}
	if got := b.waitChildCancelled(t, child); got != "parent cancelled" {
		t.Errorf("child of a cancelled run: reason %q", got)
	}

	nodeCancelled := b.startRun(t, "one-child")
	child = b.waitChildRun(t, nodeCancelled, "sub", "")
	b.waitWaiting(t, child, "go")
	if code, body := b.call(t, "POST", "/api/v1/runs/"+nodeCancelled+"/nodes/sub/cancel", b.keyA, `{"reason": "not needed"}`); code >= 300 {
		t.Fatalf("cancel node: %d %v", code, body)
	}
	if got := b.waitChildCancelled(t, child); got != "node sub cancelled by an operator: not needed" {
		t.Errorf("child of a cancelled node: reason %q", got)
	}

	race := b.startRun(t, "child-race")
	child = b.waitChildRun(t, race, "sub", "")
	if got := b.waitChildCancelled(t, child); got != "node sub lost a race (cancel_rest: join won fired on 1 of 2 incoming edges)" {
		t.Errorf("child that lost a race: reason %q", got)
	}

	fan := b.startRun(t, "child-fan")
	if run := b.waitStatus(t, fan); run["status"] != "succeeded" {
		t.Fatalf("fan %v", run)
	}
	slow := engine.ChildRunID(fan + ":fan[1]")
	if got := b.waitChildCancelled(t, slow); got != "scatter fan completed early (complete_when)" {
		t.Errorf("child of a scatter that completed early: reason %q", got)
	}
}
