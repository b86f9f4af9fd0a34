package definition

import "sort"

// cycles returns the strongly connected components with more than one
// step among rest (the steps Kahn's sort could not place), each sorted,
// ordered by their first ref. Every step of such a component lies on a
// cycle.
func (g *adjacency) cycles(rest []string) [][]string {
	t := tarjan{g: g, in: map[string]bool{}, index: map[string]int{}, low: map[string]int{}, onStack: map[string]bool{}}
	for _, r := range rest {
		t.in[r] = true
	}
	for _, r := range rest {
		if _, seen := t.index[r]; !seen {
			t.visit(r)
		}
	}
	sort.Slice(t.out, func(i, j int) bool { return t.out[i][0] < t.out[j][0] })
	return t.out
}

// tarjan finds strongly connected components (Tarjan, 1972). Recursion
// depth is bounded by MaxSteps.
type tarjan struct {
	g       *adjacency
	in      map[string]bool
	index   map[string]int
	low     map[string]int
	onStack map[string]bool
	stack   []string
	next    int
	out     [][]string
}

func (t *tarjan) visit(v string) {
	t.index[v], t.low[v] = t.next, t.next
	t.next++
	t.stack = append(t.stack, v)
	t.onStack[v] = true
	for _, w := range t.g.out[v] {
		if !t.in[w] {
			continue
		}
		if _, seen := t.index[w]; !seen {
			t.visit(w)
			t.low[v] = min(t.low[v], t.low[w])
		} else if t.onStack[w] {
			t.low[v] = min(t.low[v], t.index[w])
		}
	}
	if t.low[v] == t.index[v] {
		t.pop(v)
	}
}

func (t *tarjan) pop(root string) {
	var comp []string
	for {
		n := len(t.stack) - 1
		w := t.stack[n]
		t.stack = t.stack[:n]
		t.onStack[w] = false
		comp = append(comp, w)
		if w == root {
			break
		}
	}
	if len(comp) > 1 {
		sort.Strings(comp)
		t.out = append(t.out, comp)
	}
}
