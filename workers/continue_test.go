package workers_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

const blockingDoc = `
key: long-lived
steps:
  - {ref: hang, type: task, with: {handler: test.block}}
`

func blockHandler() map[string]steps.Handler {
	return map[string]steps.Handler{"test.block": blockUntilCancelled}
}

func TestContinueAsNewCarriesTheRun(t *testing.T) {
	t.Parallel()
	b := setup(t, blockHandler())
	b.publishYAML(t, blockingDoc)
	run, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{
		TenantID: b.tenant.ID, Definition: "long-lived", Input: map[string]any{"n": 1}, Subject: "acct-9",
		Context: map[string]any{"region": "eu"}, SearchAttributes: map[string]any{"customer": "c1"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.poll(t, func() bool { r, _ := b.store.RunGet(b.ctx, b.tenant.ID, run.ID); return r.Status == engine.RunRunning })

	succ, err := b.coord.Runs.ContinueAsNew(b.ctx, b.tenant.ID, run.ID, "can-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := b.coord.Runs.ContinueAsNew(b.ctx, b.tenant.ID, run.ID, "can-1", nil)
	if succ != again {
		t.Fatalf("the same request gave successors %s and %s", succ, again)
	}
	old := b.waitTerminal(t, run.ID)
	if old.Status != engine.RunTerminated || old.Reason != string(engine.ReasonContinuedAsNew) ||
		old.ContinuedToRunID == nil || old.ContinuedToRunID.String() != succ {
		t.Fatalf("old run: %s %s → %v, want terminated continued_as_new → %s", old.Status, old.Reason, old.ContinuedToRunID, succ)
	}
	next, err := b.store.RunGet(b.ctx, b.tenant.ID, uuid.MustParse(succ))
	if err != nil {
		t.Fatal(err)
	}
	if next.ContinuedFromRunID == nil || *next.ContinuedFromRunID != run.ID {
		t.Errorf("successor continued_from = %v", next.ContinuedFromRunID)
	}
	for name, pair := range map[string][2]any{
		"input":             {old.State.Input, next.State.Input},
		"subject":           {old.Subject, next.Subject},
		"search_attributes": {old.SearchAttributes, next.SearchAttributes},
		"context":           {old.State.Meta["context"], next.State.Meta["context"]},
		"root":              {old.RootRunID, next.RootRunID},
		"depth":             {old.Depth, next.Depth},
	} {
		a, _ := json.Marshal(pair[0])
		z, _ := json.Marshal(pair[1])
		if !bytes.Equal(a, z) {
			t.Errorf("%s not carried: %s vs %s", name, a, z)
		}
	}

	// With new input, from the successor on.
	third, err := b.coord.Runs.ContinueAsNew(b.ctx, b.tenant.ID, next.ID, "can-2", map[string]any{"n": 2})
	if err != nil {
		t.Fatal(err)
	}
	b.waitTerminal(t, next.ID)
	r3, _ := b.store.RunGet(b.ctx, b.tenant.ID, uuid.MustParse(third))
	if in, _ := json.Marshal(r3.State.Input); string(in) != `{"n":2}` {
		t.Errorf("new input not used: %s", in)
	}
}

func TestContinueAsNewFromTwoReplicasMakesOneSuccessor(t *testing.T) {
	t.Parallel()
	b := setup(t, blockHandler())
	second, err := pgxpool.New(b.ctx, testdb.SearchPathURL(t, b.pool))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Close)
	other := startCoordinator(t, second, blockHandler())
	b.publishYAML(t, blockingDoc)
	id := b.start(t, "long-lived", nil)
	var wg sync.WaitGroup
	got := make([]string, 10)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := []*workers.Runtime{b.coord, other}[i%2]
			got[i], _ = c.Runs.ContinueAsNew(b.ctx, b.tenant.ID, id, "same-request", nil)
		}()
	}
	wg.Wait()
	b.waitTerminal(t, id)
	kids, _ := b.pool.Query(b.ctx, "SELECT id FROM run WHERE continued_from_run_id = $1", id)
	var successors []uuid.UUID
	for kids.Next() {
		var s uuid.UUID
		_ = kids.Scan(&s)
		successors = append(successors, s)
	}
	if len(successors) != 1 {
		t.Fatalf("%d successors, want 1", len(successors))
	}
	for _, g := range got {
		if g != successors[0].String() {
			t.Fatalf("an answer named %s, the successor is %s", g, successors[0])
		}
	}
}

func TestTransitionTiers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: busy
limits: {transitions_soft: 5, transitions_hard: 12, transitions_terminate: 1000}
steps:
  - {ref: a, type: task, with: {handler: builtin.noop}}
  - {ref: b, type: task, with: {handler: builtin.noop}}
  - {ref: c, type: task, with: {handler: builtin.noop}}
  - {ref: d, type: task, with: {handler: builtin.noop}}
edges:
  - {from: a, to: b}
  - {from: b, to: c}
  - {from: c, to: d}
`)
	run := b.waitTerminal(t, b.start(t, "busy", nil))
	if run.Status != engine.RunTerminated || run.Reason != string(engine.ReasonContinuedAsNew) || run.ContinuedToRunID == nil {
		t.Fatalf("hard tier: %s %s, want terminated continued_as_new with a successor", run.Status, run.Reason)
	}
	if !run.State.SoftWarned {
		t.Error("soft tier did not warn")
	}
	history, _ := b.store.RunHistory(b.ctx, b.tenant.ID, run.ID, 0, 100)
	warned := false
	for _, h := range history {
		warned = warned || strings.HasPrefix(h.Detail, "warning transitions_soft")
	}
	if !warned {
		t.Error("the soft tier left no warning in the run's history")
	}
	// Unpublished: the hard tier cannot continue, the run is force-stopped.
	b.waitTerminal(t, *run.ContinuedToRunID)
	if _, err := b.pool.Exec(b.ctx, "UPDATE definition_version SET unpublished_at = now() WHERE key = 'busy'"); err != nil {
		t.Fatal(err)
	}
	pinned, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: b.tenant.ID, Definition: "busy", Version: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stopped := b.waitTerminal(t, pinned.ID)
	if stopped.Status != engine.RunTerminated || stopped.Reason != string(engine.ReasonTransitionLimit) || stopped.ContinuedToRunID != nil {
		t.Fatalf("unpublished: %s %s → %v, want terminated transition_limit with no successor", stopped.Status, stopped.Reason, stopped.ContinuedToRunID)
	}
}

func TestSignalsFollowContinueAsNew(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: listener
steps:
  - {ref: first, type: signal, with: {name: go}}
  - {ref: second, type: signal, with: {name: later}}
edges:
  - {from: first, to: second}
`)
	id := b.start(t, "listener", nil)
	b.poll(t, func() bool { r, _ := b.store.RunGet(b.ctx, b.tenant.ID, id); return r.Status == engine.RunWaiting })
	// "later" has no waiting step yet: it is buffered on this run.
	if _, err := b.coord.Runs.Signal(b.ctx, b.tenant.ID, id, engine.Signal{RequestID: "s-later", Name: "later"}); err != nil {
		t.Fatal(err)
	}
	succ, err := b.coord.Runs.ContinueAsNew(b.ctx, b.tenant.ID, id, "can", nil)
	if err != nil {
		t.Fatal(err)
	}
	b.waitTerminal(t, id)
	next := uuid.MustParse(succ)
	// The same request id sent again after the switch is still a duplicate.
	if _, err := b.coord.Runs.Signal(b.ctx, b.tenant.ID, next, engine.Signal{RequestID: "s-later", Name: "later"}); err == nil {
		t.Fatal("a signal retried after ContinueAsNew was accepted again")
	}
	if _, err := b.coord.Runs.Signal(b.ctx, b.tenant.ID, next, engine.Signal{RequestID: "s-go", Name: "go"}); err != nil {
		t.Fatal(err)
	}
	// The buffered "later" moved with the run and completes it.
	if run := b.waitTerminal(t, next); run.Status != engine.RunSucceeded {
		t.Fatalf("successor %s", run.Status)
	}
}

// A sync child whose hard tier cannot continue it (its definition was
// unpublished) is force-stopped, and its parent hears of it: the parent's
// step fails rather than waiting for a successor that never comes.
func TestSyncChildThatCannotContinueFailsItsParent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: stuck
limits: {transitions_soft: 15, transitions_hard: 15, transitions_terminate: 1000}
steps:
  - {ref: go, type: signal, with: {name: go}}
  - {ref: p1, type: transform, with: {expr: '1'}}
  - {ref: p2, type: transform, with: {expr: '2'}}
  - {ref: p3, type: transform, with: {expr: '3'}}
  - {ref: hold, type: signal, with: {name: never}}
edges:
  - {from: go, to: p1}
  - {from: p1, to: p2}
  - {from: p2, to: p3}
  - {from: p3, to: hold}
`)
	b.publishYAML(t, `
key: waits-for-stuck
steps:
  - {ref: sub, type: subworkflow, with: {workflow: stuck}}
`)
	parent := b.start(t, "waits-for-stuck", nil)
	var kids []store.Run
	b.poll(t, func() bool { kids = b.children(t, parent); return len(kids) == 1 })
	b.waitNode(t, kids[0].ID, "go", engine.NodeWaiting)
	if _, err := b.pool.Exec(b.ctx, "UPDATE definition_version SET unpublished_at = now() WHERE key = 'stuck'"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.coord.Runs.Signal(b.ctx, b.tenant.ID, kids[0].ID, engine.Signal{RequestID: "go", Name: "go"}); err != nil {
		t.Fatal(err)
	}
	if kid := b.waitTerminal(t, kids[0].ID); kid.Reason != string(engine.ReasonTransitionLimit) {
		t.Fatalf("child %s %s, want terminated transition_limit", kid.Status, kid.Reason)
	}
	run := b.waitTerminal(t, parent)
	if run.Status != engine.RunFailed || run.State.Error == nil || !strings.Contains(run.State.Error.Message, "transition_limit") {
		t.Fatalf("parent %s %+v, want failed by its child's transition_limit", run.Status, run.State.Error)
	}
}
