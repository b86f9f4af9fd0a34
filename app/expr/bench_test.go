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
