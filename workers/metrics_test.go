package workers_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/testwait"
)

func TestMetricsCountTicksStepsAndRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.coord.Collectors()...)
	b.publish(t, chain("metered", noop("a"), step("b", definition.TypeTransform, map[string]any{"expr": "1"})))
	b.waitTerminal(t, b.start(t, "metered", nil))

	// The run's end is counted once its tick has committed, a moment
	// after the run reads as ended.
	seen := map[string]bool{}
	testwait.Eventually(t, 10*time.Second, "the run's end counted", func() bool {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			seen[f.GetName()] = true
		}
		return seen["ductor_runs_finished_total"]
	})
	for _, name := range []string{"ductor_tick_duration_seconds", "ductor_step_duration_seconds", "ductor_runs_finished_total", "ductor_tick_conflicts_total"} {
		if !seen[name] {
			t.Errorf("metric %s not exported (have %v)", name, seen)
		}
	}
	if n := testutil.CollectAndCount(reg, "ductor_runs_finished_total"); n != 1 {
		t.Errorf("ductor_runs_finished_total has %d series, want one (succeeded)", n)
	}
}

// With local steps on, the process counts the steps it ran itself.
func TestMetricsCountLocalSteps(t *testing.T) {
	t.Parallel()
	b := setupLocalWith(t, nil)
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.coord.Collectors()...)
	b.publish(t, chain("metered", noop("a"), noop("b"), noop("c")))
	b.waitTerminal(t, b.start(t, "metered", nil))
	if n := counterValue(t, reg, "ductor_local_steps_total"); n < 1 {
		t.Errorf("ductor_local_steps_total = %v, want the chain's steps run locally", n)
	}
	if testutil.CollectAndCount(reg, "ductor_local_steps_running") != 1 {
		t.Error("ductor_local_steps_running not exported")
	}
}

// counterValue is the value of reg's one-series counter name.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return value(f.GetMetric()[0])
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
