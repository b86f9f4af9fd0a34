package api_test

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// Details of children and waits through the API: the children page's
// cursor, a scatter that completed early keeps its start, and waiting
// records name the child run and an event_set's events.

func TestScatterChildrenPageCursorIsSixtyFourBits(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: fan-of-three
steps:
  - {ref: fan, type: scatter, with: {items_expr: '[1, 2, 3]', do: {type: transform, with: {expr: 'item'}}}}
`)
	id := b.startRun(t, "fan-of-three")
	if run := b.waitStatus(t, id); run["status"] != "succeeded" {
		t.Fatalf("run %v", run)
	}
	page := func(query string) (int, map[string]any) {
		return b.call(t, "GET", "/api/v1/runs/"+id+"/nodes/fan/children?"+query, b.keyA, "")
	}
	if code, body := page("after=0&limit=5"); code != http.StatusOK || len(body["children"].([]any)) != 2 {
		t.Fatalf("after=0: %d %v", code, body)
	}
	// 2^32 once wrapped to 0 and answered children 1 and 2 again.
	for _, after := range []string{"4294967296", "4294967295", "9223372036854775807"} {
		if code, body := page("after=" + after); code != http.StatusOK || len(body["children"].([]any)) != 0 {
			t.Errorf("after=%s: %d %v, want an empty page", after, code, body)
		}
	}
	for _, q := range []string{"after=-2", "after=9223372036854775808", "limit=0", "limit=501", "limit=4294967297"} {
		if code, body := page(q); code != http.StatusUnprocessableEntity || body["error"].(map[string]any)["code"] != "unprocessable" {
			t.Errorf("%s: %d %v, want 422", q, code, body)
		}
	}
	if code, _ := page("after=one"); code != http.StatusBadRequest {
		t.Errorf("after=one: %d, want 400", code)
	}
}

func TestScatterCompletedEarlyKeepsItsStart(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: first-of-two
steps:
  - ref: fan
    type: scatter
    with:
      items_expr: '[200, 30000]'
      complete_when: 'succeeded >= 1'
      do: {type: task, with: {handler: builtin.sleep, input_expr: '{"ms": item}'}}
`)
	id := b.startRun(t, "first-of-two")
	run := b.waitStatus(t, id)
	fan := nodeOf(t, run, "fan")
	if run["status"] != "succeeded" || fan["scatter"].(map[string]any)["completed_early"] != true {
		t.Fatalf("run %v", run)
	}
	started, _ := time.Parse(time.RFC3339Nano, fan["started_at"].(string))
	finished, _ := time.Parse(time.RFC3339Nano, fan["finished_at"].(string))
	if finished.Sub(started) < 200*time.Millisecond {
		t.Errorf("fan started_at %s, finished_at %s: it ran at least as long as its first child (200 ms)", started, finished)
	}
}

func TestWaitingRecordsNameTheChildRunAndTheEvents(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, pagerChild)
	b.publishYAML(t, pagerParent)
	b.publishYAML(t, `
key: three-acks
steps:
  - ref: acks
    type: event_set
    with:
      events:
        - {name: billing.ack}
        - {name: shipping.ack}
        - {name: billing.ack, key: second}
`)
	parent := b.startRun(t, "pager-parent")
	w := b.waitWaiting(t, parent, "sub")["waiting"].(map[string]any)
	child, _ := w["child_run_id"].(string)
	if w["type"] != "child" || child == "" {
		t.Fatalf("child wait %v", w)
	}
	if code, run := b.call(t, "GET", "/api/v1/runs/"+child, b.keyA, ""); code != http.StatusOK || run["parent_run_id"] != parent {
		t.Errorf("child_run_id %s: %d %v", child, code, run)
	}
	acks := b.startRun(t, "three-acks")
	w = b.waitWaiting(t, acks, "acks")["waiting"].(map[string]any)
	names, _ := w["events"].([]any)
	if w["type"] != "event_set" || !slices.Equal(names, []any{"billing.ack", "shipping.ack"}) {
		t.Errorf("event_set wait %v, want events [billing.ack shipping.ack]", w)
	}
}
