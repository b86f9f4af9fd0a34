package definition

import (
	"testing"
	"time"

	"github.com/ductor/ductor/app/schedule"
)

func TestTriggerRules(t *testing.T) {
	t.Parallel()
	doc := func(triggers string) string { return one(taskA) + "triggers:\n" + triggers }
	runRules(t, []ruleCase{
		{"schedule and event", doc("  - schedule: {cron: '0 8 * * 1-5', timezone: Europe/Paris, overlap: buffer_one}\n" +
			"  - {event: order.created, filter_expr: 'event.amount > 10', input_expr: '{\"id\": event.id}'}\n"), nil},
		{"neither", doc("  - {}\n"), []want{{"triggers[0]", "", `one of "schedule", "event" is required`}}},
		{"both", doc("  - {schedule: {interval: 1m}, event: x}\n"), []want{{"triggers[0].event", "", "set only one of"}}},
		{"no cron nor interval", doc("  - schedule: {timezone: UTC}\n"), []want{{"triggers[0].schedule.cron", "", "needs cron or interval"}}},
		{"bad cron", doc("  - schedule: {cron: '99 * * * *'}\n"), []want{{"triggers[0].schedule.cron", "", "invalid cron expression"}}},
		{"bad zone", doc("  - schedule: {cron: '@daily', timezone: Mars/Base}\n"), []want{{"triggers[0].schedule.timezone", "", "unknown time zone"}}},
		{"short interval", doc("  - schedule: {interval: 100ms}\n"), []want{{"triggers[0].schedule.interval", "", "at least 1s"}}},
		{"bad duration", doc("  - schedule: {interval: often}\n"), []want{{"triggers[0].schedule.interval", "", "invalid duration"}}},
		{"bad overlap", doc("  - schedule: {interval: 1m, overlap: queue}\n"), []want{{"triggers[0].schedule.overlap", "", "must be one of"}}},
		{"bad start", doc("  - schedule: {interval: 1m, start_at: tomorrow}\n"), []want{{"triggers[0].schedule.start_at", "", "RFC 3339"}}},
		{"unknown field", doc("  - schedule: {interval: 1m, intervall: 2m}\n"), []want{{"triggers[0].schedule.intervall", "", "unknown field"}}},
		{"duplicate id", doc("  - schedule: {id: s, interval: 1m}\n  - schedule: {id: s, interval: 2m}\n"), []want{{"triggers[1].schedule.id", "", `duplicate schedule id "s"`}}},
		{"bad event name", doc("  - {event: 'two words'}\n"), []want{{"triggers[0].event", "", "without spaces"}}},
		{"bad filter", doc("  - {event: x, filter_expr: 'event.a +'}\n"), []want{{"triggers[0].filter_expr", "", "invalid expression"}}},
		{"filter not bool", doc("  - {event: x, filter_expr: '\"yes\"'}\n"), []want{{"triggers[0].filter_expr", "", "invalid expression"}}},
		{"unknown event field", doc("  - {event: x, filter: 'true'}\n"), []want{{"triggers[0].filter", "", "unknown field"}}},
	})
}

func TestTriggersInTheManifest(t *testing.T) {
	t.Parallel()
	c, err := Compile([]byte(one(taskA)+`triggers:
  - schedule: {interval: PT10M, input: {n: 1}, catchup_window: 5m, start_at: "2025-01-01T01:00:00+01:00"}
  - schedule: {id: nightly, cron: '@daily', paused: true, pause_on_failure: true}
  - {event: go}
`), FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	tr := c.Manifest.Triggers
	if len(tr) != 3 || tr[0].Schedule == nil || tr[1].Schedule == nil || tr[2].Event == nil {
		t.Fatalf("triggers = %+v", tr)
	}
	first, nightly := tr[0].Schedule, tr[1].Schedule
	if first.ID != "k-1" || first.Spec.Interval.D() != 10*time.Minute || first.CatchupWindow.D() != 5*time.Minute ||
		first.Overlap != schedule.OverlapSkip || !first.Spec.StartAt.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("first schedule = %+v", first)
	}
	if nightly.ID != "nightly" || !nightly.Paused || !nightly.PauseOnFailure || nightly.CatchupWindow.D() != time.Hour {
		t.Errorf("nightly = %+v", nightly)
	}
	again, err := Compile([]byte(one(taskA)+"triggers:\n  - schedule: {interval: 10m, input: {n: 1}, catchup_window: 300s, start_at: '2025-01-01T00:00:00Z'}\n  - schedule: {id: nightly, cron: '@daily', paused: true, pause_on_failure: true}\n  - {event: go}\n"), FormatYAML)
	if err != nil || again.Hash != c.Hash {
		t.Errorf("the same triggers spelled otherwise hash differently: %v", err)
	}
}
