package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/testwait"
)

// Control flow beyond plain edges, through the API with real workers:
// partial joins, races, node cancel, early completion, end_run, loops.

// nodeOf returns the run's node by id.
func nodeOf(t *testing.T, run map[string]any, id string) map[string]any {
	t.Helper()
	for _, n := range run["nodes"].([]any) {
		if m := n.(map[string]any); m["node"] == id {
			return m
		}
	}
	t.Fatalf("run has no node %s: %v", id, run["nodes"])
	return nil
}

// waitNodeState polls until the node reaches state.
func (b *apiBundle) waitNodeState(t *testing.T, id, node, state string) {
	t.Helper()
	testwait.Eventually(t, 20*time.Second, fmt.Sprintf("node %s of run %s becomes %s", node, id, state), func() bool {
		_, run := b.call(t, "GET", "/api/v1/runs/"+id, b.keyA, "")
		for _, n := range run["nodes"].([]any) {
			if m := n.(map[string]any); m["node"] == node && m["state"] == state {
				return true
			}
		}
		return false
	})
}

// stepJobStates lists the River states of the step jobs that carry a
// run's node (on its own or in a step batch).
func (b *apiBundle) stepJobStates(t *testing.T, runID, node string) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT state::text FROM river_job j WHERE kind = 'ductor.step'
		AND EXISTS (SELECT 1 FROM jsonb_array_elements(jsonb_build_array(j.args) || coalesce(j.args->'more', '[]'::jsonb)) AS m(a)
			WHERE m.a->>'run_id' = $1 AND m.a->>'node' = $2)`, runID, node)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// waitStepStopped waits for the River job of a node sleeping 30 s to
// finish, well before its 30 s: its worker was told to stop.
func (b *apiBundle) waitStepStopped(t *testing.T, runID, node string, since time.Time) {
	t.Helper()
	stopped := testwait.Until(context.Background(), 15*time.Second-time.Since(since), func() bool {
		st := b.stepJobStates(t, runID, node)
		return len(st) > 0 && !slices.Contains(st, "running") && !slices.Contains(st, "available")
	})
	if stopped {
		return
	}
	t.Fatalf("the step job of %s is still %v: its worker was not stopped", node, b.stepJobStates(t, runID, node))
}

func TestPartialJoinCancelsTheRest(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: two-of-three
steps:
  - {ref: first, type: task, with: {handler: builtin.noop}}
  - {ref: second, type: task, with: {handler: builtin.sleep, input_expr: '{"ms": 100}'}}
  - {ref: third, type: task, with: {handler: builtin.sleep, input_expr: '{"ms": 30000}'}}
  - {ref: quorum, type: transform, with: {expr: '[steps.first.state, steps.second.state]'}, join: {at_least: 2, cancel_rest: true}}
edges:
  - {from: first, to: quorum}
  - {from: second, to: quorum}
  - {from: third, to: quorum}
`)
	id := b.startRun(t, "two-of-three")
	b.waitNodeState(t, id, "third", "running")
	started := time.Now()
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" || time.Since(started) > 10*time.Second {
		t.Fatalf("run %v after %s", run, time.Since(started))
	}
	third := nodeOf(t, run, "third")
	if third["state"] != "cancelled" || third["cancel_reason"] != "cancel_rest: join quorum fired on 2 of 3 incoming edges" {
		t.Errorf("third = %v", third)
	}
	if out := run["output"].(map[string]any)["quorum"].([]any); out[0] != "succeeded" || out[1] != "succeeded" {
		t.Errorf("quorum output %v", out)
	}
	b.waitStepStopped(t, id, "third", started)
}

func TestRaceOfTwoEventsWithdrawsTheLoser(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: race
steps:
  - {ref: paid, type: event, with: {name: order.paid}}
  - {ref: dropped, type: event, with: {name: order.cancelled, timeout: 1h}}
  - {ref: outcome, type: transform, with: {expr: 'steps.paid.state == "succeeded" ? "ship" : "refund"'}, join: {at_least: 1, cancel_rest: true}}
  - {ref: hold, type: signal, with: {name: finish}}
edges:
  - {from: paid, to: outcome}
  - {from: dropped, to: outcome}
  - {from: outcome, to: hold}
`)
	id := b.startRun(t, "race")
	b.waitWaiting(t, id, "paid")
	b.waitWaiting(t, id, "dropped")
	if code, body := b.call(t, "POST", "/api/v1/events", b.keyA, `{"name": "order.paid", "data": {"order": 1}}`); code != http.StatusAccepted {
		t.Fatalf("event: %d %v", code, body)
	}
	b.waitWaiting(t, id, "hold")
	runs, err := b.store.EventWaitingRuns(context.Background(), b.tenantA.ID, "order.cancelled")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(runs, uuid.MustParse(id)) {
		t.Error("the losing event wait was not withdrawn")
	}
	b.call(t, "POST", "/api/v1/events", b.keyA, `{"name": "order.cancelled", "data": {"order": 1}}`)
	b.call(t, "POST", "/api/v1/runs/"+id+"/signals", b.keyA, `{"request_id": "f", "name": "finish"}`)
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" || nodeOf(t, run, "outcome")["output"] != "ship" {
		t.Fatalf("run %v", run)
	}
	if d := nodeOf(t, run, "dropped"); d["state"] != "cancelled" || d["output"] != nil {
		t.Errorf("dropped = %v", d)
	}
}

func TestNodeCancelContinuesDownTheErrorEdge(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: rescue
steps:
  - {ref: slow, type: task, with: {handler: builtin.sleep, input_expr: '{"ms": 30000}'}, on_error: continue}
  - {ref: next, type: transform, with: {expr: '"not reached"'}}
  - {ref: fallback, type: transform, with: {expr: 'steps.slow.error'}}
edges:
  - {from: slow, to: next}
  - {from: slow, to: fallback, on: error}
`)
	id := b.startRun(t, "rescue")
	base := "/api/v1/runs/" + id + "/nodes/"
	b.waitNodeState(t, id, "slow", "running")
	for _, tc := range []struct {
		node, body string
		status     int
	}{
		{"next", "", http.StatusConflict},
		{"ghost", "", http.StatusNotFound},
		{"slow", `{"reason": "` + string(make([]byte, 1001)) + `"}`, http.StatusBadRequest},
		{"slow", `{"reason": "taking too long"}`, http.StatusAccepted},
	} {
		if code, body := b.call(t, "POST", base+tc.node+"/cancel", b.keyA, tc.body); code != tc.status {
			t.Errorf("cancel %s: %d %v, want %d", tc.node, code, body, tc.status)
		}
	}
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" {
		t.Fatalf("run %v", run)
	}
	fallback := nodeOf(t, run, "fallback")["output"].(map[string]any)
	if fallback["code"] != "cancelled" || fallback["message"] != "cancelled by an operator: taking too long" {
		t.Errorf("fallback saw %v", fallback)
	}
	if next := nodeOf(t, run, "next"); next["state"] != "skipped" {
		t.Errorf("next = %v", next)
	}
	if code, _ := b.call(t, "POST", base+"slow/cancel", b.keyA, ""); code != http.StatusConflict {
		t.Errorf("cancel in an ended run: %d, want 409", code)
	}
}

func TestScatterCompletesOnceTenSucceeded(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: first-ten
steps:
  - ref: fan
    type: scatter
    with:
      items_expr: 'lists.range(60)'
      complete_when: 'succeeded >= 10'
      do: {type: task, with: {handler: builtin.sleep, input_expr: '{"ms": item < 10 ? 20 : 30000}'}}
  - {ref: collect, type: gather, with: {scatter_ref: fan}}
edges:
  - {from: fan, to: collect}
`)
	id := b.startRun(t, "first-ten")
	started := time.Now()
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" || time.Since(started) > 15*time.Second {
		t.Fatalf("run %v after %s", run, time.Since(started))
	}
	fan := nodeOf(t, run, "fan")
	sc := fan["scatter"].(map[string]any)
	if sc["completed_early"] != true || sc["succeeded"] != 10.0 || sc["cancelled"] != 50.0 || len(fan["output"].([]any)) != 10 {
		t.Errorf("fan = %v, output of %d", sc, len(fan["output"].([]any)))
	}
	gathered := nodeOf(t, run, "collect")["output"].(map[string]any)
	if len(gathered["result"].([]any)) != 10 || len(gathered["error"].(map[string]any)) != 0 {
		t.Errorf("gather = %v", gathered)
	}
	_, page := b.call(t, "GET", "/api/v1/runs/"+id+"/nodes/fan/children?limit=5&after=9", b.keyA, "")
	if counts := page["counts"].(map[string]any); counts["cancelled"] != 50.0 || counts["succeeded"] != 10.0 {
		t.Errorf("children counts %v", counts)
	}
}

func TestEndRunStopsASlowBranch(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: stop-early
output_expr: '{"answer": steps.answer.output}'
steps:
  - {ref: slow, type: task, with: {handler: builtin.sleep, input_expr: '{"ms": 30000}'}}
  - {ref: quick, type: task, with: {handler: builtin.echo, input_expr: '{"n": 42}'}}
  - {ref: answer, type: transform, with: {expr: 'steps.quick.output.n'}, end_run: succeeded}
  - {ref: after_slow, type: transform, with: {expr: '1'}}
edges:
  - {from: quick, to: answer}
  - {from: slow, to: after_slow}
`)
	id := b.startRun(t, "stop-early")
	started := time.Now()
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" || time.Since(started) > 10*time.Second {
		t.Fatalf("run %v after %s", run, time.Since(started))
	}
	if run["output"].(map[string]any)["answer"] != 42.0 {
		t.Errorf("output %v", run["output"])
	}
	slow, after := nodeOf(t, run, "slow"), nodeOf(t, run, "after_slow")
	if slow["state"] != "cancelled" || slow["cancel_reason"] != "step answer ended the run (end_run: succeeded)" || after["state"] != "skipped" {
		t.Errorf("slow = %v, after_slow = %v", slow, after)
	}
	b.waitStepStopped(t, id, "slow", started)
}

func TestLoopOfFiveIterations(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: increment
steps:
  - {ref: add, type: transform, with: {expr: '{"n": int(input.n) + 1}'}}
output_expr: 'steps.add.output'
`)
	b.publishYAML(t, `
key: count-to-five
steps:
  - ref: count
    type: subworkflow
    with:
      workflow: increment
      input_expr: '{"n": 0}'
      repeat: {until_expr: 'output.n >= 5', input_expr: 'output', max_iterations: 20}
  - {ref: report, type: transform, with: {expr: '{"n": steps.count.output.n}'}}
edges:
  - {from: count, to: report}
`)
	id := b.startRun(t, "count-to-five")
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" || nodeOf(t, run, "report")["output"].(map[string]any)["n"] != 5.0 {
		t.Fatalf("run %v", run)
	}
	if kids := run["children"].(map[string]any); kids["succeeded"] != 5.0 || len(kids) != 1 {
		t.Errorf("child runs %v, want 5 succeeded", kids)
	}
	_, h := b.call(t, "GET", "/api/v1/runs/"+id+"/history?limit=100", b.keyA, "")
	iterations := 0
	for _, tr := range h["transitions"].([]any) {
		if m := tr.(map[string]any); m["node"] == "count" && m["from"] == "waiting" && m["to"] == "waiting" {
			iterations++
		}
	}
	if iterations != 4 {
		t.Errorf("%d iteration transitions, want 4 (iterations 2 to 5)", iterations)
	}
}

// In child_workflow mode the children an early completion leaves
// unfinished are child runs, and they are cancelled.
func TestChildWorkflowScatterCompletesEarly(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: sleeper
steps:
  - {ref: nap, type: task, with: {handler: builtin.sleep, input_expr: '{"ms": int(input.ms)}'}}
`)
	b.publishYAML(t, `
key: first-back
steps:
  - ref: fan
    type: scatter
    with: {items_expr: '[0, 30000, 30000]', mode: child_workflow, workflow: sleeper, input_expr: '{"ms": item}', complete_when: 'done >= 1'}
`)
	id := b.startRun(t, "first-back")
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" || len(nodeOf(t, run, "fan")["output"].([]any)) != 1 {
		t.Fatalf("run %v", run)
	}
	var kids map[string]any
	if !testwait.Until(context.Background(), 15*time.Second, func() bool {
		_, run = b.call(t, "GET", "/api/v1/runs/"+id, b.keyA, "")
		kids = run["children"].(map[string]any)
		return kids["succeeded"] == 1.0 && kids["cancelled"] == 2.0
	}) {
		t.Fatalf("child runs %v, want 1 succeeded and 2 cancelled", kids)
	}
}
