package workers_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ductor/ductor/app/definition"
)

func TestMetricsCountTicksStepsAndRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.coord.Collectors()...)
	b.publish(t, chain("metered", noop("a"), step("b", definition.TypeTransform, map[string]any{"expr": "1"})))
	b.waitTerminal(t, b.start(t, "metered", nil))

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range families {
		seen[f.GetName()] = true
	}
	for _, name := range []string{"ductor_tick_duration_seconds", "ductor_step_duration_seconds", "ductor_runs_finished_total", "ductor_tick_conflicts_total"} {
		if !seen[name] {
			t.Errorf("metric %s not exported (have %v)", name, seen)
		}
	}
	if n := testutil.CollectAndCount(reg, "ductor_runs_finished_total"); n != 1 {
		t.Errorf("ductor_runs_finished_total has %d series, want one (succeeded)", n)
	}
}
