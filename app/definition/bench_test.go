package definition

import (
	"fmt"
	"strings"
	"testing"
)

// bigDocument is a 1,000-step definition in which every step has its own
// expressions: a chain of tasks, transforms, conditions and http calls,
// with run_if on every fifth step and a done edge every tenth.
func bigDocument(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"key":"big","steps":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(bigStep(i))
	}
	b.WriteString(`],"edges":[`)
	for i := 1; i < n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		on := "success"
		if (i-1)%4 == 2 {
			on = "true"
		}
		fmt.Fprintf(&b, `{"from":"s%04d","to":"s%04d","on":%q}`, i-1, i, on)
		if i%10 == 0 && i >= 2 && (i-2)%4 != 2 {
			fmt.Fprintf(&b, `,{"from":"s%04d","to":"s%04d","on":"done"}`, i-2, i)
		}
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func bigStep(i int) string {
	runIf := ""
	if i%5 == 0 {
		runIf = fmt.Sprintf(`,"run_if":"input.n != %d"`, i)
	}
	prev := fmt.Sprintf("s%04d", max(i-1, 0))
	switch i % 4 {
	case 0:
		return fmt.Sprintf(`{"ref":"s%04d","type":"task","with":{"handler":"h%d","input_expr":"{\"n\": input.n + %d.0}"}%s}`, i, i, i, runIf)
	case 1:
		return fmt.Sprintf(`{"ref":"s%04d","type":"transform","with":{"expr":"{\"v\": steps.%s.output, \"i\": %d}"}%s}`, i, prev, i, runIf)
	case 2:
		return fmt.Sprintf(`{"ref":"s%04d","type":"condition","with":{"expr":"steps.%s.output.i == %d"}%s}`, i, prev, i-1, runIf)
	}
	return fmt.Sprintf(`{"ref":"s%04d","type":"http","with":{"url_expr":"\"https://x.test/\" + string(%d)","method":"POST"}%s}`, i, i, runIf)
}

func TestBigDocumentCompiles(t *testing.T) {
	t.Parallel()
	c, err := Compile(bigDocument(MaxSteps), FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Manifest.Steps) != MaxSteps || len(c.Manifest.Entrypoints) != 1 {
		t.Fatalf("steps %d, entrypoints %v", len(c.Manifest.Steps), c.Manifest.Entrypoints)
	}
	checkOrder(t, c.Manifest)
}

// BenchmarkCompile1000Steps compiles a 1,000-step definition with about
// 1,200 distinct CEL expressions (the goal is under 50 ms).
func BenchmarkCompile1000Steps(b *testing.B) {
	doc := bigDocument(MaxSteps)
	c, err := NewCompiler(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := c.Compile(doc, FormatJSON); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCEL1200Expressions is the baseline for the benchmark above,
// measured in the same run: the same distinct expressions compiled one
// after the other with nothing else.
func BenchmarkCEL1200Expressions(b *testing.B) {
	tree, err := parse(bigDocument(MaxSteps), FormatJSON)
	if err != nil {
		b.Fatal(err)
	}
	ch := newChecker(DefaultOptions())
	ch.document(tree)
	keys, _ := distinct(ch.exprs)
	env, err := sharedEnv()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(keys)), "exprs")
	for b.Loop() {
		for _, k := range keys {
			if _, err := env.Compile(k.src, k.kind); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCompile1000StepsCached is a republish: expression programs
// come from a shared cache.
func BenchmarkCompile1000StepsCached(b *testing.B) {
	doc := bigDocument(MaxSteps)
	opts := DefaultOptions()
	env, err := sharedEnv()
	if err != nil {
		b.Fatal(err)
	}
	opts.Cache = exprCache(env)
	c, err := NewCompiler(opts)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.Compile(doc, FormatJSON); err != nil {
			b.Fatal(err)
		}
	}
}
