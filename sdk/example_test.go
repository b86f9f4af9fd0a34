package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/ductor/ductor/sdk"
)

// A definition is a Go value that marshals to the document a user would
// write in a file; Client.Publish sends it to the server.
func ExampleDefinition() {
	d := sdk.Definition{
		Key:     "orders",
		Timeout: 24 * time.Hour,
		Steps: []sdk.Step{
			sdk.ConditionStep("check", "input.amount > 0.0"),
			sdk.TaskStep("charge", sdk.TaskWith{Handler: "payments.charge", InputExpr: `{"amount": input.amount}`}).
				WithRetry(sdk.Retry{MaxAttempts: 5, InitialInterval: 2 * time.Second}).
				WithTimeout(30 * time.Second),
			sdk.ApprovalStep("review", sdk.ApprovalWith{Approvers: []string{"role:finance"}, Timeout: 72 * time.Hour}),
		},
		Edges: []sdk.Edge{
			sdk.On("check", "charge", sdk.OutcomeTrue),
			sdk.On("check", "review", sdk.OutcomeFalse),
		},
	}
	raw, _ := json.Marshal(d.Steps[1])
	fmt.Println(string(raw))
	raw, _ = json.Marshal(d.Steps[2])
	fmt.Println(string(raw))
	// Output:
	// {"ref":"charge","type":"task","with":{"handler":"payments.charge","input_expr":"{\"amount\": input.amount}"},"retry":{"max_attempts":5,"initial_interval":"2s"},"timeout":"30s"}
	// {"ref":"review","type":"approval","with":{"approvers":["role:finance"],"timeout":"72h0m0s"}}
}

// A worker serves the handlers of task steps that the server does not
// run itself. Run blocks until its context ends, then lets in-flight
// tasks finish.
func ExampleWorker() {
	c, err := sdk.New(os.Getenv("DUCTOR_URL"), os.Getenv("DUCTOR_API_KEY")) // a key with tasks:work
	if err != nil {
		log.Fatal(err)
	}
	w := c.NewWorker(sdk.WorkerOptions{Queue: "default", Concurrency: 8})
	w.Handle("payments.charge", func(ctx context.Context, t sdk.Task) (any, error) {
		var in struct {
			Amount int `json:"amount"`
		}
		if err := t.Decode(&in); err != nil {
			return nil, sdk.Permanent(err) // retrying cannot fix bad input
		}
		// t.IdempotencyKey is the same for every retry of this step: pass
		// it on so the payment provider charges once.
		return map[string]any{"charged": in.Amount, "key": t.IdempotencyKey}, nil
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
}

// Publish a definition, start a run idempotently and wait for its end.
func ExampleClient_StartRun() {
	ctx := context.Background()
	c, err := sdk.New(os.Getenv("DUCTOR_URL"), os.Getenv("DUCTOR_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Publish(ctx, &sdk.Definition{
		Key:   "greet",
		Steps: []sdk.Step{sdk.TaskStep("hello", sdk.TaskWith{Handler: "builtin.echo"})},
	}); err != nil {
		var apiErr *sdk.APIError
		if errors.As(err, &apiErr) && apiErr.Status == 422 {
			log.Fatalf("invalid definition: %s", apiErr.Details)
		}
		log.Fatal(err)
	}
	started, err := c.StartRun(ctx, sdk.StartRun{
		Definition: "greet", Input: map[string]string{"name": "ada"}, IdempotencyKey: "greet-ada",
	})
	if err != nil {
		log.Fatal(err)
	}
	run, err := c.WaitRun(ctx, started.ID, 100*time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Status, string(run.Output))
}
