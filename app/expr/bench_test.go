package expr

import (
	"context"
	"testing"
)

func BenchmarkCompile(b *testing.B) {
	env := newTestEnv(b)
	for b.Loop() {
		if _, err := env.Compile(`{"ok": input.amount > 0, "tier": input.tier}`, KindMap); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvalBool(b *testing.B) {
	env := newTestEnv(b)
	p, err := env.Compile("input.amount > 0 && steps.charge.state == 'succeeded'", KindBool)
	if err != nil {
		b.Fatal(err)
	}
	vars := testVars(b)
	for b.Loop() {
		if _, err := p.EvalBool(context.Background(), vars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvalMap10k shows evaluation stays linear in list length.
func BenchmarkEvalMap10k(b *testing.B) {
	env := newTestEnv(b)
	p, err := env.Compile("input.map(x, x * 2.0)", KindList)
	if err != nil {
		b.Fatal(err)
	}
	vars := Vars{Input: longList(10_000)}
	for b.Loop() {
		if _, err := p.Eval(context.Background(), vars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvalFilterObjects reads a 1,000-object list and fields of
// each element: what a read costs (its size) must stay cheap to count.
func BenchmarkEvalFilterObjects(b *testing.B) {
	env := newTestEnv(b)
	p, err := env.Compile(`input.lines.filter(l, l.qty > 1 && l.sku != "").map(l, l.sku)`, KindList)
	if err != nil {
		b.Fatal(err)
	}
	lines := make([]any, 1000)
	for i := range lines {
		lines[i] = map[string]any{"sku": "sku-0000000000000" + string(rune('a'+i%26)), "qty": int64(i % 5)}
	}
	vars := Vars{Input: map[string]any{"lines": lines}}
	for b.Loop() {
		if _, err := p.Eval(context.Background(), vars); err != nil {
			b.Fatal(err)
		}
	}
}
