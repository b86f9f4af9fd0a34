package workers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
)

const childDoc = `
key: child
steps:
  - ref: double
    type: transform
    with: {expr: '{"v": input.v * 2.0}'}
`

func (b testBundle) children(t *testing.T, parent uuid.UUID) []store.Run {
	t.Helper()
	runs, err := b.store.RunList(b.ctx, b.tenant.ID, store.RunFilter{ParentID: &parent, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestSubworkflowSyncAndAsync(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, childDoc)
	b.publishYAML(t, `
key: parent
steps:
  - ref: sync_child
    type: subworkflow
    with: {workflow: child, input_expr: '{"v": 21.0}'}
  - ref: async_child
    type: subworkflow
    with: {workflow: child, mode: async, input_expr: '{"v": 1.0}'}
`)
	id := b.start(t, "parent", nil)
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunSucceeded {
		t.Fatalf("parent %s: %+v", run.Status, run.State.Error)
	}
	out, _ := json.Marshal(run.State.Output)
	if !strings.Contains(string(out), `"sync_child":{"double":{"v":42}}`) {
		t.Errorf("parent output %s lacks the sync child's output", out)
	}
	kids := b.children(t, id)
	if len(kids) != 2 {
		t.Fatalf("%d children, want 2", len(kids))
	}
	for _, k := range kids {
		if k.Depth != 1 || k.RootRunID != id || k.ParentRunID == nil || *k.ParentRunID != id {
			t.Errorf("child lineage: depth %d root %s parent %v", k.Depth, k.RootRunID, k.ParentRunID)
		}
		if !strings.Contains(string(out), k.ID.String()) && k.State.Parent == nil {
			t.Errorf("async child %s: its id is not in the parent's output %s", k.ID, out)
		}
		b.waitTerminal(t, k.ID)
	}
}

func TestScatterChildWorkflowMode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, childDoc)
	b.publishYAML(t, `
key: fan-children
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, mode: child_workflow, workflow: child, input_expr: '{"v": double(item)}'}
  - ref: collect
    type: gather
    with: {scatter_ref: fan}
edges:
  - {from: fan, to: collect}
`)
	id := b.start(t, "fan-children", map[string]any{"items": []any{1, 2, 3}})
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunSucceeded {
		t.Fatalf("parent %s: %+v", run.Status, run.State.Error)
	}
	if kids := b.children(t, id); len(kids) != 3 {
		t.Fatalf("%d child runs, want 3", len(kids))
	}
	out, _ := json.Marshal(run.State.Output)
	if !strings.Contains(string(out), `{"double":{"v":2}}`) || !strings.Contains(string(out), `{"double":{"v":6}}`) {
		t.Errorf("gathered output %s", out)
	}
}

func TestSubworkflowCheckpointAndTimeouts(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	b := setup(t, map[string]steps.Handler{"test.block": func(ctx context.Context, _ steps.Call) (any, error) {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil, ctx.Err()
	}})
	b.publishYAML(t, `
key: slow-child
steps:
  - ref: mark
    type: checkpoint
    with: {name: ready}
  - ref: hang
    type: task
    with: {handler: test.block}
    timeout: 1h
edges:
  - {from: mark, to: hang}
`)
	for policy, want := range map[string]engine.RunStatus{
		"checkpoint": engine.RunSucceeded, "fail_parent": engine.RunFailed,
		"detach": engine.RunSucceeded, "continue_with_error": engine.RunSucceeded,
	} {
		with := `{workflow: slow-child, timeout: 300ms, on_timeout: ` + policy + `}`
		if policy == "checkpoint" {
			with = `{workflow: slow-child, wait_for: "checkpoint:ready"}`
		}
		b.publishYAML(t, `
key: p-`+strings.ReplaceAll(policy, "_", "-")+`
steps:
  - ref: call
    type: subworkflow
    with: `+with+`
    on_error: continue
`)
		id := b.start(t, "p-"+strings.ReplaceAll(policy, "_", "-"), nil)
		run := b.waitTerminal(t, id)
		if policy == "fail_parent" {
			want = engine.RunSucceeded // on_error: continue lets the parent go on past the failed node
		}
		if run.Status != want {
			t.Errorf("%s: parent %s, want %s (%+v)", policy, run.Status, want, run.State.Error)
		}
		kids := b.children(t, id)
		if len(kids) != 1 || kids[0].Status.Terminal() {
			t.Errorf("%s: the child must keep running after the parent moved on: %d children", policy, len(kids))
		}
	}
}

func TestCancelParentCancelsSyncChildren(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]steps.Handler{"test.block": func(ctx context.Context, _ steps.Call) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	b.publishYAML(t, `
key: blocker
steps:
  - {ref: hang, type: task, with: {handler: test.block}}
`)
	b.publishYAML(t, `
key: holder
steps:
  - {ref: sync_kid, type: subworkflow, with: {workflow: blocker}}
  - {ref: async_kid, type: subworkflow, with: {workflow: blocker, mode: async}}
`)
	id := b.start(t, "holder", nil)
	var kids []store.Run
	b.poll(t, func() bool { kids = b.children(t, id); return len(kids) == 2 })
	if err := b.coord.Runs.Control(b.ctx, b.tenant.ID, id, engine.Cancel{RequestID: "stop"}); err != nil {
		t.Fatal(err)
	}
	if run := b.waitTerminal(t, id); run.Status != engine.RunCancelled {
		t.Fatalf("parent %s", run.Status)
	}
	for _, k := range kids {
		if k.State.Parent != nil { // the sync child
			if run := b.waitTerminal(t, k.ID); run.Status != engine.RunCancelled {
				t.Errorf("sync child %s, want cancelled", run.Status)
			}
			continue
		}
		if run, _ := b.store.RunGet(b.ctx, b.tenant.ID, k.ID); run.Status.Terminal() {
			t.Errorf("async child %s: cancelling the parent must not touch it", run.Status)
		}
	}
}

func TestNestingDepthCap(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: recurse
steps:
  - ref: again
    type: subworkflow
    with: {workflow: recurse}
`)
	id := b.start(t, "recurse", nil)
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunFailed {
		t.Fatalf("root of a 33-deep recursion: %s, want failed", run.Status)
	}
	deepest := b.deepest(t)
	if deepest != 32 {
		t.Fatalf("deepest run at depth %d, want 32", deepest)
	}
}

func (b testBundle) deepest(t *testing.T) int {
	t.Helper()
	var d int
	if err := b.pool.QueryRow(b.ctx, "SELECT max(depth) FROM run").Scan(&d); err != nil {
		t.Fatal(err)
	}
	return d
}
