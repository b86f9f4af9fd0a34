package bench

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ductor/ductor/app/definition"
)

// BenchmarkCompile compiles a 1,000-step definition (goal ≤ 50 ms): a
// chain alternating no-op tasks and transforms that read their
// predecessor's output, so every expression is checked against the graph.
// Each measured compile uses a compiler with an empty expression cache (a
// first publish); recompiling with the shared cache (an editor's next
// keystroke, a republish) is reported beside it.
func BenchmarkCompile(b *testing.B) {
	const steps, rounds = 1000, 5
	doc := thousandSteps(b, steps)
	if _, err := definition.Compile(doc, definition.FormatJSON); err != nil {
		b.Fatalf("compile: %v", err) // also warms the shared CEL environment and cache
	}
	var cold, warm []float64
	b.ResetTimer()
	for range b.N {
		for range rounds {
			fresh, err := definition.NewCompiler(definition.DefaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			cold = append(cold, timeCompile(b, func() error { _, err := fresh.Compile(doc, definition.FormatJSON); return err }))
			warm = append(warm, timeCompile(b, func() error { _, err := definition.Compile(doc, definition.FormatJSON); return err }))
		}
	}
	b.StopTimer()
	s, w := spreadOf(cold), spreadOf(warm)
	b.ReportMetric(s.median, "compile-ms")
	b.ReportMetric(w.median, "recompile-ms")
	record(b, "compile", "compile a %d-step definition: %.1f ms median [%.1f–%.1f] over %d cold compiles, %.1f ms recompiling with the shared cache (goal ≤ 50 ms: %s)",
		steps, s.median, s.min, s.max, len(cold), w.median, verdict(s.median <= 50))
}

func timeCompile(b *testing.B, compile func() error) float64 {
	start := time.Now()
	if err := compile(); err != nil {
		b.Fatal(err)
	}
	return float64(time.Since(start)) / float64(time.Millisecond)
}

func thousandSteps(b *testing.B, n int) []byte {
	b.Helper()
	var steps, edges []map[string]any
	for i := range n {
		st := map[string]any{"ref": ref(i), "type": "task", "with": map[string]any{"handler": "builtin.noop"}}
		if i%2 == 1 {
			expr := fmt.Sprintf(`{"i": %d, "prev": steps.%s.output}`, i, ref(i-1))
			st = map[string]any{"ref": ref(i), "type": "transform", "with": map[string]any{"expr": expr}}
		}
		steps = append(steps, st)
		if i > 0 {
			edges = append(edges, map[string]any{"from": ref(i - 1), "to": ref(i)})
		}
	}
	doc, err := json.Marshal(map[string]any{"key": "thousand", "steps": steps, "edges": edges})
	if err != nil {
		b.Fatal(err)
	}
	return doc
}
