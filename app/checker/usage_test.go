package checker

import (
	"strings"
	"testing"
	"time"
)

// Check includes Usage, which holds in TestConcurrencyChecker's
// workload; with the metering of attempts switched off (the triggers
// that count steps, step time and attempt bytes disabled) it finds the
// steps the tables hold and metering did not count.
func TestCheckerFindsStepsNotMetered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, trig := range []string{"run_attempt_usage_insert", "run_attempt_usage_update"} {
		if _, err := b.pool.Exec(b.ctx, `ALTER TABLE run_attempt DISABLE TRIGGER `+trig); err != nil {
			t.Fatal(err)
		}
	}
	StartWorker(t, b.url, WorkerOptions{})
	found := b.drive(t, 1, 1, nil)
	settled, err := b.w.Settle(b.ctx, b.pool, time.Now().Add(90*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	found = append(found, settled...)
	var steps []string
	for _, v := range found {
		if strings.HasPrefix(v, "usage ") && strings.HasSuffix(strings.Fields(v)[1], "/steps:") {
			steps = append(steps, v)
		}
	}
	if len(steps) == 0 {
		t.Fatalf("the checker found no unmetered steps; it found:\n%s", strings.Join(found, "\n"))
	}
	t.Logf("found: %s", steps[0])
}
