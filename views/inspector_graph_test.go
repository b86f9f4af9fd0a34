package views

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
)

// manifestOf compiles a document for the layout tests.
func manifestOf(t *testing.T, doc string) *definition.Manifest {
	t.Helper()
	c, err := definition.Compile([]byte(doc), definition.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	return c.Manifest
}

// chainDoc is a chain of n steps.
func chainDoc(n int) string {
	doc := "key: deep\nsteps:\n"
	for i := range n {
		doc += fmt.Sprintf("  - { ref: s%d, type: transform, with: { expr: '1' } }\n", i)
	}
	doc += "edges:\n"
	for i := 0; i+1 < n; i++ {
		doc += fmt.Sprintf("  - { from: s%d, to: s%d, on: done }\n", i, i+1)
	}
	return doc
}

const choiceDoc = `
key: pick
steps:
  - { ref: route, type: transform, with: { expr: 'input.kind' } }
  - { ref: small, type: transform, with: { expr: '1' } }
  - { ref: large, type: transform, with: { expr: '2' } }
  - { ref: other, type: transform, with: { expr: '3' } }
  - { ref: fallback, type: transform, with: { expr: '4' } }
edges:
  - from: route
    choice:
      - { when: 'steps.route.output == "small-and-rather-long"', to: small }
      - { when: 'steps.route.output == "large"', to: large }
      - { default: true, to: other }
  - { from: route, to: fallback, on: error }
`

// Edge labels sit in the gap after their source, where no box is, and
// never on one another, in both layouts.
func TestGraphLabelsNeverCoverNodes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ dir, doc string }{{LayoutLR, choiceDoc}, {LayoutTB, choiceDoc}, {LayoutTB, deepChoiceDoc()}} {
		dir := c.dir
		g := LayoutRun(manifestOf(t, c.doc), nil, dir)
		labels := 0
		for i, e := range g.Edges {
			if e.Label == "" {
				continue
			}
			labels++
			w := len([]rune(e.Label)) * labelChar
			lx, ly := e.LabelX-w/2, e.LabelY-11
			for _, n := range g.Nodes {
				if lx < n.X+graphNodeW && lx+w > n.X && ly < n.Y+graphNodeH && ly+13 > n.Y {
					t.Errorf("%s: label %q at (%d,%d) covers box %s at (%d,%d)", dir, e.Label, e.LabelX, e.LabelY, n.Ref, n.X, n.Y)
				}
			}
			for _, o := range g.Edges[i+1:] {
				ow := len([]rune(o.Label)) * labelChar
				if o.Label != "" && lx < o.LabelX+ow/2 && lx+w > o.LabelX-ow/2 && ly < o.LabelY+2 && ly+13 > o.LabelY-11 {
					t.Errorf("%s: labels %q (%s→%s at %d,%d) and %q (%s→%s at %d,%d) overlap", dir, e.Label, e.From, e.To, e.LabelX, e.LabelY, o.Label, o.From, o.To, o.LabelX, o.LabelY)
				}
			}
		}
		if labels < 4 {
			t.Errorf("%s: %d labels, want at least 4 (three branches and the error edge)", dir, labels)
		}
	}
}

// A deep graph is laid out top to bottom unless asked otherwise, in
// columns that make it about twice as wide as tall (not a strip); a
// shallow one left to right.
func TestDeepGraphsGoTopToBottom(t *testing.T) {
	t.Parallel()
	deep := LayoutRun(manifestOf(t, chainDoc(30)), nil, "")
	ratio := float64(deep.Width) / float64(deep.Height)
	if deep.Layout != LayoutTB || deep.Depth != 30 || deep.Bands < 3 || ratio < 1.2 || ratio > 3 {
		t.Errorf("30 steps: layout %s, %d layers in %d columns, %d×%d; want top to bottom in columns about 2:1", deep.Layout, deep.Depth, deep.Bands, deep.Width, deep.Height)
	}
	seen := map[[2]int]bool{}
	for _, n := range deep.Nodes {
		if seen[[2]int{n.X, n.Y}] {
			t.Fatalf("two boxes at %d,%d", n.X, n.Y)
		}
		seen[[2]int{n.X, n.Y}] = true
	}
	if g := LayoutRun(manifestOf(t, chainDoc(30)), nil, LayoutLR); g.Layout != LayoutLR || g.Width <= g.Height {
		t.Errorf("asked left to right: %s %d×%d", g.Layout, g.Width, g.Height)
	}
	if g := LayoutRun(manifestOf(t, choiceDoc), nil, ""); g.Layout != LayoutLR {
		t.Errorf("a shallow graph is laid out %s", g.Layout)
	}
}

// Each edge says how it resolved, from its target's inbound marks.
func TestGraphEdgesCarryTheirResolution(t *testing.T) {
	t.Parallel()
	m := manifestOf(t, choiceDoc)
	nodes := map[string]*engine.Node{"route": {ID: "route", State: engine.NodeSucceeded}}
	for _, e := range m.Edges {
		n := nodes[e.To]
		if n == nil {
			n = &engine.Node{ID: e.To, State: engine.NodeSkipped, Inbound: map[string]engine.EdgeMark{}}
			nodes[e.To] = n
		}
		if e.To == "large" {
			n.Inbound[engine.EdgeID(e)] = engine.EdgeFired
		} else if e.To != "fallback" {
			n.Inbound[engine.EdgeID(e)] = engine.EdgeDead
		}
	}
	marks := map[string]string{}
	for _, e := range LayoutRun(m, nodes, "").Edges {
		marks[e.To] = e.Mark
	}
	want := map[string]string{"large": "fired", "small": "dead", "other": "dead", "fallback": "pending"}
	for to, mark := range want {
		if marks[to] != mark {
			t.Errorf("edge to %s is %q, want %q", to, marks[to], mark)
		}
	}
}

// deepChoiceDoc is a long chain with labelled edges all along and the
// choice group at its start: laid out in columns.
func deepChoiceDoc() string {
	doc := strings.Replace(choiceDoc, "edges:\n", "", 1)
	doc = strings.Replace(doc, "key: pick\nsteps:\n", "key: pick\nsteps:\n", 1)
	var steps, edges strings.Builder
	for i := range 20 {
		fmt.Fprintf(&steps, "  - { ref: s%d, type: transform, with: { expr: '1' } }\n", i)
		from := "fallback"
		if i > 0 {
			from = fmt.Sprintf("s%d", i-1)
		}
		fmt.Fprintf(&edges, "  - { from: %s, to: s%d, on: done }\n", from, i)
	}
	i := strings.Index(doc, "  - from: route")
	return doc[:i] + steps.String() + "edges:\n" + doc[i:] + edges.String()
}

// choice4Doc has two choices of four branches side by side, long
// conditions among them, and edges that skip a layer past boxes.
const choice4Doc = `
key: pick4
steps:
  - { ref: start, type: transform, with: { expr: '1' } }
  - { ref: route, type: transform, with: { expr: 'input.kind' } }
  - { ref: route2, type: transform, with: { expr: 'input.kind' } }
  - { ref: a, type: transform, with: { expr: '1' } }
  - { ref: b, type: transform, with: { expr: '2' } }
  - { ref: c, type: transform, with: { expr: '3' } }
  - { ref: d, type: transform, with: { expr: '4' } }
  - { ref: e, type: transform, with: { expr: '5' } }
  - { ref: end, type: transform, with: { expr: '6' } }
edges:
  - { from: start, to: route }
  - { from: start, to: route2 }
  - { from: start, to: end, on: error }
  - from: route
    choice:
      - { when: 'steps.route.output == "small-and-rather-long"', to: a }
      - { when: 'steps.route.output == "large"', to: b }
      - { when: 'steps.route.output == "medium"', to: c }
      - { default: true, to: d }
  - from: route2
    choice:
      - { when: 'steps.route2.output > 10', to: e }
      - { when: 'steps.route2.output < 0', to: d }
      - { when: 'steps.route2.output == 3', to: a }
      - { default: true, to: b }
  - { from: route, to: end, on: error }
  - { from: route2, to: c, on: error }
  - { from: a, to: end }
  - { from: e, to: end }
`

// labelBox is where a label's text is drawn: centred on LabelX, its
// baseline at LabelY.
func labelBox(e GraphEdge) [4]int {
	w := len([]rune(e.Label)) * labelChar
	return [4]int{e.LabelX - w/2, e.LabelY - 11, e.LabelX + w/2, e.LabelY + 2}
}

func boxesMeet(a, b [4]int) bool { return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3] }

// pathPoints samples an edge's path (M, L and C in absolute numbers).
func pathPoints(t *testing.T, d string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	var cur [2]float64
	f := strings.Fields(strings.NewReplacer("M", " M ", "L", " L ", "C", " C ", ",", " ").Replace(d))
	num := func(i int) float64 {
		var v float64
		if _, err := fmt.Sscan(f[i], &v); err != nil {
			t.Fatalf("path %q: %v", d, err)
		}
		return v
	}
	for i := 0; i < len(f); {
		switch f[i] {
		case "M", "L":
			next := [2]float64{num(i + 1), num(i + 2)}
			for s := 0; s <= 20; s++ {
				u := float64(s) / 20
				out = append(out, [2]float64{cur[0] + (next[0]-cur[0])*u, cur[1] + (next[1]-cur[1])*u})
			}
			if f[i] == "M" {
				out = out[:len(out)-21]
				out = append(out, next)
			}
			cur, i = next, i+3
		case "C":
			p1, p2, p3 := [2]float64{num(i + 1), num(i + 2)}, [2]float64{num(i + 3), num(i + 4)}, [2]float64{num(i + 5), num(i + 6)}
			for s := 0; s <= 40; s++ {
				u := float64(s) / 40
				v := 1 - u
				out = append(out, [2]float64{
					v*v*v*cur[0] + 3*v*v*u*p1[0] + 3*v*u*u*p2[0] + u*u*u*p3[0],
					v*v*v*cur[1] + 3*v*v*u*p1[1] + 3*v*u*u*p2[1] + u*u*u*p3[1],
				})
			}
			cur, i = p3, i+7
		default:
			t.Fatalf("path %q: unexpected %q", d, f[i])
		}
	}
	return out
}

// A choice of four branches beside another: no two labels' boxes
// overlap, none covers a box or leaves the graph, and no edge runs
// under a box other than its ends (a box drawn over it would cut it), in
// both layouts.
func TestGraphChoiceOfFourLabelsApartAndEdgesUnclipped(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{LayoutLR, LayoutTB} {
		g := LayoutRun(manifestOf(t, choice4Doc), nil, dir)
		labels := 0
		for i, e := range g.Edges {
			if e.Label == "" {
				continue
			}
			labels++
			lb := labelBox(e)
			if lb[0] < 0 || lb[1] < 0 || lb[2] > g.Width || lb[3] > g.Height {
				t.Errorf("%s: label %q at %v leaves the %d×%d graph", dir, e.Label, lb, g.Width, g.Height)
			}
			for _, n := range g.Nodes {
				if boxesMeet(lb, [4]int{n.X, n.Y, n.X + graphNodeW, n.Y + graphNodeH}) {
					t.Errorf("%s: label %q covers box %s", dir, e.Label, n.Ref)
				}
			}
			for _, o := range g.Edges[i+1:] {
				if o.Label != "" && boxesMeet(lb, labelBox(o)) {
					t.Errorf("%s: labels %q (%s→%s) at %v and %q (%s→%s) at %v overlap", dir, e.Label, e.From, e.To, lb, o.Label, o.From, o.To, labelBox(o))
				}
			}
		}
		if labels != 11 {
			t.Errorf("%s: %d labels, want 11", dir, labels)
		}
		for _, e := range g.Edges {
			for _, pt := range pathPoints(t, e.Path) {
				if pt[0] < 0 || pt[1] < 0 || pt[0] > float64(g.Width) || pt[1] > float64(g.Height) {
					t.Errorf("%s: edge %s→%s leaves the graph at %v", dir, e.From, e.To, pt)
					break
				}
				hit := ""
				for _, n := range g.Nodes {
					if n.Ref != e.From && n.Ref != e.To && pt[0] > float64(n.X) && pt[0] < float64(n.X+graphNodeW) && pt[1] > float64(n.Y) && pt[1] < float64(n.Y+graphNodeH) {
						hit = n.Ref
					}
				}
				if hit != "" {
					t.Errorf("%s: edge %s→%s runs under box %s at %v", dir, e.From, e.To, hit, pt)
					break
				}
			}
		}
	}
}
