package shell

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// An idle installation reports 0, not silence: every active status, and
// every queue's depth, steps in flight and oldest age.
func TestIdleGaugesReportZero(t *testing.T) {
	t.Parallel()
	sh, _ := shellOn(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(sh.Collectors()...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{} // metric → label values → value
	for _, f := range families {
		got[f.GetName()] = map[string]float64{}
		for _, m := range f.GetMetric() {
			got[f.GetName()][labelsOf(m)] = m.GetGauge().GetValue()
		}
	}
	want := map[string][]string{
		"ductor_runs_active":              {"status=pending", "status=running", "status=waiting"},
		"ductor_queue_depth":              {},
		"ductor_steps_in_flight":          {},
		"ductor_queue_oldest_age_seconds": {},
	}
	for _, q := range knownQueues() {
		want["ductor_queue_depth"] = append(want["ductor_queue_depth"], "queue="+q+",tenant_id=")
		want["ductor_steps_in_flight"] = append(want["ductor_steps_in_flight"], "queue="+q+",tenant_id=")
		want["ductor_queue_oldest_age_seconds"] = append(want["ductor_queue_oldest_age_seconds"], "queue="+q)
	}
	for name, series := range want {
		if len(got[name]) != len(series) {
			t.Errorf("%s = %v, want %v at 0", name, got[name], series)
		}
		for _, s := range series {
			if v, ok := got[name][s]; !ok || v != 0 {
				t.Errorf("%s{%s} = %v (present %v), want 0", name, s, v, ok)
			}
		}
	}
}

func labelsOf(m *dto.Metric) string {
	s := ""
	for i, l := range m.GetLabel() {
		if i > 0 {
			s += ","
		}
		s += l.GetName() + "=" + l.GetValue()
	}
	return s
}
