package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/jsonvalue"
)

// A value means the same on every tick. For random inputs and a corpus of
// expressions, each expression is evaluated on state fresh from the tick
// that produced it (a transform, a worker's result) and on the same state
// after a trip through the JSON the store writes and reads back; the
// results (output or error) must be identical.

// producers make the value the expressions look at, from input.v.
var producers = []string{
	"input.v",
	"{'v': input.v, 'at': now, 'n': [1, 2.0, -0.5]}",
	"[input.v, input.v]",
	"type(input.v) == int || type(input.v) == double ? input.v * 2 : input.v",
	"type(input.v) == int ? input.v + 0.5 : 1.0",
	"type(input.v) == double ? input.v / 2.0 : 7",
	"duration('90s')",
	"uint(3)",
	"b'abc'",
}

// probes read steps.p.output (x below).
var probes = []string{
	"x",
	"type(x)",
	"string(x)",
	"x == 2",
	"x == 2.0",
	"x < 1.5",
	"x > 0",
	"x * 2",
	"x + 1",
	"x + 0.5",
	"x / 3",
	"x / 3.0",
	"int(x)",
	"double(x)",
	"x.size()",
	"[x, 1][0]",
	"{'k': x}",
	"x.v * 10",
	"x.v / 3",
	"x.n.map(e, e * 2)",
	"x[0] + x[1]",
	"x.at",
	"timestamp(x.at) < now",
	"has(x.v) ? string(x.v) : 'none'",
}

func reloadManifest(reload bool) string {
	var b strings.Builder
	b.WriteString("step p transform expr=`" + "PRODUCER" + "`\n")
	b.WriteString("step t task handler=h input_expr=`steps.p.output`\n")
	b.WriteString("edge p t\n")
	from := "t"
	if reload {
		b.WriteString("step w signal name=go\nedge t w\n")
		from = "w"
	}
	for i, q := range probes {
		for _, src := range []string{"p", "t"} {
			expr := strings.ReplaceAll(q, "x", "steps."+src+".output")
			expr = strings.ReplaceAll(expr, "steps."+src+".output.size", "size(steps."+src+".output)")
			fmt.Fprintf(&b, "step q%s%d transform expr=`%s` on_error=continue\nedge %s q%s%d\n", src, i, expr, from, src, i)
		}
	}
	return b.String()
}

// reloaded passes the sim's run and nodes through the store's encoding.
func reloaded(t *testing.T, s *sim) {
	t.Helper()
	b, err := jsonvalue.Marshal(s.run)
	if err != nil {
		t.Fatal(err)
	}
	var run Run
	if err := jsonvalue.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	s.run = run
	for id, n := range s.nodes {
		b, err := jsonvalue.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		var back Node
		if err := jsonvalue.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		s.nodes[id] = &back
	}
}

// runProbes runs the producer and every probe, with a worker echoing the
// task's input (as it arrives from JSON), and returns the probe nodes.
func runProbes(t *testing.T, producer string, input any, reload bool) map[string]*Node {
	t.Helper()
	m, err := parseManifest(strings.Replace(reloadManifest(reload), "PRODUCER", producer, 1))
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, m, input)
	if reload {
		reloaded(t, s)
	}
	s.tick(t0, 1)
	var echo any
	for _, d := range s.decided {
		for _, c := range d.Commands {
			if da, ok := c.(DispatchAttempt); ok {
				echo = viaJSON(t, da.Params["input"])
			}
		}
	}
	s.tick(t0.Add(1e9), 2, StepResult{Node: "t", Attempt: 1, Output: echo})
	if reload {
		reloaded(t, s)
		s.tick(t0.Add(2e9), 3, SignalReceived{Signal: Signal{RequestID: "r", Name: "go"}})
	}
	out := map[string]*Node{}
	for id, n := range s.nodes {
		if strings.HasPrefix(id, "q") {
			out[id] = n
		}
	}
	if len(out) != 2*len(probes) {
		t.Fatalf("%d probes ran, want %d (run %s %+v)", len(out), 2*len(probes), s.run.Status, s.run.Error)
	}
	return out
}

func viaJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := jsonvalue.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func TestPropertyExpressionsMeanTheSameAfterReload(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(16, 53))
	n := 60
	if testing.Short() {
		n = 10
	}
	for i := range n {
		input := viaJSON(t, map[string]any{"v": propertyValue(r, 0)})
		producer := producers[i%len(producers)]
		fresh := runProbes(t, producer, input, false)
		again := runProbes(t, producer, input, true)
		for id, f := range fresh {
			g := again[id]
			if f.State != g.State || !reflect.DeepEqual(f.Output, g.Output) || !reflect.DeepEqual(f.Error, g.Error) {
				t.Fatalf("input %s, producer %s, %s: fresh %s %#v %+v; reloaded %s %#v %+v",
					js(input), producer, id, f.State, f.Output, f.Error, g.State, g.Output, g.Error)
			}
		}
	}
}

// propertyValue draws a JSON value with the numbers that used to change
// kind on a trip through the database.
func propertyValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(10); {
	case k == 0:
		return nil
	case k == 1:
		return r.IntN(2) == 0
	case k == 2:
		return []string{"", "a", "2", "2.0", "é"}[r.IntN(5)]
	case k == 3:
		return []int64{0, 2, -7, 1 << 53, 1<<53 + 1, math.MaxInt64, math.MinInt64}[r.IntN(7)]
	case k == 4:
		return []float64{2.0, 0.5, -1.25, 1e21, 1e-7, 9007199254740993.0, float64(r.IntN(100))}[r.IntN(7)]
	case k == 5:
		return r.NormFloat64() * 1000
	case k <= 7 && depth < 2:
		m := map[string]any{}
		for j := range r.IntN(3) + 1 {
			m[fmt.Sprintf("k%d", j)] = propertyValue(r, depth+1)
		}
		m["v"] = propertyValue(r, depth+1)
		return m
	case depth < 2:
		l := []any{}
		for range r.IntN(3) + 1 {
			l = append(l, propertyValue(r, depth+1))
		}
		return l
	}
	return int64(r.IntN(10))
}
