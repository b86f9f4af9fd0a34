// Package sdk is Ductor's Go bridge SDK. It talks only to Ductor's HTTP
// API (/api/v1), never to its database, so it runs anywhere an API key
// reaches the server.
//
// A [Client] publishes definitions built as Go values (the [Definition]
// model marshals to the same JSON document a user would write in a file),
// starts runs, reads them, and sends signals and events.
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
//	c := sdk.New("https://ductor.example.com", os.Getenv("DUCTOR_API_KEY"))
//	w := c.NewWorker(sdk.WorkerOptions{Queue: "default", Concurrency: 8})
//	w.Handle("payments.charge", func(ctx context.Context, t sdk.Task) (any, error) {
//		var in struct{ Amount int }
//		if err := t.Decode(&in); err != nil {
//			return nil, sdk.Permanent(err)
//		}
//		return map[string]any{"charged": in.Amount}, nil
//	})
//	err := w.Run(ctx) // until ctx ends, then drains in-flight tasks
package sdk
