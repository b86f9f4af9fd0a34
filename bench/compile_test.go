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
func BenchmarkCompile(b *testing.B) {
	const steps, rounds = 1000, 5
	doc := thousandSteps(b, steps)
	if _, err := definition.Compile(doc, definition.FormatJSON); err != nil {
		b.Fatalf("compile: %v", err) // also warms the shared CEL environment
	}
	var ms []float64
	b.ResetTimer()
	for range b.N {
		for range rounds {
			start := time.Now()
			if _, err := definition.Compile(doc, definition.FormatJSON); err != nil {
				b.Fatal(err)
			}
			ms = append(ms, float64(time.Since(start))/float64(time.Millisecond))
		}
	}
	b.StopTimer()
	s := spreadOf(ms)
	b.ReportMetric(s.median, "compile-ms")
	record(b, "compile", "compile a %d-step definition: %.1f ms median [%.1f–%.1f] over %d compiles (goal ≤ 50 ms: %s)",
		steps, s.median, s.min, s.max, len(ms), verdict(s.median <= 50))
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
