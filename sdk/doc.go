// Package sdk is Ductor's Go SDK. It talks only to Ductor's HTTP API
// (/api/v1), never to its database. It is a module of its own
// (github.com/ductor/ductor/sdk, tagged sdk/vX.Y.Z) that needs Go 1.22
// and nothing but the standard library: none of the engine (no CEL, no
// database driver, no River, no compiler) and no tracing library. It
// runs anywhere an API key reaches the server.
//
// A [Client] publishes definitions built as Go values (the [Definition]
// model, with a typed field for every field of the document, a typed
// builder per step type and time.Duration durations, marshals to the
// same JSON document a user would write in a file), starts, lists,
// cancels and retries runs, one by one or in bulk, reads their history,
// sends signals and events, and decides approvals and cases. Calls
// answered 429 or 503 with a Retry-After wait and try again
// ([WithRetryAfter]); StartRun places the run in the caller's trace
// ([ContextWithTrace], [WithTraceInjector]).
//
//	c, err := sdk.New(os.Getenv("DUCTOR_URL"), os.Getenv("DUCTOR_API_KEY"))
//	_, err = c.Publish(ctx, &sdk.Definition{Key: "orders", Steps: []sdk.Step{
//		sdk.TaskStep("charge", sdk.TaskWith{Handler: "payments.charge"}).
//			WithRetry(sdk.Retry{MaxAttempts: 5, InitialInterval: 2 * time.Second}),
//		sdk.WaitStep("cool_off", sdk.WaitWith{Duration: time.Hour}),
//	}, Edges: []sdk.Edge{sdk.Then("charge", "cool_off")}})
//
// A [Worker] runs a tenant's own task handlers. A `task` step whose
// handler the server does not have, or whose queue is not `default`, is
// a bridge task: workers long-poll /api/v1/tasks/poll for their queue and
// handler names, run each task with bounded concurrency, heartbeat while a
// handler runs, and complete or fail it. Execution is at least once: a
// task whose worker stops answering is retried, so handlers should use
// [Task.IdempotencyKey] to recognise a retry of a side effect that
// already happened.
//
//	w := c.NewWorker(sdk.WorkerOptions{Queue: "default", Concurrency: 8})
//	w.Handle("payments.charge", func(ctx context.Context, t sdk.Task) (any, error) {
//		var in struct{ Amount int }
//		if err := t.Decode(&in); err != nil {
//			return nil, sdk.Permanent(err)
//		}
//		return map[string]any{"charged": in.Amount}, nil
//	})
//	err = w.Run(ctx) // until ctx ends, then drains in-flight tasks
package sdk
