package workers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// Flow control's gauges count, by tenant, definition and rule (never by
// key), the runs holding a concurrency slot and those held back, and by
// tenant the step attempts of concurrency pools running and held back;
// its decisions are counted by rule and outcome. Once every run has
// ended, nothing counts.
func TestFlowMetrics(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := setup(t, map[string]steps.Handler{"test.hold": func(ctx context.Context, _ steps.Call) (any, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return map[string]any{}, nil
	}})
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.coord.Collectors()...)
	b.publishYAML(t, `
key: metered-keys
concurrency: [{key_expr: input.user, limit: 1}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
`)
	b.publishYAML(t, `
key: metered-burst
debounce: {key_expr: input.user, period: 1h}
steps:
  - {ref: out, type: transform, with: {expr: input.user}}
`)
	b.publishYAML(t, `
key: metered-pool
steps:
  - {ref: call, type: task, with: {handler: test.hold}, concurrency: {key_expr: '"vendor"', limit: 1}}
`)
	a1 := b.start(t, "metered-keys", map[string]any{"user": "a"})
	b.waitRunStatus(t, a1, engine.RunWaiting)
	a2, a3 := b.start(t, "metered-keys", map[string]any{"user": "a"}), b.start(t, "metered-keys", map[string]any{"user": "a"})
	other := b.start(t, "metered-keys", map[string]any{"user": "b"})
	burst := b.start(t, "metered-burst", map[string]any{"user": "a"})
	p1, p2 := b.start(t, "metered-pool", nil), b.start(t, "metered-pool", nil)
	tenant := b.tenant.ID.String()
	want := map[string]float64{
		`ductor_flow_runs{definition="metered-keys",rule="concurrency[0]",state="running"}`: 2,
		`ductor_flow_runs{definition="metered-keys",rule="concurrency[0]",state="queued"}`:  2,
		`ductor_flow_runs{definition="metered-burst",rule="debounce",state="queued"}`:       1,
		`ductor_flow_step_attempts{state="running"}`:                                        1,
		`ductor_flow_step_attempts{state="queued"}`:                                         1,
	}
	awaitFlowSeries(t, reg, tenant, want)
	got := flowSeries(t, reg, tenant)
	for name, v := range map[string]float64{
		`ductor_flow_decisions_total{outcome="queued",rule="concurrency"}`: 2,
	} {
		if got[name] < v {
			t.Errorf("%s = %v, want at least %v (have %v)", name, got[name], v, got)
		}
	}
	for name := range got {
		if containsAny(name, `"a"`, `"b"`, `"vendor"`) {
			t.Errorf("a key became a label: %s", name)
		}
	}

	close(release)
	for i, id := range []uuid.UUID{a1, other, a2, a3} {
		b.waitRunStatus(t, id, engine.RunWaiting)
		if err := b.signal(t, id, fmt.Sprint("go", i), "go", nil); err != nil {
			t.Fatal(err)
		}
		b.finish(t, id, engine.RunSucceeded)
	}
	b.finish(t, p1, engine.RunSucceeded)
	b.finish(t, p2, engine.RunSucceeded)
	b.shift(t, time.Hour)
	b.finish(t, burst, engine.RunSucceeded)
	for name := range want {
		want[name] = 0
	}
	awaitFlowSeries(t, reg, tenant, want)
}

// awaitFlowSeries polls the registry until the tenant's series have the
// values wanted (a missing series counts as 0).
func awaitFlowSeries(t *testing.T, reg *prometheus.Registry, tenant string, want map[string]float64) {
	t.Helper()
	var got map[string]float64
	matches := func() bool {
		got = flowSeries(t, reg, tenant)
		for name, v := range want {
			if got[name] != v {
				return false
			}
		}
		return true
	}
	if !testwait.Until(context.Background(), 20*time.Second, matches) {
		t.Fatalf("flow series %v, want %v", got, want)
	}
}

// flowSeries are the flow control series of one tenant (and the
// decisions, which have no tenant), named by their other labels in
// order.
func flowSeries(t *testing.T, reg *prometheus.Registry, tenant string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "ductor_flow_") {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			mine := true
			for _, l := range m.GetLabel() {
				if l.GetName() == "tenant_id" {
					mine = l.GetValue() == tenant
					continue
				}
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			if mine {
				out[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = value(m)
			}
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return m.GetCounter().GetValue()
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// A start whose inline tick fails is created again for a tick job; its
// flow decision was made twice and is counted once.
func TestFlowDecisionOfARetriedStartCountsOnce(t *testing.T) {
	t.Parallel()
	var armed, failed atomic.Bool
	b := setupWith(t, func(c *workers.Config) {
		c.Testing.Fault = func(p string) error {
			if p == shell.FaultAfterSave && armed.Load() && failed.CompareAndSwap(false, true) {
				return errors.New("the inline tick fails once")
			}
			return nil
		}
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.coord.Collectors()...)
	b.publishYAML(t, `
key: counted-once
concurrency: [{key_expr: input.user, limit: 1}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
`)
	armed.Store(true)
	id := b.start(t, "counted-once", map[string]any{"user": "a"})
	b.waitRunStatus(t, id, engine.RunWaiting)
	if !failed.Load() {
		t.Fatal("the inline tick never failed")
	}
	name := `ductor_flow_decisions_total{outcome="started",rule="concurrency"}`
	if got := flowSeries(t, reg, b.tenant.ID.String())[name]; got != 1 {
		t.Errorf("%s = %v, want 1", name, got)
	}
}
