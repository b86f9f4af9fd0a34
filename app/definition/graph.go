package definition

import (
	"container/heap"
	"sort"
	"strings"
)

// gatherRef is a gather's scatter_ref, checked once the graph is known.
type gatherRef struct {
	gather, scatter string
	p               path
}

// graph sorts the steps topologically, reports cycles, and checks every
// gather's scatter is its ancestor.
func (c *checker) graph() {
	g := newAdjacency(c.m.Steps, c.m.Edges)
	order, rest := g.kahn()
	c.m.Order = order
	c.m.Entrypoints = g.entrypoints()
	if len(rest) > 0 {
		for _, cyc := range g.cycles(rest) {
			c.ps.add("edges", cyc[0], "cycle through steps %s", strings.Join(cyc, ", "))
		}
	}
	for _, gr := range c.gathers {
		c.checkGather(g, gr)
	}
	c.checkControl()
}

func (c *checker) checkGather(g *adjacency, gr gatherRef) {
	t, ok := c.types[gr.scatter]
	switch {
	case !ok:
		c.ps.add(gr.p, gr.gather, "unknown step %q", gr.scatter)
	case t != TypeScatter:
		c.ps.add(gr.p, gr.gather, "step %q is a %s step, not a scatter", gr.scatter, t)
	case !g.ancestor(gr.scatter, gr.gather):
		c.ps.add(gr.p, gr.gather, "scatter %q must be an ancestor of gather %q: add a path of edges from it", gr.scatter, gr.gather)
	}
}

// adjacency is the step graph by ref.
type adjacency struct {
	refs []string // sorted
	out  map[string][]string
	in   map[string][]string
}

func newAdjacency(steps []Step, edges []Edge) *adjacency {
	g := &adjacency{out: map[string][]string{}, in: map[string][]string{}}
	for _, s := range steps {
		if s.Ref != "" {
			g.refs = append(g.refs, s.Ref)
		}
	}
	sort.Strings(g.refs)
	for _, e := range edges {
		g.out[e.From] = append(g.out[e.From], e.To)
		g.in[e.To] = append(g.in[e.To], e.From)
	}
	return g
}

// entrypoints are the steps without incoming edges, sorted.
func (g *adjacency) entrypoints() []string {
	out := []string{}
	for _, r := range g.refs {
		if len(g.in[r]) == 0 {
			out = append(out, r)
		}
	}
	return out
}

// kahn returns the topological order, ties broken by ref, and the steps
// left over when there is a cycle.
func (g *adjacency) kahn() (order, rest []string) {
	indeg := make(map[string]int, len(g.refs))
	ready := &refHeap{}
	for _, r := range g.refs {
		indeg[r] = len(g.in[r])
		if indeg[r] == 0 {
			*ready = append(*ready, r)
		}
	}
	heap.Init(ready)
	order = make([]string, 0, len(g.refs))
	for ready.Len() > 0 {
		r := heap.Pop(ready).(string)
		order = append(order, r)
		for _, to := range g.out[r] {
			if indeg[to]--; indeg[to] == 0 {
				heap.Push(ready, to)
			}
		}
	}
	for _, r := range g.refs {
		if indeg[r] > 0 {
			rest = append(rest, r)
		}
	}
	return order, rest
}

// ancestor reports whether a path of edges leads from a to b.
func (g *adjacency) ancestor(a, b string) bool {
	seen := map[string]bool{b: true}
	queue := []string{b}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		for _, from := range g.in[r] {
			if from == a {
				return true
			}
			if !seen[from] {
				seen[from] = true
				queue = append(queue, from)
			}
		}
	}
	return false
}

type refHeap []string

func (h refHeap) Len() int           { return len(h) }
func (h refHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h refHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *refHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *refHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
