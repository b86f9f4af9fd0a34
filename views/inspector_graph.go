package views

import (
	"fmt"
	"slices"

	"github.com/ductor/ductor/app/definition"
)

// Box sizes and gaps of the run graph, in SVG units.
const (
	graphNodeW = 168
	graphNodeH = 46
	graphGapX  = 64
	graphGapY  = 18
	graphPad   = 8
)

// RunGraph is a run's definition laid out left to right, each step with
// its node's state.
type RunGraph struct {
	Nodes         []GraphNode
	Edges         []GraphEdge
	Width, Height int
}

// GraphNode is one step's box.
type GraphNode struct {
	Ref, Type, State string
	// Tags name the step's control flow: partial join, race, early
	// completion, loop, end_run.
	Tags string
	X, Y int
}

// GraphEdge is a curve between two boxes, labelled with its outcome
// unless it is the plain success edge.
type GraphEdge struct {
	From, To, Label string
	Path            string
	LabelX, LabelY  int
}

// LayoutRun lays m out in layers: each step one layer right of its
// furthest predecessor (m.Order is topological), steps within a layer
// ordered by the mean position of their predecessors. states gives each
// ref's node state; a step without a node is pending.
func LayoutRun(m *definition.Manifest, states map[string]string) RunGraph {
	preds := map[string][]string{}
	for _, e := range m.Edges {
		preds[e.To] = append(preds[e.To], e.From)
	}
	layers := layerSteps(m.Order, preds)
	pos := map[string][2]int{}
	g := RunGraph{}
	top := graphPad + tagRoom(m)
	for li, layer := range layers {
		orderLayer(layer, preds, pos)
		for i, ref := range layer {
			x, y := graphPad+li*(graphNodeW+graphGapX), top+i*(graphNodeH+graphGapY)
			pos[ref] = [2]int{x, y}
			typ, tags := "", ""
			if st, ok := m.Step(ref); ok {
				typ, tags = string(st.Type), graphTags(st)
			}
			g.Nodes = append(g.Nodes, GraphNode{Ref: ref, Type: typ, Tags: tags, State: stateOr(states[ref]), X: x, Y: y})
			g.Width = max(g.Width, x+graphNodeW+graphPad)
			g.Height = max(g.Height, y+graphNodeH+graphPad)
		}
	}
	for _, e := range m.Edges {
		g.Edges = append(g.Edges, edgeBetween(e, pos[e.From], pos[e.To]))
	}
	return g
}

// tagRoom is the room above the first row for the tags of its boxes.
func tagRoom(m *definition.Manifest) int {
	for i := range m.Steps {
		if graphTags(&m.Steps[i]) != "" {
			return 12
		}
	}
	return 0
}

func stateOr(s string) string {
	if s == "" {
		return "pending"
	}
	return s
}

// layerSteps puts each step one layer after its furthest predecessor.
func layerSteps(order []string, preds map[string][]string) [][]string {
	layerOf := map[string]int{}
	var layers [][]string
	for _, ref := range order {
		l := 0
		for _, p := range preds[ref] {
			if pl, ok := layerOf[p]; ok {
				l = max(l, pl+1)
			}
		}
		layerOf[ref] = l
		for len(layers) <= l {
			layers = append(layers, nil)
		}
		layers[l] = append(layers[l], ref)
	}
	return layers
}

// orderLayer sorts a layer by the mean row of each step's predecessors,
// keeping the topological order among equals.
func orderLayer(layer []string, preds map[string][]string, pos map[string][2]int) {
	centre := map[string]float64{}
	for _, ref := range layer {
		sum, n := 0, 0
		for _, p := range preds[ref] {
			if xy, ok := pos[p]; ok {
				sum, n = sum+xy[1], n+1
			}
		}
		if n > 0 {
			centre[ref] = float64(sum) / float64(n)
		}
	}
	slices.SortStableFunc(layer, func(a, b string) int {
		switch ca, cb := centre[a], centre[b]; {
		case ca < cb:
			return -1
		case ca > cb:
			return 1
		}
		return 0
	})
}

func edgeBetween(e definition.Edge, from, to [2]int) GraphEdge {
	x1, y1 := from[0]+graphNodeW, from[1]+graphNodeH/2
	x2, y2 := to[0], to[1]+graphNodeH/2
	if x2 <= x1 { // a backward edge (never in a compiled definition): loop below
		x2 = to[0] + graphNodeW/2
		y2 = to[1] + graphNodeH
	}
	mid := (x1 + x2) / 2
	out := GraphEdge{
		From: e.From, To: e.To,
		Path:   fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, mid, y1, mid, y2, x2, y2),
		LabelX: mid, LabelY: (y1+y2)/2 - 4,
	}
	if e.On != "" && e.On != definition.OutcomeSuccess {
		out.Label = string(e.On)
	}
	if e.Choice != nil {
		out.Label = choiceLabel(e.Choice)
	}
	return out
}

func choiceLabel(b *definition.Branch) string {
	if b.Default {
		return "default"
	}
	if len(b.When) > 24 {
		return b.When[:23] + "…"
	}
	return b.When
}

// ViewBox is the SVG viewBox attribute of the graph.
func (g RunGraph) ViewBox() string { return fmt.Sprintf("0 0 %d %d", g.Width, g.Height) }
