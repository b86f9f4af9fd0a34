package engine

import (
	"fmt"
	"sort"

	"github.com/ductor/ductor/app/definition"
)

// graph is the manifest indexed for the tick: derived, never stored.
type graph struct {
	m     *definition.Manifest
	steps map[string]*definition.Step
	// out lists each step's outgoing edges: outcome edges in manifest
	// order, choice edges by branch index, done edges last.
	out   map[string][]definition.Edge
	in    map[string][]definition.Edge
	rank  map[string]int
	sinks []string
}

func newGraph(m *definition.Manifest) *graph {
	g := &graph{
		m:     m,
		steps: make(map[string]*definition.Step, len(m.Steps)),
		out:   map[string][]definition.Edge{},
		in:    map[string][]definition.Edge{},
		rank:  make(map[string]int, len(m.Order)),
	}
	for i := range m.Steps {
		g.steps[m.Steps[i].Ref] = &m.Steps[i]
	}
	for _, e := range m.Edges {
		g.out[e.From] = append(g.out[e.From], e)
		g.in[e.To] = append(g.in[e.To], e)
	}
	for ref := range g.out {
		sort.SliceStable(g.out[ref], func(i, j int) bool { return edgeLess(g.out[ref][i], g.out[ref][j]) })
	}
	for i, ref := range g.order() {
		g.rank[ref] = i
		if len(g.out[ref]) == 0 {
			g.sinks = append(g.sinks, ref)
		}
	}
	return g
}

// order is the manifest's topological order, or the step order when a
// hand-built manifest leaves it empty.
func (g *graph) order() []string {
	if len(g.m.Order) == len(g.m.Steps) {
		return g.m.Order
	}
	refs := make([]string, len(g.m.Steps))
	for i, s := range g.m.Steps {
		refs[i] = s.Ref
	}
	return refs
}

func edgeLess(a, b definition.Edge) bool {
	ra, rb := edgeRank(a), edgeRank(b)
	if ra != rb {
		return ra < rb
	}
	if a.Choice != nil && b.Choice != nil {
		return a.Choice.Index < b.Choice.Index
	}
	return false
}

func edgeRank(e definition.Edge) int {
	switch {
	case e.On == definition.OutcomeDone:
		return 2
	case e.Choice != nil:
		return 1
	}
	return 0
}

// EdgeID names an edge in a node's Inbound map: "from:on>to", or
// "from#index>to" for a choice-group edge.
func EdgeID(e definition.Edge) string {
	if e.Choice != nil {
		return fmt.Sprintf("%s#%d>%s", e.From, e.Choice.Index, e.To)
	}
	on := e.On
	if on == "" {
		on = definition.OutcomeSuccess
	}
	return e.From + ":" + string(on) + ">" + e.To
}

// descendants returns the refs reachable from ref, ref excluded.
func (g *graph) descendants(ref string) map[string]bool {
	seen := map[string]bool{}
	stack := []string{ref}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range g.out[cur] {
			if !seen[e.To] {
				seen[e.To] = true
				stack = append(stack, e.To)
			}
		}
	}
	return seen
}

// hasChoice reports whether ref's success edges form a choice group.
func (g *graph) hasChoice(ref string) bool {
	for _, e := range g.out[ref] {
		if e.Choice != nil {
			return true
		}
	}
	return false
}
