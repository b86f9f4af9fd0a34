package steps_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ductor/ductor/app/steps"
)

// A step worker builds one executor at start-up, registers its handlers,
// and executes each dispatched attempt.
func ExampleExecutor_Execute() {
	reg := steps.NewRegistry()
	_ = reg.Register("greet", func(_ context.Context, c steps.Call) (any, error) {
		name, _ := c.Input.(map[string]any)["name"].(string)
		if name == "" {
			return nil, steps.Permanent(fmt.Errorf("no name to greet"))
		}
		return map[string]any{"greeting": "hello " + name, "key": c.IdempotencyKey}, nil
	})
	x := steps.NewExecutor(reg, steps.HTTPOptions{})

	req := steps.Request{
		TenantID: "t1", RunID: "r1", Node: "greet", Ref: "greet", Type: "task", Attempt: 1,
		IdempotencyKey: "r1:greet", Timeout: time.Minute,
		Params: map[string]any{"handler": "greet", "input": map[string]any{"name": "Ada"}},
	}
	out, err := x.Execute(context.Background(), req)
	fmt.Println(out, err)

	req.Params["input"] = map[string]any{}
	out, err = x.Execute(context.Background(), req)
	fmt.Println(out, err.Code, err.Retryable, err.Message)

	req.Params = map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}
	req.Type = "http"
	_, err = x.Execute(context.Background(), req)
	fmt.Println(err.Code, err.Retryable)
	// Output:
	// map[greeting:hello Ada key:r1:greet] <nil>
	// <nil> task_failed false no name to greet
	// ssrf_blocked false
}
