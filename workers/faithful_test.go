package workers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/app/wftest"
)

// faithfulRuns is how many random definitions the property test runs.
const faithfulRuns = 200

// mockTable holds each random definition's mocks, by definition key, for
// the prop.mock handler to answer with.
type mockTable struct {
	mu sync.Mutex
	by map[string]map[string]wftest.MockList
}

func (m *mockTable) handler(_ context.Context, c steps.Call) (any, error) {
	key, _ := c.Input.(map[string]any)["key"].(string)
	m.mu.Lock()
	l := m.by[key][c.Node]
	m.mu.Unlock()
	if len(l) == 0 {
		return nil, steps.Fail("no_mock", "no mock for "+c.Node, false)
	}
	mk := l[min(max(c.Attempt, 1), len(l))-1]
	if mk.Error != nil {
		return nil, steps.Fail(mk.Error.Code, mk.Error.Message, mk.Error.Retryable)
	}
	return mk.Output, nil
}

// The in-memory runner decides what a real server decides: random
// definitions over the step types, with retries, waits, joins and
// scatters, run through `ductor test`'s runner and through the workers
// runtime against Postgres with the same mocked results, end in the same
// state: run status, error and output, every step's state, attempts and
// output.
func TestFaithfulToTheServer(t *testing.T) {
	t.Parallel()
	table := &mockTable{by: map[string]map[string]wftest.MockList{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(srv.Close)
	pool := testdb.Schema(t)
	b := testBundle{ctx: context.Background(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: true, handlers: []map[string]steps.Handler{{"prop.mock": table.handler}},
		http: steps.HTTPOptions{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
	b.tenant = testdb.Tenant(t, b.store, nil)
	b.publishYAML(t, `{"key": "prop-child", "steps": [{"ref": "c", "type": "transform", "with": {"expr": "{\"child\": 1}"}}], "edges": []}`)
	r, err := wftest.NewRunner()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 24)
	for seed := range uint64(faithfulRuns) {
		pc := gen(seed, srv.URL)
		table.mu.Lock()
		table.by[pc.key] = pc.mocks
		table.mu.Unlock()
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if diff := b.compare(t, r, pc); diff != "" {
				doc, _ := json.Marshal(pc.doc)
				t.Errorf("seed %d differs:\n%s\ndefinition: %s", seed, diff, doc)
			}
		}()
	}
	wg.Wait()
}

// compare runs pc both ways and returns their differences.
func (b testBundle) compare(t *testing.T, r *wftest.Runner, pc *propCase) string {
	doc, _ := json.Marshal(pc.doc)
	testdb.Definition(t, b.store, b.tenant.ID, string(doc))
	input := map[string]any{"n": int64(5)}
	res, err := r.RunDoc(context.Background(), doc, pc.memoryCase(input))
	if err == nil {
		err = res.Err
	}
	if err != nil {
		return "in memory: " + err.Error()
	}
	server, err := b.serverRun(t, pc, input)
	if err != nil {
		return "on the server: " + err.Error()
	}
	return diffEnds(endOf(res.Outcome), server)
}

func (pc *propCase) memoryCase(input any) wftest.Case {
	c := wftest.Case{Input: input, Mocks: pc.mocks}
	for _, s := range pc.signals {
		c.Deliver = append(c.Deliver, wftest.Delivery{Signal: &wftest.SignalDelivery{Name: s}})
	}
	for _, ref := range sortedRefs(pc.approvals) {
		c.Deliver = append(c.Deliver, wftest.Delivery{Approval: &wftest.ApprovalInput{Node: ref, Approved: pc.approvals[ref], By: "ann@example.com", Comment: "ok"}})
	}
	for _, ref := range sortedRefs(pc.cases) {
		c.Deliver = append(c.Deliver, wftest.Delivery{Case: &wftest.CaseInput{Node: ref, Status: "resolved", Data: map[string]any{"done": true}}})
	}
	return c
}

func sortedRefs(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// serverRun starts the run, sends its signals, decides its approvals and
// cases as they open, and reads its end.
func (b testBundle) serverRun(t *testing.T, pc *propCase, input any) (*runEnd, error) {
	id := b.start(t, pc.key, input)
	for i, s := range pc.signals {
		// A run that ended already (its signal steps skipped) refuses
		// the signal, as the in-memory run discards it.
		_, _ = b.coord.Runs.Signal(b.ctx, b.tenant.ID, id, engine.Signal{RequestID: fmt.Sprint("s", i), Name: s})
	}
	decided := map[string]bool{}
	var run store.Run
	ok := testwait.Until(b.ctx, 45*time.Second, func() bool {
		var err error
		if run, err = b.store.RunGet(b.ctx, b.tenant.ID, id); err != nil || run.Status.Terminal() {
			return true
		}
		b.answer(pc, id, decided)
		return false
	})
	if !ok {
		return nil, fmt.Errorf("run %s still %s", id, run.Status)
	}
	return b.serverEnd(id, run)
}

// answer decides the approvals and cases that opened.
func (b testBundle) answer(pc *propCase, id uuid.UUID, decided map[string]bool) {
	as, _ := b.store.ApprovalsOfRun(b.ctx, b.tenant.ID, id)
	for _, a := range as {
		if a.Status == store.ApprovalPending && !decided["a:"+a.Node] {
			decided["a:"+a.Node] = true
			_, _ = b.coord.Runs.DecideApproval(b.ctx, b.tenant.ID, a.ID, store.Decision{
				By: "ann@example.com", Approved: pc.approvals[a.Node], Comment: "ok", Who: store.Audience("ann@example.com", "finance"),
			})
		}
	}
	cs, _ := b.store.CasesOfRun(b.ctx, b.tenant.ID, id)
	for _, c := range cs {
		if !decided["c:"+c.Node] {
			decided["c:"+c.Node] = true
			resolved := "resolved"
			_, _ = b.coord.Runs.UpdateCase(b.ctx, b.tenant.ID, c.ID, runs.CaseChange{Status: &resolved, Data: map[string]any{"done": true}})
		}
	}
}

// runEnd is what both ways must agree on.
type runEnd struct {
	Status string
	Error  string
	Output string
	Nodes  map[string]string
}

func endOf(o *wftest.Outcome) *runEnd {
	e := &runEnd{Status: o.Status, Output: timeless(o.Output), Nodes: map[string]string{}}
	if o.Error != nil {
		e.Error = o.Error.Code
	}
	for id, n := range o.State().Nodes {
		if n.Child == nil {
			e.Nodes[id] = nodeEnd(n)
		}
	}
	return e
}

func (b testBundle) serverEnd(id uuid.UUID, run store.Run) (*runEnd, error) {
	e := &runEnd{Status: string(run.Status), Output: timeless(run.State.Output), Nodes: map[string]string{}}
	if run.State.Error != nil {
		e.Error = run.State.Error.Code
	}
	ns, err := b.store.RunNodesSteps(b.ctx, b.tenant.ID, id)
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		e.Nodes[n.ID] = nodeEnd(n)
	}
	return e, nil
}

// nodeEnd is a step node's state, attempts, error code, scatter counts
// and output.
func nodeEnd(n *engine.Node) string {
	code := ""
	if n.Error != nil {
		code = n.Error.Code
	}
	sc := ""
	if n.Scatter != nil {
		sc = fmt.Sprintf(" scatter %d/%d ok, %d failed", n.Scatter.Succeeded, n.Scatter.Total, n.Scatter.Failed)
	}
	return fmt.Sprintf("%s a%d %s%s %s", n.State, n.Attempt, code, sc, timeless(n.Output))
}

// timeless is v as JSON without what differs by nature between the two
// runs: a wait's fired_at, a child's run id, an http response's headers.
func timeless(v any) string {
	raw, _ := json.Marshal(without(v, "fired_at", "child_run_id", "child_key", "headers"))
	return string(raw)
}

// without is v with the keys left out of every object inside it.
func without(v any, keys ...string) any {
	switch x := v.(type) {
	case map[string]any:
		c := map[string]any{}
		for k, e := range x {
			if !slices.Contains(keys, k) {
				c[k] = without(e, keys...)
			}
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = without(e, keys...)
		}
		return c
	}
	return v
}

func diffEnds(mem, srv *runEnd) string {
	if reflect.DeepEqual(mem, srv) {
		return ""
	}
	var b strings.Builder
	if mem.Status != srv.Status || mem.Error != srv.Error || mem.Output != srv.Output {
		fmt.Fprintf(&b, "run: in memory %s %s %s, on the server %s %s %s\n", mem.Status, mem.Error, mem.Output, srv.Status, srv.Error, srv.Output)
	}
	ids := map[string]bool{}
	for id := range mem.Nodes {
		ids[id] = true
	}
	for id := range srv.Nodes {
		ids[id] = true
	}
	for _, id := range sortedRefs(ids) {
		if mem.Nodes[id] != srv.Nodes[id] {
			fmt.Fprintf(&b, "%s: in memory %q, on the server %q\n", id, mem.Nodes[id], srv.Nodes[id])
		}
	}
	return b.String()
}
