package workers_test

import (
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
)

func TestWaitForms(t *testing.T) {
	t.Parallel()
	b := setup(t)
	until := time.Now().Add(150 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	b.publishYAML(t, `
key: waits
steps:
  - { ref: d, type: wait, with: { duration: 50ms } }
  - { ref: u, type: wait, with: { until: "`+until+`" } }
  - { ref: x, type: wait, with: { until_expr: 'now + duration("50ms")' } }
edges:
  - { from: d, to: u }
  - { from: u, to: x }
`)
	id := b.start(t, "waits", nil)
	nodes := b.finish(t, id, engine.RunSucceeded)
	untilAt, _ := time.Parse(time.RFC3339Nano, until)
	if d := nodes["d"].FinishedAt.Sub(nodes["d"].StartedAt); d < 50*time.Millisecond {
		t.Errorf("duration wait took %s, want >= 50ms", d)
	}
	if nodes["u"].FinishedAt.Before(untilAt) {
		t.Errorf("until wait finished at %s, before %s", nodes["u"].FinishedAt, untilAt)
	}
	if d := nodes["x"].FinishedAt.Sub(nodes["x"].StartedAt); d < 50*time.Millisecond {
		t.Errorf("until_expr wait took %s, want >= 50ms", d)
	}
	b.wantWaited(t, id, map[string]string{"d": "timer", "u": "timer", "x": "timer"})
}

// A cron wait in a timezone parks until the next matching instant in
// that zone; moving the database clock past it wakes the run.
func TestWaitCronWithTimezone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: cron
steps:
  - { ref: nine, type: wait, with: { cron: "0 9 * * *", timezone: Asia/Tokyo } }
`)
	id := b.start(t, "cron", nil)
	n := b.waitNode(t, id, "nine", engine.NodeWaiting)
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	at := n.Waiting.Until.In(tokyo)
	if at.Hour() != 9 || at.Minute() != 0 || at.Second() != 0 {
		t.Fatalf("wakes at %s, want 09:00 Tokyo", at)
	}
	if d := time.Until(at); d <= 0 || d > 24*time.Hour {
		t.Fatalf("wakes in %s, want the next 09:00 Tokyo within a day", d)
	}
	b.shift(t, 25*time.Hour)
	b.finish(t, id, engine.RunSucceeded)
}

// A 24-hour wait survives in the timer table and fires when the
// database's clock says so: here, after the clock is moved a day on.
func TestWaitLongDurationFiresOnShiftedClock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: day
steps:
  - { ref: day, type: wait, with: { duration: 24h } }
`)
	id := b.start(t, "day", nil)
	b.waitNode(t, id, "day", engine.NodeWaiting)
	if run, _ := b.store.RunGet(b.ctx, b.tenant.ID, id); run.Status != engine.RunWaiting {
		t.Fatalf("run is %s, want waiting", run.Status)
	}
	b.shift(t, 24*time.Hour+time.Second)
	b.finish(t, id, engine.RunSucceeded)
}
