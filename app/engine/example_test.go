package engine_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/expr"
)

// A task followed by a transform: the first tick starts the run and
// dispatches the task; the tick that receives its result evaluates the
// transform inline and ends the run.
func ExampleEngine_Decide() {
	env, _ := expr.NewEnv()
	eng := &engine.Engine{Eval: engine.NewCELEvaluator(expr.NewCache(env, 64))}
	m := &definition.Manifest{
		Key: "demo",
		Steps: []definition.Step{
			{Ref: "fetch", Type: definition.TypeTask, With: map[string]any{"handler": "builtin.echo"},
				Join: definition.JoinAll, OnError: definition.OnErrorFail, Retry: definition.RetryPolicy{MaxAttempts: 1}},
			{Ref: "shape", Type: definition.TypeTransform, With: map[string]any{"expr": `{"got": steps.fetch.output}`},
				Join: definition.JoinAll, OnError: definition.OnErrorFail, Retry: definition.RetryPolicy{MaxAttempts: 1}},
		},
		Edges:       []definition.Edge{{From: "fetch", To: "shape", On: definition.OutcomeSuccess}},
		Entrypoints: []string{"fetch"},
		Order:       []string{"fetch", "shape"},
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := &engine.State{Run: engine.Run{ID: "r1", Status: engine.RunPending, Input: "hello"}}

	d, _ := eng.Decide(context.Background(), m, st, engine.Tick{Now: now})
	st.Apply(d)
	da := d.Commands[0].(engine.DispatchAttempt)
	fmt.Println(d.Run.Status, da.Node, da.Attempt, da.IdempotencyKey)

	res := engine.StepResult{Node: da.Node, Generation: da.Generation, Attempt: da.Attempt, Output: "hello"}
	d, _ = eng.Decide(context.Background(), m, st, engine.Tick{Now: now.Add(time.Second), Inputs: []engine.Input{res}})
	fmt.Println(d.Run.Status, d.Run.Output, d.Run.TransitionCount)
	// Output:
	// running fetch 1 r1:fetch
	// succeeded map[shape:map[got:hello]] 8
}
