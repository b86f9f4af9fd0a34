package api_test

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testwait"
)

const heavyDoc = `
key: heavy
steps:
  - ref: first
    type: task
    with: {handler: builtin.noop}
  - ref: grow
    type: transform
    with: {expr: "lists.range(int(input.n)).map(x, lists.range(10000)).size()"}
edges:
  - {from: first, to: grow}
`

const probeDoc = `
key: probe
steps:
  - ref: only
    type: task
    with: {handler: builtin.noop}
`

// An expression that allocates without bound stops at its cost limit with
// expression_limit, fast and with memory bounded, and another tenant's
// runs keep their pace meanwhile. One whose cost is certain to exceed the
// limit is refused at publish.
func TestAllocatingExpressionIsBoundedAndOthersStayFast(t *testing.T) {
	b := setupAPI(t)
	static := strings.Replace(heavyDoc, "int(input.n)", "3000", 1)
	code, body := b.send(t, "POST", "/api/v1/definitions/heavy/versions", b.keyA, "application/yaml", static)
	if code != 422 || !strings.Contains(mustJSON(body), "exceeds the cost limit") {
		t.Fatalf("publish of a statically over-budget expression = %d %v, want 422", code, body)
	}
	if code, body := b.send(t, "POST", "/api/v1/definitions/heavy/versions", b.keyA, "application/yaml", heavyDoc); code != 201 {
		t.Fatalf("publish heavy = %d %v", code, body)
	}
	if code, body := b.send(t, "POST", "/api/v1/definitions/probe/versions", b.keyB, "application/yaml", probeDoc); code != 201 {
		t.Fatalf("publish probe = %d %v", code, body)
	}
	idle := b.probeLatency(t, 5)

	var peak atomic.Uint64
	stop := watchHeap(&peak)
	var wg sync.WaitGroup
	heavy := make([]map[string]any, 8)
	began := time.Now()
	for i := range heavy {
		wg.Go(func() {
			_, started := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "heavy", "input": {"n": 3000}}`)
			heavy[i] = b.waitRunWith(t, b.keyA, started["id"].(string))
		})
	}
	loaded := b.probeLatency(t, 5)
	wg.Wait()
	took := time.Since(began)
	grew := stop()

	for _, run := range heavy {
		e, _ := run["error"].(map[string]any)
		if run["status"] != "failed" || e["code"] != "expression_limit" {
			t.Fatalf("heavy run = %v %v, want failed with expression_limit", run["status"], run["error"])
		}
	}
	if took > 10*time.Second {
		t.Errorf("8 heavy runs took %s to fail", took)
	}
	if grew > 256<<20 {
		t.Errorf("the heap grew by %d MB while heavy runs evaluated", grew>>20)
	}
	// Timing on a shared machine is noisy: allow a generous multiple.
	if limit := max(10*idle, idle+time.Second); loaded > limit {
		t.Errorf("probe median %s under load, %s idle (limit %s)", loaded, idle, limit)
	}
	t.Logf("probe median idle %s, under load %s; heavy runs failed in %s; heap grew %d MB", idle, loaded, took, grew>>20)
}

// probeLatency runs tenant B's probe n times, one after another, and
// returns the median time from trigger to its end.
func (b *apiBundle) probeLatency(t *testing.T, n int) time.Duration {
	t.Helper()
	var ds []time.Duration
	for range n {
		began := time.Now()
		_, started := b.call(t, "POST", "/api/v1/runs", b.keyB, `{"definition": "probe"}`)
		if run := b.waitRunWith(t, b.keyB, started["id"].(string)); run["status"] != "succeeded" {
			t.Fatalf("probe = %v", run)
		}
		ds = append(ds, time.Since(began))
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// waitRunWith polls the run with key until it is terminal.
func (b *apiBundle) waitRunWith(t *testing.T, key, id string) map[string]any {
	t.Helper()
	return testwait.Value(t, 30*time.Second, "run "+id+" ends", func() (map[string]any, bool) {
		_, run := b.call(t, "GET", "/api/v1/runs/"+id, key, "")
		return run, endedStatus(run["status"])
	})
}

// watchHeap samples the heap until the returned function is called, which
// reports how far it grew above where it started.
func watchHeap(peak *atomic.Uint64) func() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		if p := peak.Load(); p > base {
			return p - base
		}
		return 0
	}
}

func mustJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

const referencesDoc = `
key: references
steps:
  - ref: build
    type: transform
    with: {expr: "EXPR"}
`

// Expressions that build from many references to one large input, or
// compare two large lists element by element, stop at the cost limit
// with expression_limit naming the field and the limit, fast and with
// memory bounded, while another tenant's runs keep their pace.
func TestReferenceAmplificationIsBoundedAndOthersStayFast(t *testing.T) {
	b := setupAPI(t)
	big := make([]string, 10_000)
	for i := range big {
		big[i] = strings.Repeat("x", 30)
	}
	a, c := make([]int, 20_000), make([]int, 20_000)
	for i := range a {
		a[i], c[i] = i, -1-i
	}
	exprs := []string{
		"lists.range(int(input.n)).map(x, input.big)",
		"lists.range(int(input.n)).map(x, input.big).flatten()",
		"sets.intersects(input.a, input.b)",
		"input.a.distinct()",
	}
	for i, src := range exprs {
		doc := strings.Replace(strings.Replace(referencesDoc, "EXPR", src, 1), "key: references", "key: references-"+string(rune('a'+i)), 1)
		if code, body := b.send(t, "POST", "/api/v1/definitions/references-"+string(rune('a'+i))+"/versions", b.keyA, "application/yaml", doc); code != 201 {
			t.Fatalf("publish %s = %d %v", src, code, body)
		}
	}
	if code, body := b.send(t, "POST", "/api/v1/definitions/probe/versions", b.keyB, "application/yaml", probeDoc); code != 201 {
		t.Fatalf("publish probe = %d %v", code, body)
	}
	input := func(n int) string {
		return mustJSON(map[string]any{"n": n, "big": big})
	}
	sets := mustJSON(map[string]any{"a": a, "b": c})
	idle := b.probeLatency(t, 5)

	var peak atomic.Uint64
	stop := watchHeap(&peak)
	type heavy struct{ def, input string }
	var runs []heavy
	for _, n := range []int{150, 400, 10_000} {
		runs = append(runs, heavy{"references-a", input(n)}, heavy{"references-b", input(n)})
	}
	runs = append(runs, heavy{"references-c", sets}, heavy{"references-c", sets}, heavy{"references-d", sets}, heavy{"references-d", sets})
	ended := make([]map[string]any, len(runs))
	var wg sync.WaitGroup
	began := time.Now()
	for i, r := range runs {
		wg.Go(func() {
			_, started := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "`+r.def+`", "input": `+r.input+`}`)
			ended[i] = b.waitRunWith(t, b.keyA, started["id"].(string))
		})
	}
	loaded := b.probeLatency(t, 5)
	wg.Wait()
	took := time.Since(began)
	grew := stop()

	for i, run := range ended {
		e, _ := run["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if run["status"] != "failed" || e["code"] != "expression_limit" || !strings.Contains(msg, "with.expr") || !strings.Contains(msg, "cost limit of") {
			t.Errorf("%s = %v %v, want failed with expression_limit naming with.expr and the cost limit", runs[i].def, run["status"], run["error"])
		}
	}
	if took > 20*time.Second {
		t.Errorf("%d heavy runs took %s to fail", len(runs), took)
	}
	if grew > 256<<20 {
		t.Errorf("the heap grew by %d MB while heavy runs evaluated", grew>>20)
	}
	if limit := max(10*idle, idle+time.Second); loaded > limit {
		t.Errorf("probe median %s under load, %s idle (limit %s)", loaded, idle, limit)
	}
	t.Logf("probe median idle %s, under load %s; %d heavy runs failed in %s; heap grew %d MB", idle, loaded, len(runs), took, grew>>20)
}
