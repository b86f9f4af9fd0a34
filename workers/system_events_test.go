package workers_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// failingDoc is a definition of key whose one step always fails.
func failingDoc(key string) string {
	return "key: " + key + `
steps:
  - {ref: boom, type: task, with: {handler: builtin.fail, input_expr: '{"message": "planned"}'}, retry: {max_attempts: 1}}
`
}

// systemEvents counts the stored events of name about run.
func (b testBundle) systemEvents(t *testing.T, name string, run uuid.UUID) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM event WHERE tenant_id = $1 AND name = $2 AND data->>'run_id' = $3`,
		b.tenant.ID, name, run.String()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// outboxEmpty waits until every stored system event has been dispatched.
func (b testBundle) outboxEmpty(t *testing.T) {
	t.Helper()
	if !testwait.Until(b.ctx, 30*time.Second, func() bool {
		var n int
		if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM system_event_outbox WHERE tenant_id = $1`, b.tenant.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	}) {
		t.Fatal("system events still undispatched after 30s")
	}
}

func (b testBundle) runsOfDefinition(t *testing.T, key string) []store.Run {
	t.Helper()
	rs, err := b.store.RunList(b.ctx, b.tenant.ID, store.RunFilter{Definition: key, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// A failing run stores exactly one ductor.run.failed event, with its
// documented data, and one ductor.step.failed for its step; the event's
// trigger starts one notifier run with it.
func TestRunFailedEventStartsANotifier(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, failingDoc("flaky"))
	testdb.Definition(t, b.store, b.tenant.ID, `key: notifier
steps:
  - {ref: tell, type: task, with: {handler: builtin.echo}}
triggers:
  - event: ductor.run.failed
    filter_expr: 'event.definition == "flaky"'
    input_expr: '{"run": event.run_id, "code": event.error.code, "node": event.error.node}'
`)
	id := b.start(t, "flaky", nil)
	if r := b.waitTerminal(t, id); r.Status != engine.RunFailed {
		t.Fatalf("flaky ended %s", r.Status)
	}
	b.outboxEmpty(t)
	var notified store.Run
	if !testwait.Until(b.ctx, 30*time.Second, func() bool {
		rs := b.runsOfDefinition(t, "notifier")
		if len(rs) > 1 {
			t.Fatalf("%d notifier runs", len(rs))
		}
		if len(rs) == 1 {
			notified = rs[0]
		}
		return len(rs) == 1
	}) {
		t.Fatal("no notifier run")
	}
	in, _ := notified.State.Input.(map[string]any)
	if in["run"] != id.String() || in["node"] != "boom" || in["code"] == "" {
		t.Errorf("notifier input = %v", in)
	}
	if n := b.systemEvents(t, "ductor.run.failed", id); n != 1 {
		t.Errorf("%d ductor.run.failed events, want 1", n)
	}
	if n := b.systemEvents(t, "ductor.step.failed", id); n != 1 {
		t.Errorf("%d ductor.step.failed events, want 1", n)
	}
	if r := b.waitTerminal(t, notified.ID); r.Status != engine.RunSucceeded {
		t.Errorf("notifier ended %s", r.Status)
	}
	if n := b.systemEvents(t, "ductor.run.succeeded", notified.ID); n != 1 {
		t.Errorf("%d ductor.run.succeeded events about the notifier, want 1", n)
	}
}

// A trigger on ductor.run.failed whose run always fails stops after one
// generation: the original failure starts a run, whose failure starts a
// second, whose failure emits no event.
func TestSystemEventLoopStopsAfterOneGeneration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, failingDoc("seed"))
	testdb.Definition(t, b.store, b.tenant.ID, failingDoc("looper")+`triggers:
  - {event: ductor.run.failed}
`)
	seed := b.start(t, "seed", nil)
	b.waitTerminal(t, seed)
	var loopers []store.Run
	if !testwait.Until(b.ctx, 30*time.Second, func() bool {
		loopers = b.runsOfDefinition(t, "looper")
		return len(loopers) >= 2
	}) {
		t.Fatalf("%d looper runs, want 2", len(loopers))
	}
	for _, r := range loopers {
		b.waitTerminal(t, r.ID)
	}
	b.outboxEmpty(t)
	if loopers = b.runsOfDefinition(t, "looper"); len(loopers) != 2 {
		t.Fatalf("%d looper runs, want 2", len(loopers))
	}
	events := 0
	for _, r := range loopers {
		events += b.systemEvents(t, "ductor.run.failed", r.ID)
	}
	if events != 1 {
		t.Errorf("%d ductor.run.failed events about looper runs, want 1 (the second generation emits none)", events)
	}
}

// An approval step's approval emits ductor.approval.requested when it
// opens and ductor.approval.decided once, when the decision that decides
// it is made.
func TestApprovalEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id, a := b.openApproval(t, 2, "")
	if n := b.systemEvents(t, "ductor.approval.requested", id); n != 1 {
		t.Errorf("%d ductor.approval.requested events, want 1", n)
	}
	if err := b.decide(a.ID, "ann@example.com", true); err != nil {
		t.Fatal(err)
	}
	if n := b.systemEvents(t, "ductor.approval.decided", id); n != 0 {
		t.Errorf("the first of two approvals emitted ductor.approval.decided")
	}
	if err := b.decide(a.ID, "bob@example.com", true); err != nil {
		t.Fatal(err)
	}
	var decision string
	if err := b.pool.QueryRow(b.ctx, `SELECT data->>'decision' FROM event WHERE tenant_id = $1 AND name = 'ductor.approval.decided' AND data->>'approval_id' = $2`,
		b.tenant.ID, a.ID.String()).Scan(&decision); err != nil || decision != "approved" {
		t.Errorf("ductor.approval.decided: decision %q, %v", decision, err)
	}
	b.outboxEmpty(t)
}
