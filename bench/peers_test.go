package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/auth"
	dashserver "github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/workers"
)

// BenchmarkPeers runs the workloads the Postgres-native engines are
// compared on, through Ductor's public API (runs started by POST
// /api/v1/runs with a tenant's key, on a real HTTP server), on two
// Ductors in one run, one with local steps on and one with them off
// (DUCTOR_LOCAL_STEPS), alternating which goes first:
//
//   - chains: 500 (-short: 50) 10-step chains of no-op tasks started at
//     once by 16 clients; steps a second from the first request to the
//     last run's end;
//   - hop: one 100-step chain; a step's start to the next one's, p50;
//   - trigger: 100 (-short: 30) one-step runs one after another; the
//     request sent to the step's handler running, p50;
//   - fan-out: one 2,000-way (-short: 300) scatter of no-op tasks; steps a
//     second from the request to the run's end.
//
// The throughputs are also given as ratios of River's raw rate measured
// in the same run.
func BenchmarkPeers(b *testing.B) {
	baseline := riverRate(b)
	chains := size("BENCH_PEER_CHAINS", 500, 50)
	fan := size("BENCH_PEER_FAN", 2000, 300)
	triggers := size("BENCH_PEER_TRIGGERS", 100, 30)
	on := newPeer(b, true)
	off := newPeer(b, false)
	for _, p := range []*peer{on, off} {
		p.publish(b, taskChain("chain10", 10))
		p.publish(b, taskChain("chain100", 100))
		p.publish(b, markedOne("single"))
		p.publish(b, scatter("fan", fan))
	}
	type figures struct {
		chain, fan   []float64
		hop, trigger []time.Duration
	}
	got := map[*peer]*figures{on: {}, off: {}}
	round := func(p *peer) {
		f := got[p]
		f.chain = append(f.chain, p.chains(b, chains))
		f.hop = append(f.hop, p.hop(b)...)
		f.trigger = append(f.trigger, p.triggers(b, triggers)...)
		f.fan = append(f.fan, p.fanOut(b, fan))
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			round(off)
			round(on)
		} else {
			round(on)
			round(off)
		}
	}
	b.StopTimer()
	for _, p := range []*peer{on, off} {
		f := got[p]
		hop, trig := latencyOf(f.hop), latencyOf(f.trigger)
		name := map[bool]string{true: "on", false: "off"}[p.local]
		b.ReportMetric(mean(f.chain), "chain-steps/s-local-"+name)
		b.ReportMetric(hop.p50, "hop-p50-ms-local-"+name)
		record(b, "peers-local-"+name, "peers through the API, local steps %s: %d 10-step chains %.0f steps/s (%.2f× River raw); 100-step chain hop %s; trigger → step started %s; %d-way fan-out %.0f steps/s (%.2f×)",
			name, chains, mean(f.chain), mean(f.chain)/baseline, hop, trig, fan, mean(f.fan), mean(f.fan)/baseline)
	}
}

// peer is a Ductor with its API served over HTTP and a key of its tenant.
type peer struct {
	*ductor
	local bool
	url   string
	key   string
	http  *http.Client
}

func newPeer(b *testing.B, local bool) *peer {
	b.Helper()
	d := startDuctor(b, schema(b), func(c *workers.Config) {
		if local {
			c.LocalSteps = steps.NewExecutor(benchRegistry(b), steps.HTTPOptions{})
		} else {
			c.LocalSteps = nil
		}
	})
	srv := httptest.NewServer(dashserver.New(dashserver.Deps{Pool: d.pool, Store: d.store, API: true, Runs: d.coord.Runs,
		Logger: slog.New(slog.DiscardHandler)}))
	b.Cleanup(srv.Close)
	_, key, err := d.store.APIKeyCreate(d.ctx, d.tenant.ID, "bench", []auth.Scope{auth.ScopeAdmin})
	if err != nil {
		b.Fatal(err)
	}
	return &peer{ductor: d, local: local, url: srv.URL, key: key,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// startAPI starts a run of key through POST /api/v1/runs.
func (p *peer) startAPI(b *testing.B, key string, input any) uuid.UUID {
	body, _ := json.Marshal(map[string]any{"definition": key, "input": input})
	req, _ := http.NewRequest("POST", p.url+"/api/v1/runs", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.http.Do(req)
	if err != nil {
		b.Error(err)
		return uuid.Nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		ID uuid.UUID `json:"id"`
	}
	if resp.StatusCode/100 != 2 || json.Unmarshal(raw, &out) != nil || out.ID == uuid.Nil {
		b.Errorf("POST /api/v1/runs %s: %d %s", key, resp.StatusCode, raw)
		return uuid.Nil
	}
	return out.ID
}

// chains starts n 10-step chains from 16 clients at once and returns
// steps a second from the first request to the last run's end.
func (p *peer) chains(b *testing.B, n int) float64 {
	b.Helper()
	const clients = 16
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; i < n; i += clients {
				p.startAPI(b, "chain10", map[string]any{"i": i})
			}
		})
	}
	wg.Wait()
	p.waitIdle(b, 10*time.Minute)
	return float64(n*10) / time.Since(start).Seconds()
}

// hop runs one 100-step chain and returns its hops.
func (p *peer) hop(b *testing.B) []time.Duration {
	b.Helper()
	id := p.startAPI(b, "chain100", nil)
	p.waitRun(b, id, 5*time.Minute)
	return p.hops(b, id, 100).full
}

// triggers starts n one-step runs one after another and returns, for
// each, the time from the request's sending to the step's start.
func (p *peer) triggers(b *testing.B, n int) []time.Duration {
	b.Helper()
	var out []time.Duration
	for range n {
		sent := time.Now()
		id := p.startAPI(b, "single", nil)
		p.waitRun(b, id, time.Minute)
		out = append(out, markOf(b, id).Sub(sent))
	}
	return out
}

// fanOut runs one n-way scatter and returns steps a second.
func (p *peer) fanOut(b *testing.B, n int) float64 {
	b.Helper()
	start := time.Now()
	id := p.startAPI(b, "fan", map[string]any{"items": items(n)})
	p.waitRun(b, id, 10*time.Minute)
	return float64(n) / time.Since(start).Seconds()
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
