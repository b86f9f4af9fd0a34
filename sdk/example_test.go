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

// Triggers and flow control are fields of the definition; a step's pool,
// partial join and end_run are set by its methods.
func ExampleDefinition_flowControl() {
	d := sdk.Definition{
		Key: "orders",
		Triggers: []sdk.Trigger{
			sdk.OnSchedule(sdk.ScheduleTrigger{ID: "nightly", Cron: "0 2 * * *", Timezone: "Europe/Paris", CatchupWindow: 2 * time.Hour}),
			sdk.OnEvent("order.placed", "event.total > 100.0"),
		},
		Concurrency: []sdk.Concurrency{{KeyExpr: "input.customer", Limit: 1}},
		RateLimit:   &sdk.Rate{KeyExpr: "input.customer", Limit: 10, Period: time.Minute},
		Steps: []sdk.Step{
			sdk.TaskStep("charge", sdk.TaskWith{Handler: "payments.charge"}).Limited(`"psp"`, 5),
			sdk.TaskStep("notify", sdk.TaskWith{Handler: "mail.send"}),
			sdk.TransformStep("done", `"ok"`).JoinN(1, true).EndsRun("succeeded"),
		},
		Edges: []sdk.Edge{sdk.Then("charge", "done"), sdk.Then("notify", "done")},
	}
	for _, part := range []any{d.Triggers, d.Concurrency, d.RateLimit, d.Steps[0], d.Steps[2]} {
		raw, _ := json.Marshal(part)
		fmt.Println(string(raw))
	}
	// Output:
	// [{"schedule":{"catchup_window":"2h0m0s","cron":"0 2 * * *","id":"nightly","timezone":"Europe/Paris"}},{"event":"order.placed","filter_expr":"event.total \u003e 100.0"}]
	// [{"key_expr":"input.customer","limit":1}]
	// {"key_expr":"input.customer","limit":10,"period":"1m0s"}
	// {"ref":"charge","type":"task","with":{"handler":"payments.charge"},"concurrency":{"key_expr":"\"psp\"","limit":5}}
	// {"ref":"done","type":"transform","with":{"expr":"\"ok\""},"end_run":"succeeded","join":{"at_least":1,"cancel_rest":true}}
}

// Cancel every waiting run of a definition in one bulk operation, and
// follow it to its end.
func ExampleClient_CancelRuns() {
	ctx := context.Background()
	c, err := sdk.New(os.Getenv("DUCTOR_URL"), os.Getenv("DUCTOR_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	b, err := c.CancelRuns(ctx, sdk.BatchRuns{
		Filter: &sdk.RunQuery{Status: "waiting", Definition: "orders", Attributes: map[string]any{"region": "eu"}},
		Reason: "region closed",
	})
	if err != nil {
		log.Fatal(err)
	}
	b, err = c.WaitBatch(ctx, b.ID, time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d cancelled, %d not: %v\n", b.Done, b.Failed, b.Errors)
}

// A run started with a context carrying a trace joins that trace; a
// handler's context carries its task's, so the runs it starts join its
// run's trace.
func ExampleContextWithTrace() {
	ctx := sdk.ContextWithTrace(context.Background(), sdk.Trace{Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
	t, _ := sdk.TraceFromContext(ctx)
	fmt.Println(t.TraceID())
	// c.StartRun(ctx, …) sends it as the traceparent header.
	// Output: 0af7651916cd43dd8448eb211c80319c
}
