package engine

import (
	"fmt"
	"strings"
	"testing"
)

// A 1,000-step chain of transforms finishes in the one call that starts
// the run: pure steps need no job.
func TestPureChainFinishesInOneCall(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "step s%04d transform expr=`%d`\n", i, i)
		if i > 0 {
			fmt.Fprintf(&b, "edge s%04d s%04d\n", i-1, i)
		}
	}
	m, err := parseManifest(b.String())
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, m, nil)
	ds := s.tick(t0, 1)
	if len(ds) != 1 || s.run.Status != RunSucceeded {
		t.Fatalf("calls=%d status=%s", len(ds), s.run.Status)
	}
	if got := js(s.run.Output); got != `{"s0999":999}` {
		t.Fatalf("output %s", got)
	}
}

// Handling one child's completion in a 10,000-way scatter needs that child
// and the scatter's counters, and writes only those two nodes.
func TestScatterChildTickIsLocal(t *testing.T) {
	t.Parallel()
	m, _ := parseManifest("step s scatter items_expr=`input` do=`{\"type\":\"task\",\"with\":{\"handler\":\"h\"}}`\nlimits 0 0 0 10000")
	items := make([]any, 10000)
	for i := range items {
		items[i] = i
	}
	s := newSim(t, m, items)
	ds := s.tick(t0, 1)
	if got := len(ds[0].Nodes); got != 10001 {
		t.Fatalf("start wrote %d nodes, want 10001", got)
	}
	st := s.load([]Input{ok("s[17]", 1, "x")}, nil)
	if len(st.Nodes) != 2 {
		t.Fatalf("loaded %d nodes, want 2", len(st.Nodes))
	}
	d, err := s.eng.Decide(t.Context(), m, st, Tick{Now: t0, Inputs: []Input{ok("s[17]", 1, "x")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Nodes) != 2 || len(d.Needs) != 0 {
		t.Fatalf("wrote %d nodes, needs %v", len(d.Nodes), d.Needs)
	}
	sc := d.Nodes[1].Scatter
	if d.Nodes[1].ID != "s" || sc.InFlight != 9999 || sc.Succeeded != 1 {
		t.Fatalf("scatter = %+v", sc)
	}
}
