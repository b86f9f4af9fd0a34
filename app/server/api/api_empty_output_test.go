package api_test

import (
	"fmt"
	"strings"
	"testing"
)

// A step whose output is an empty object, an empty list, an empty string,
// zero or false reads back as that value in GET /runs/{id}, after the
// run's state went through the database and JSON; a step with no output
// has none, and the run's output, which reads them, sees them as they
// were.
func TestAPIEmptyNodeOutputsSurviveTheRoundTrip(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: empties
steps:
  - {ref: obj, type: transform, with: {expr: '{}'}}
  - {ref: list, type: transform, with: {expr: '[]'}}
  - {ref: str, type: transform, with: {expr: '""'}}
  - {ref: zero, type: transform, with: {expr: '0'}}
  - {ref: no, type: transform, with: {expr: 'false'}}
  - {ref: task, type: task, with: {handler: builtin.echo, input_expr: '{}'}}
  - {ref: after, type: transform, with: {expr: '{"obj": steps.obj.output, "task": steps.task.output}'}}
  - {ref: noop, type: task, with: {handler: builtin.noop}}
edges:
  - {from: obj, to: after}
  - {from: task, to: after}
output_expr: '{"obj": steps.obj.output, "list": steps.list.output, "after": steps.after.output}'
`)
	run, raw := b.ended(t, b.start(t, "empties", "{}"))
	if run["status"] != "succeeded" {
		t.Fatalf("run = %s", raw)
	}
	for ref, want := range map[string]string{"obj": "map[]", "list": "[]", "str": "", "zero": "0", "no": "false", "task": "map[]", "noop": "map[]", "after": "map[obj:map[] task:map[]]"} {
		out, ok := nodeOf(t, run, ref)["output"]
		if !ok || out == nil || fmt.Sprint(out) != want {
			t.Errorf("node %s's output = %#v (present %v), want %s", ref, out, ok, want)
		}
	}
	if !strings.Contains(raw, `"output":{"after":{"obj":{},"task":{}},"list":[],"obj":{}}`) {
		t.Errorf("the run's output: %s", raw)
	}
}

// A signal whose payload is an empty object is the step's output, read
// back as {} once the run parked, woke and ended.
func TestAPIEmptySignalPayloadIsTheOutput(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: empty-signal
steps:
  - {ref: go, type: signal, with: {name: go}}
  - {ref: seen, type: transform, with: {expr: 'steps.go.output'}}
edges:
  - {from: go, to: seen}
`)
	id := b.startRun(t, "empty-signal")
	b.waitWaiting(t, id, "go")
	if code, body := b.call(t, "POST", "/api/v1/runs/"+id+"/signals", b.keyA, `{"request_id": "1", "name": "go", "payload": {}}`); code != 202 {
		t.Fatalf("signal = %d %v", code, body)
	}
	run, raw := b.ended(t, id)
	if run["status"] != "succeeded" {
		t.Fatalf("run = %s", raw)
	}
	for _, ref := range []string{"go", "seen"} {
		if out, ok := nodeOf(t, run, ref)["output"]; !ok || fmt.Sprint(out) != "map[]" {
			t.Errorf("node %s's output = %#v (present %v), want {}", ref, out, ok)
		}
	}
}
