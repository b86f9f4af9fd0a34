package views

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
)

// Box sizes and gaps of the run graph, in SVG units.
const (
	graphNodeW  = 168
	graphNodeH  = 46
	graphGap    = 64 // between layers (at least: labels widen it)
	graphRowGap = 18 // between the boxes of one layer
	graphPad    = 12
	labelChar   = 7  // width of one label character, 11px monospace
	labelLine   = 14 // room each edge label takes across the flow
	// deepLayers is the depth from which a graph is laid out top to
	// bottom unless asked otherwise.
	deepLayers = 8
)

// Layout directions.
const (
	LayoutLR = "lr"
	LayoutTB = "tb"
)

// RunGraph is a run's definition laid out in layers, left to right or
// top to bottom, each step with its node's state and each edge with its
// resolution.
type RunGraph struct {
	Nodes         []GraphNode
	Edges         []GraphEdge
	Width, Height int
	// Layout is lr or tb; Depth the number of layers, Bands the columns
	// a deep top-to-bottom graph is cut into.
	Layout string
	Depth  int
	Bands  int
}

// graphNodeName is a step box's accessible name: ref, type, state, its
// control-flow tags, and a scatter's progress and failed children.
func graphNodeName(n GraphNode) string {
	name := n.Ref + ", " + n.Type + ", " + n.State
	if n.Tags != "" { // in the order they are drawn, so the name holds the text shown
		name += ", " + n.Tags
	}
	// A box draws its failed count, or else its progress: what it draws
	// comes first, so the name starts with the box's visible text.
	if n.Failed > 0 {
		name += fmt.Sprintf(", %d failed", n.Failed)
	}
	if n.Progress != "" {
		name += ", " + n.Progress + " children ended"
	}
	return name
}

// EdgesFrom lists the edges that leave ref, in the graph's order.
func (g RunGraph) EdgesFrom(ref string) []GraphEdge {
	var out []GraphEdge
	for _, e := range g.Edges {
		if e.From == ref {
			out = append(out, e)
		}
	}
	return out
}

// GraphNode is one step's box.
type GraphNode struct {
	Ref, Type, State string
	// Tags name the step's control flow: partial join, race, early
	// completion, loop, end_run.
	Tags string
	// Progress is a scatter's children ended of its total ("354/2000");
	// Failed counts its children that failed, which its own state (a
	// scatter succeeds once every child ended) does not show.
	Progress string
	Failed   int
	X, Y     int
}

// GraphEdge is a curve between two boxes, labelled with its outcome
// unless it is the plain success edge. Mark is fired, dead or pending.
type GraphEdge struct {
	From, To, Label, Mark string
	// On says what the edge fires on, for its accessible name.
	On             string
	Path           string
	LabelX, LabelY int
}

// LayoutRun lays m out in layers: each step one layer after its furthest
// predecessor (m.Order is topological), steps within a layer ordered by
// the mean position of their predecessors. nodes gives each ref's node
// (none: pending). dir is lr or tb; empty picks tb for a deep graph.
// Labels sit in the gap after their edge's source layer, which no box
// occupies, so they never cover a node.
func LayoutRun(m *definition.Manifest, nodes map[string]*engine.Node, dir string) RunGraph {
	preds := map[string][]string{}
	for _, e := range m.Edges {
		preds[e.To] = append(preds[e.To], e.From)
	}
	layers := layerSteps(m.Order, preds)
	if dir != LayoutLR && dir != LayoutTB {
		dir = map[bool]string{true: LayoutTB, false: LayoutLR}[len(layers) > deepLayers]
	}
	l := &layout{m: m, nodes: nodes, tb: dir == LayoutTB, pos: map[string][2]int{}, layerOf: map[string]int{}}
	l.gaps = l.layerGaps(layers)
	build := func() RunGraph {
		g := RunGraph{Layout: dir, Depth: len(layers)}
		l.place(&g, layers, preds)
		l.route(&g)
		return g
	}
	g := build()
	// Top to bottom, the labels in a gap take as many rows as they need
	// not to overlap, which the first guess may not have left room for.
	if l.tb && l.growGaps() {
		g = build()
	}
	return g
}

type layout struct {
	m       *definition.Manifest
	nodes   map[string]*engine.Node
	tb      bool
	gaps    []int // gap after each layer
	pos     map[string][2]int
	layerOf map[string]int
	// perBand and bandWidth shape the columns of a banded layout.
	perBand, bandWidth int
	// layers are the refs of each layer in their order across, alongAt
	// where each layer starts along the flow.
	layers  [][]string
	alongAt []int
	// rows is, top to bottom, the label rows the gap after each layer
	// needs.
	rows []int
}

// layerGaps widens the gap after a layer to fit its edges' labels.
func (l *layout) layerGaps(layers [][]string) []int {
	layerOf := map[string]int{}
	for li, layer := range layers {
		for _, ref := range layer {
			layerOf[ref] = li
		}
	}
	gaps := make([]int, len(layers))
	for i := range gaps {
		gaps[i] = graphGap
	}
	perSource := map[string]int{}
	for _, e := range l.m.Edges {
		label := edgeLabel(e)
		if label == "" {
			continue
		}
		li := layerOf[e.From]
		perSource[e.From]++
		if l.tb {
			gaps[li] = max(gaps[li], perSource[e.From]*labelLine+34)
		} else {
			gaps[li] = max(gaps[li], len([]rune(label))*labelChar+28)
		}
	}
	return gaps
}

// place puts every box: layers along the flow, centred across it. A
// deep graph laid out top to bottom is cut into columns of layers side by
// side (bands), read like a newspaper, so it fits a wide box instead of
// making a thin strip; its rows share one gap, so a label in a gap never
// meets a box of the next column.
func (l *layout) place(g *RunGraph, layers [][]string, preds map[string][]string) {
	across := 0
	for _, layer := range layers {
		across = max(across, len(layer))
	}
	top := graphPad + tagRoom(l.m)
	boxAlong, boxAcross, rowGap := graphNodeW, graphNodeH, graphRowGap
	if l.tb {
		boxAlong, boxAcross, rowGap = graphNodeH, graphNodeW, graphGap/2
	}
	bandWidth := across*(boxAcross+rowGap) - rowGap
	perBand := len(layers)
	if l.tb && len(layers) > deepLayers {
		perBand = l.bandSize(len(layers), bandWidth)
		gap := slices.Max(l.gaps)
		for i := range l.gaps {
			l.gaps[i] = gap
		}
	}
	along := top
	l.layers, l.alongAt = layers, make([]int, len(layers))
	for li, layer := range layers {
		band := li / perBand
		if li%perBand == 0 {
			along = top
		}
		l.alongAt[li] = along
		orderLayer(layer, preds, l.pos, l.tb)
		offset := band*(bandWidth+graphGap) + (across-len(layer))*(boxAcross+rowGap)/2
		for i, ref := range layer {
			a, c := along, graphPad+offset+i*(boxAcross+rowGap)
			x, y := a, c
			if l.tb {
				x, y = c, a
			}
			l.pos[ref], l.layerOf[ref] = [2]int{x, y}, li
			g.Nodes = append(g.Nodes, l.box(ref, x, y))
			g.Width = max(g.Width, x+graphNodeW+graphPad)
			g.Height = max(g.Height, y+graphNodeH+graphPad)
		}
		along += boxAlong + l.gaps[li]
	}
	g.Bands = (len(layers) + perBand - 1) / max(perBand, 1)
	l.perBand, l.bandWidth = perBand, bandWidth
}

// bandSize is how many layers a column of a deep top-to-bottom graph
// holds: the number whose columns make the graph about twice as wide as
// tall, the shape of the box it is shown in.
func (l *layout) bandSize(depth, bandWidth int) int {
	const aim = 2.0
	best, bestOff := depth, math.Inf(1)
	row := graphNodeH + slices.Max(l.gaps)
	for bands := 1; bands <= depth; bands++ {
		per := (depth + bands - 1) / bands
		w := float64(bands*bandWidth + (bands-1)*graphGap)
		h := float64(per * row)
		if off := math.Abs(math.Log(w / h / aim)); off < bestOff {
			best, bestOff = per, off
		}
	}
	return best
}

func (l *layout) box(ref string, x, y int) GraphNode {
	typ, tags := "", ""
	if st, ok := l.m.Step(ref); ok {
		typ, tags = string(st.Type), graphTags(st)
	}
	g := GraphNode{Ref: ref, Type: typ, Tags: tags, State: "pending", X: x, Y: y}
	if n := l.nodes[ref]; n != nil {
		g.State = string(n.State)
		if sc := n.Scatter; sc != nil && sc.Total > 0 {
			g.Progress, g.Failed = fmt.Sprintf("%d/%d", sc.Succeeded+sc.Failed, sc.Total), sc.Failed
		}
	}
	return g
}

// route draws every edge. The edges leaving one box fan out across the
// flow, each to its own place in the gap after the box, where its label
// sits, then curve to their targets.
func (l *layout) route(g *RunGraph) {
	out := map[string][]definition.Edge{}
	for _, e := range l.m.Edges {
		out[e.From] = append(out[e.From], e)
	}
	type placed struct {
		e    definition.Edge
		k, n int
	}
	var all []placed
	for _, ref := range l.m.Order {
		edges := out[ref]
		slices.SortStableFunc(edges, func(a, b definition.Edge) int { return l.across(a.To) - l.across(b.To) })
		for k, e := range edges {
			all = append(all, placed{e, k, len(edges)})
		}
	}
	slots := l.labelSlots(len(all), func(i int) (definition.Edge, int, int) { return all[i].e, all[i].k, all[i].n })
	for i, p := range all {
		g.Edges = append(g.Edges, l.edge(p.e, p.k, p.n, slots[i]))
	}
	for _, e := range g.Edges {
		if e.Label == "" {
			continue
		}
		if l.tb {
			g.Width = max(g.Width, e.LabelX+labelWidth(e.Label)/2+graphPad)
		} else {
			g.Height = max(g.Height, e.LabelY+4+graphPad)
		}
	}
}

// labelWidth is the width a label's text takes.
func labelWidth(label string) int { return len([]rune(label))*labelChar + labelChar }

// labelSlots places the labels of the edges so that no two overlap:
// left to right, the labels in one gap (the same source layer) keep the
// order of their edges across the flow and are pushed apart to a line
// each; top to bottom, each label in a gap takes the first row where it
// meets no other label. A slot is the label's place across the flow
// (left to right) or its row (top to bottom); an unlabelled edge's is
// where it would be anyway.
func (l *layout) labelSlots(n int, edgeAt func(int) (definition.Edge, int, int)) []int {
	slots := make([]int, n)
	type lab struct{ i, want, w int }
	groups := map[int][]lab{}
	var keys []int
	for i := range n {
		e, k, cnt := edgeAt(i)
		from := l.pos[e.From]
		if l.tb {
			slots[i] = k
		} else {
			slots[i] = from[1] + graphNodeH/2 + (2*k-(cnt-1))*labelLine/2
		}
		label := edgeLabel(e)
		if label == "" {
			continue
		}
		// Grouped by the source layer's place along the flow.
		key, want := from[0], slots[i]
		if l.tb {
			key, want = from[1], from[0]+graphNodeW/2+l.shiftTB(k, cnt)
		}
		if groups[key] == nil {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], lab{i, want, labelWidth(label)})
	}
	if l.tb {
		l.rows = make([]int, len(l.gaps))
	}
	for _, key := range keys {
		g := groups[key]
		slices.SortStableFunc(g, func(a, b lab) int { return a.want - b.want })
		if !l.tb {
			// One line each, in order, pushed down as far as needed.
			const line = labelLine + 2
			next := math.MinInt
			for _, x := range g {
				y := max(x.want, next, 15)
				slots[x.i], next = y, y+line
			}
			continue
		}
		var rows [][][2]int // the spans each row holds
		for _, x := range g {
			span := [2]int{x.want - x.w/2 - labelChar, x.want + x.w/2 + labelChar}
			r := 0
			for ; r < len(rows); r++ {
				if !slices.ContainsFunc(rows[r], func(o [2]int) bool { return span[0] < o[1] && o[0] < span[1] }) {
					break
				}
			}
			if r == len(rows) {
				rows = append(rows, nil)
			}
			rows[r] = append(rows[r], span)
			slots[x.i] = r
		}
		e, _, _ := edgeAt(g[0].i)
		li := l.layerOf[e.From]
		l.rows[li] = max(l.rows[li], len(rows))
	}
	return slots
}

// growGaps widens each top-to-bottom gap to the label rows it needs,
// reporting whether any grew.
func (l *layout) growGaps() bool {
	grew := false
	for li, r := range l.rows {
		if need := r*labelLine + 34; need > l.gaps[li] {
			l.gaps[li], grew = need, true
		}
	}
	return grew
}

// shiftTB is how far across the k-th of n edges leaving a box top to
// bottom leaves from its centre.
func (l *layout) shiftTB(k, n int) int {
	spread := graphNodeW / max(n, 1)
	return (2*k - (n - 1)) * spread / 2
}

func (l *layout) across(ref string) int {
	if l.tb {
		return l.pos[ref][0]
	}
	return l.pos[ref][1]
}

func (l *layout) edge(e definition.Edge, k, n, slot int) GraphEdge {
	from, to := l.pos[e.From], l.pos[e.To]
	gap := l.gaps[l.layerOf[e.From]]
	out := GraphEdge{From: e.From, To: e.To, Label: edgeLabel(e), Mark: l.mark(e), On: edgeOn(e)}
	if l.tb {
		x1, y1 := from[0]+graphNodeW/2, from[1]+graphNodeH
		x2, y2 := to[0]+graphNodeW/2, to[1]
		xm, ym := x1+l.shiftTB(k, n), y1+20+slot*labelLine // labels one under another
		ym = min(ym, y1+gap-12)
		out.Path = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d ", x1, y1, x1, y1+8, xm, ym-12, xm, ym)
		out.LabelX, out.LabelY = xm, ym+4
		if band := l.layerOf[e.From] / l.perBand; band != l.layerOf[e.To]/l.perBand {
			// To a later column: along the gap below, up the channel
			// between the columns, along the gap above the target.
			ch := graphPad + (band+1)*(l.bandWidth+graphGap) - graphGap/2
			above := y2 - min(gap/2, 10)
			out.Path += fmt.Sprintf("L%d,%d L%d,%d L%d,%d L%d,%d", ch, ym, ch, above, x2, above, x2, y2)
			return out
		}
		out.Path += l.through(e, xm, ym, x2, y2)
		return out
	}
	x1, y1 := from[0]+graphNodeW, from[1]+graphNodeH/2
	x2, y2 := to[0], to[1]+graphNodeH/2
	xm, ym := x1+gap/2, slot
	out.Path = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d ", x1, y1, x1+gap/4, y1, x1+gap/4, ym, xm, ym)
	out.Path += l.through(e, xm, ym, x2, y2)
	out.LabelX, out.LabelY = xm, ym-4
	return out
}

// through is the rest of an edge's path, from its label's point (xm,
// ym) to its target's side (x2, y2): a curve, and for an edge that
// skips layers a straight run through each layer in between along a lane
// no box takes, so that no box hides the edge.
func (l *layout) through(e definition.Edge, xm, ym, x2, y2 int) string {
	var b strings.Builder
	// Along and across the flow.
	pa, pc, ta, tc := xm, ym, x2, y2
	if l.tb {
		pa, pc, ta, tc = ym, xm, y2, x2
	}
	boxAlong, boxAcross := graphNodeW, graphNodeH
	if l.tb {
		boxAlong, boxAcross = graphNodeH, graphNodeW
	}
	pt := func(a, c int) (int, int) {
		if l.tb {
			return c, a
		}
		return a, c
	}
	curve := func(a, c int) {
		reach := max(12, (a-pa)/2)
		x1, y1 := pt(pa+reach, pc)
		x2, y2 := pt(a-reach, c)
		x3, y3 := pt(a, c)
		fmt.Fprintf(&b, "C%d,%d %d,%d %d,%d ", x1, y1, x2, y2, x3, y3)
		pa, pc = a, c
	}
	lf, lt := l.layerOf[e.From], l.layerOf[e.To]
	for li := lf + 1; li < lt; li++ {
		// Aim for the straight line from here to the target.
		frac := float64(l.alongAt[li]-pa) / float64(max(ta-pa, 1))
		want := pc + int(frac*float64(tc-pc))
		lane := l.lane(li, want, boxAcross)
		start, end := l.alongAt[li]-8, l.alongAt[li]+boxAlong+8
		curve(start, lane)
		x, y := pt(end, lane)
		fmt.Fprintf(&b, "L%d,%d ", x, y)
		pa = end
	}
	curve(ta, tc)
	return strings.TrimSpace(b.String())
}

// lane is the place across the flow nearest want that no box of layer li
// covers (with a margin): before its first box, between two, or after
// its last.
func (l *layout) lane(li, want, boxAcross int) int {
	var spans [][2]int
	for _, ref := range l.layers[li] {
		c := l.across(ref)
		spans = append(spans, [2]int{c, c + boxAcross})
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	const margin = 5
	free := func(c int) bool {
		for _, s := range spans {
			if c > s[0]-margin && c < s[1]+margin {
				return false
			}
		}
		return true
	}
	if free(want) {
		return want
	}
	gap := graphRowGap
	if l.tb {
		gap = graphGap / 2
	}
	cands := []int{spans[0][0] - gap/2, spans[len(spans)-1][1] + gap/2}
	for i := 0; i+1 < len(spans); i++ {
		cands = append(cands, (spans[i][1]+spans[i+1][0])/2)
	}
	best := cands[0]
	for _, c := range cands {
		if free(c) && abs(c-want) < abs(best-want) {
			best = c
		}
	}
	return best
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// mark is how the edge resolved, as its target recorded it.
func (l *layout) mark(e definition.Edge) string {
	if n := l.nodes[e.To]; n != nil {
		if m, ok := n.Inbound[engine.EdgeID(e)]; ok {
			return string(m)
		}
	}
	return "pending"
}

// edgeLabel is what an edge shows: its outcome unless it is success, or
// its choice condition.
func edgeLabel(e definition.Edge) string {
	if e.Choice != nil {
		return choiceLabel(e.Choice)
	}
	if e.On != "" && e.On != definition.OutcomeSuccess {
		return string(e.On)
	}
	return ""
}

// edgeOn says in words when the edge fires.
func edgeOn(e definition.Edge) string {
	if e.Choice != nil {
		if e.Choice.Default {
			return "by default"
		}
		return "when " + e.Choice.When
	}
	return "on " + string(cmpOr(e.On, definition.OutcomeSuccess))
}

func cmpOr(o, def definition.Outcome) definition.Outcome {
	if o == "" {
		return def
	}
	return o
}

// tagRoom is the room before the first layer for the tags above boxes.
func tagRoom(m *definition.Manifest) int {
	for i := range m.Steps {
		if graphTags(&m.Steps[i]) != "" || m.Steps[i].Type == definition.TypeSubworkflow {
			return 12
		}
	}
	return 0
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

// orderLayer sorts a layer by the mean position of each step's
// predecessors across the flow, keeping the topological order among
// equals.
func orderLayer(layer []string, preds map[string][]string, pos map[string][2]int, tb bool) {
	axis := 1
	if tb {
		axis = 0
	}
	centre := map[string]float64{}
	for _, ref := range layer {
		sum, n := 0, 0
		for _, p := range preds[ref] {
			if xy, ok := pos[p]; ok {
				sum, n = sum+xy[axis], n+1
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

func choiceLabel(b *definition.Branch) string {
	if b.Default {
		return "default"
	}
	if len([]rune(b.When)) > 24 {
		return string([]rune(b.When)[:23]) + "…"
	}
	return b.When
}

// ViewBox is the SVG viewBox attribute of the graph.
func (g RunGraph) ViewBox() string { return fmt.Sprintf("0 0 %d %d", g.Width, g.Height) }

// edgeName is an edge's accessible name: where it goes, when it fires,
// how it resolved.
func edgeName(e GraphEdge) string {
	return strings.Join([]string{e.From + " → " + e.To, e.On, e.Mark}, ", ")
}
