package workers_test

import (
	"context"
	"testing"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

const orderDef = `key: on-order
steps:
  - {ref: a, type: task, with: {handler: builtin.noop}}
triggers:
  - event: order.created
    filter_expr: 'event.amount > 10.0'
    input_expr: '{"amount": event.amount, "big": event.amount > 100.0}'
  - {event: order.created}
`

// An event trigger with a filter starts exactly one run per passing
// event: never for a failing filter (an error is no match, recorded),
// never twice for a repeated event.
func TestEventTriggerStartsExactlyTheRunsItShould(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, orderDef)
	publish := func(data any, key string) store.Event {
		t.Helper()
		e, _, err := b.coord.Runs.Events.Publish(b.ctx, store.Event{TenantID: b.tenant.ID, Name: "order.created", Data: data, IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	publish(map[string]any{"amount": 5.0}, "")
	big := publish(map[string]any{"amount": 500.0}, "k1")
	publish(map[string]any{"amount": 500.0}, "k1")   // a retry of the same event
	publish(map[string]any{"note": "no amount"}, "") // the filter errors
	if _, _, err := b.coord.Runs.Events.Publish(b.ctx, store.Event{TenantID: b.tenant.ID, Name: "order.cancelled", Data: map[string]any{"amount": 50.0}}); err != nil {
		t.Fatal(err)
	}
	filtered, plain := 0, 0
	runs, err := b.store.RunList(b.ctx, b.tenant.ID, store.RunFilter{Definition: "on-order", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		in, _ := r.State.Input.(map[string]any)
		if _, ok := in["big"]; ok {
			filtered++
			if in["big"] != true || r.SearchAttributes["event_id"] != big.ID.String() {
				t.Errorf("filtered run input %v, attributes %v", in, r.SearchAttributes)
			}
		} else {
			plain++
		}
	}
	if filtered != 1 || plain != 3 {
		t.Errorf("runs: %d from the filtered trigger (want 1), %d from the plain one (want 3)", filtered, plain)
	}
	trs, err := b.store.EventTriggersOf(b.ctx, b.tenant.ID, "on-order")
	if err != nil || len(trs) != 2 || trs[0].LastError == "" || trs[0].Started != 1 || trs[1].Started != 3 {
		t.Errorf("triggers = %+v, %v", trs, err)
	}
}

// A definition's declared schedule is created on publish, updated by the
// next publish, paused when no version is published, unpaused when one
// is again.
func TestDeclaredSchedulesFollowTheDefinition(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	doc := func(every string) string {
		return "key: nightly\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\ntriggers:\n  - schedule: {id: nightly-run, interval: " + every + "}\n"
	}
	v1 := testdb.Definition(t, b.store, b.tenant.ID, doc("1h"))
	sc := b.schedule(t, "nightly-run")
	if !sc.Owned || sc.Paused || sc.Spec.Interval.String() != "1h" || sc.NextAt == nil {
		t.Fatalf("declared schedule = %+v", sc)
	}
	v2 := testdb.Definition(t, b.store, b.tenant.ID, doc("2h"))
	if sc := b.schedule(t, "nightly-run"); sc.Spec.Interval.String() != "2h" {
		t.Errorf("after republishing: interval %v", sc.Spec.Interval)
	}
	for _, v := range []int{v1.Version, v2.Version} {
		if _, _, err := b.store.DefinitionVersionUnpublish(ctx, b.tenant.ID, "nightly", v, ""); err != nil {
			t.Fatal(err)
		}
	}
	if sc := b.schedule(t, "nightly-run"); !sc.Paused || sc.Note != store.NoteUnpublished {
		t.Errorf("with nothing published: paused %v, note %q", sc.Paused, sc.Note)
	}
	testdb.Definition(t, b.store, b.tenant.ID, doc("3h"))
	if sc := b.schedule(t, "nightly-run"); sc.Paused {
		t.Errorf("published again, still paused: %q", sc.Note)
	}
	testdb.Definition(t, b.store, b.tenant.ID, "key: nightly\nsteps:\n  - {ref: b, type: task, with: {handler: builtin.noop}}\n")
	if _, err := b.store.ScheduleGet(ctx, b.tenant.ID, "nightly-run"); err == nil {
		t.Errorf("a schedule the document no longer declares is still there")
	}
}

// A declared schedule of a definition with nothing published can still be
// paused and unpaused.
func TestPauseAScheduleWithoutAPublishedDefinition(t *testing.T) {
	t.Parallel()
	b := setup(t)
	v := testdb.Definition(t, b.store, b.tenant.ID, "key: gone\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\ntriggers:\n  - schedule: {id: gone-s, interval: 1h}\n")
	if _, _, err := b.store.DefinitionVersionUnpublish(b.ctx, b.tenant.ID, "gone", v.Version, ""); err != nil {
		t.Fatal(err)
	}
	sc, err := b.coord.Runs.Schedules.Update(b.ctx, b.tenant.ID, "gone-s", func(s *store.Schedule) error { s.Note = "still here"; return nil }, nil)
	if err != nil || sc.Note != "still here" {
		t.Errorf("update = %+v, %v", sc, err)
	}
}
