package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testwait"
)

const parallelV1 = `
key: par
steps:
  - {ref: a, type: transform, with: {expr: '"A"'}}
  - {ref: b, type: signal, with: {name: go}}
edges:
  - {from: a, to: b}
`

// v2 adds c after a, beside b.
const parallelV2 = `
key: par
steps:
  - {ref: a, type: transform, with: {expr: '"A"'}}
  - {ref: b, type: signal, with: {name: go}}
  - {ref: c, type: transform, with: {expr: 'steps.a.output + "C"'}}
edges:
  - {from: a, to: b}
  - {from: a, to: c}
`

// A run that finished a and waits on b moves to v2, which adds c after a:
// c's predecessors have all finished, so the dry run says it would run at
// once, and after the upgrade it runs while b still waits; the run then
// ends on v2 when b's signal comes.
func TestUpgradeStartsAStepWhosePredecessorsFinished(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, parallelV1)
	id := b.startRun(t, "par")
	b.waitWaiting(t, id, "b")
	b.publishYAML(t, parallelV2)
	path := "/api/v1/runs/" + id + "/upgrade"

	dry := b.must(t, "POST", path+"?dry_run=true", `{"version": 2}`, http.StatusOK)
	if c := planNode(dry, "c"); c["outcome"] != "added" || c["would_run"] != "yes" {
		t.Fatalf("dry run %v, want c added, would_run yes", dry)
	}
	done := b.must(t, "POST", path, `{"version": 2}`, http.StatusOK)
	if done["applied"] != true || fmt.Sprint(planNode(done, "c")) != fmt.Sprint(planNode(dry, "c")) {
		t.Fatalf("upgrade %v differs from its dry run %v", done, dry)
	}
	run := testwait.Value(t, 20*time.Second, "c runs after the upgrade", func() (map[string]any, bool) {
		_, run := b.call(t, "GET", "/api/v1/runs/"+id, b.keyA, "")
		return run, runNodes(t, run)["c"]["state"] == "succeeded"
	})
	nodes := runNodes(t, run)
	if run["version"] != float64(2) || nodes["b"]["state"] != "waiting" || fmt.Sprint(nodes["c"]["output"]) != "AC" {
		t.Fatalf("run %v, want it on v2 with c done (AC) and b waiting", run)
	}
	b.must(t, "POST", "/api/v1/runs/"+id+"/signals", `{"name": "go", "request_id": "r1"}`, http.StatusAccepted)
	if end := b.waitStatus(t, id); end["status"] != "succeeded" {
		t.Fatalf("run %v, want succeeded", end)
	}
}

func planNode(res map[string]any, ref string) map[string]any {
	plan, _ := res["plan"].(map[string]any)
	nodes, _ := plan["nodes"].([]any)
	for _, n := range nodes {
		if m := n.(map[string]any); m["ref"] == ref {
			return m
		}
	}
	return nil
}

// A run that continues as new goes on in the version it is on: a run of
// v1 continues on v1 though v2 is published, a run upgraded to v2
// continues on v2, and a run of a version since unpublished continues on
// the newest one published.
func TestContinueAsNewKeepsTheRunsVersion(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, parallelV1)
	b.publishYAML(t, parallelV2)
	successor := func(id string) map[string]any {
		t.Helper()
		out := b.must(t, "POST", "/api/v1/runs/"+id+"/continue-as-new", `{"request_id": "next"}`, http.StatusAccepted)
		next, _ := out["successor_run_id"].(string)
		if next == "" {
			t.Fatalf("continue-as-new: %v", out)
		}
		return testwait.Value(t, 20*time.Second, "the successor of "+id, func() (map[string]any, bool) {
			code, run := b.call(t, "GET", "/api/v1/runs/"+next, b.keyA, "")
			return run, code == http.StatusOK
		})
	}

	code, started := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "par", "version": 1}`)
	if code != http.StatusCreated {
		t.Fatalf("start on v1: %d %v", code, started)
	}
	onV1 := started["id"].(string)
	b.waitWaiting(t, onV1, "b")
	if next := successor(onV1); next["version"] != float64(1) {
		t.Fatalf("the successor of a run on v1 is on version %v, want 1 (v2 is the latest)", next["version"])
	}

	code, started = b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "par", "version": 1}`)
	if code != http.StatusCreated {
		t.Fatalf("start on v1: %d %v", code, started)
	}
	upgraded := started["id"].(string)
	b.waitWaiting(t, upgraded, "b")
	b.must(t, "POST", "/api/v1/runs/"+upgraded+"/upgrade", `{"version": 2}`, http.StatusOK)
	if next := successor(upgraded); next["version"] != float64(2) {
		t.Fatalf("the successor of a run upgraded to v2 is on version %v, want 2", next["version"])
	}

	// A run whose version was unpublished continues on the newest one
	// still published, as a new run would start.
	code, started = b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "par", "version": 1}`)
	if code != http.StatusCreated {
		t.Fatalf("start on v1: %d %v", code, started)
	}
	orphan := started["id"].(string)
	b.waitWaiting(t, orphan, "b")
	if code, body := b.call(t, "DELETE", "/api/v1/definitions/par/versions/1", b.keyA, ""); code >= 300 {
		t.Fatalf("unpublish v1: %d %v", code, body)
	}
	if next := successor(orphan); next["version"] != float64(2) {
		t.Fatalf("the successor of a run on unpublished v1 is on version %v, want 2", next["version"])
	}
}
