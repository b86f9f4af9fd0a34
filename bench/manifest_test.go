package bench

import (
	"fmt"

	"github.com/ductor/ductor/app/definition"
)

// The compiler's defaults, written out: manifests here are built by hand.

func taskStep(ref string) definition.Step {
	return definition.Step{
		Ref: ref, Type: definition.TypeTask, With: map[string]any{"handler": "builtin.noop"},
		Join: definition.JoinAll, OnError: definition.OnErrorFail, TimeoutMS: 60_000,
		Retry: definition.RetryPolicy{MaxAttempts: 3, InitialIntervalMS: 10, BackoffCoefficient: 2, MaxIntervalMS: 100},
	}
}

// markedOne is a one-step chain whose task notes when its handler ran
// (markHandler), the moment a trigger's step really starts.
func markedOne(key string) *definition.Manifest {
	st := taskStep(ref(0))
	st.With = map[string]any{"handler": markHandlerName}
	return chain(key, []definition.Step{st})
}

func transformStep(ref, expr string) definition.Step {
	return definition.Step{
		Ref: ref, Type: definition.TypeTransform, With: map[string]any{"expr": expr},
		Join: definition.JoinAll, OnError: definition.OnErrorFail, Retry: definition.RetryPolicy{MaxAttempts: 1},
	}
}

// ref names step i so that refs sort in chain order.
func ref(i int) string { return fmt.Sprintf("s%04d", i) }

// chain links steps one after another, in the order given.
func chain(key string, steps []definition.Step) *definition.Manifest {
	m := &definition.Manifest{Key: key, Steps: steps, Entrypoints: []string{steps[0].Ref}}
	for i, st := range steps {
		m.Order = append(m.Order, st.Ref)
		if i > 0 {
			m.Edges = append(m.Edges, definition.Edge{From: steps[i-1].Ref, To: st.Ref, On: definition.OutcomeSuccess})
		}
	}
	return m
}

func taskChain(key string, n int) *definition.Manifest {
	steps := make([]definition.Step, n)
	for i := range steps {
		steps[i] = taskStep(ref(i))
	}
	return chain(key, steps)
}

func transformChain(key string, n int) *definition.Manifest {
	steps := make([]definition.Step, n)
	for i := range steps {
		steps[i] = transformStep(ref(i), fmt.Sprintf("%d", i))
	}
	return chain(key, steps)
}

// scatter is one inline scatter of no-op tasks over input.items.
func scatter(key string, limit int) *definition.Manifest {
	st := definition.Step{
		Ref: "fan", Type: definition.TypeScatter, Join: definition.JoinAll, OnError: definition.OnErrorFail,
		Retry: definition.RetryPolicy{MaxAttempts: 1},
		With: map[string]any{
			"items_expr":          "input.items",
			"max_inline_children": limit,
			"do":                  map[string]any{"type": "task", "with": map[string]any{"handler": "builtin.noop"}},
		},
	}
	m := chain(key, []definition.Step{st})
	m.Limits.MaxInlineChildren = limit
	return m
}
