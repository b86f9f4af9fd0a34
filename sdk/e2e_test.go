package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/sdk"
	"github.com/ductor/ductor/workers"
)

// startDuctor runs Ductor in-process against a fresh schema (API, River
// workers, sweep and task notifications) and returns its URL and an admin
// key of a new tenant.
func startDuctor(t *testing.T) (string, string) {
	t.Helper()
	pool := testdb.Schema(t)
	log := slog.New(slog.DiscardHandler)
	coord, err := workers.NewCoordinator(pool, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	client, err := workers.NewClient(pool, workers.Options{Coordinator: true, Steps: true, Logger: log, C: coord,
		Executor: steps.NewExecutor(steps.NewRegistry(), steps.HTTPOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(ctx)
	})
	background(t, coord.Sweep, coord.ListenTasks)
	s := store.New(pool)
	srv := httptest.NewServer(server.New(server.Deps{Pool: pool, Store: s, Logger: log, API: true, Runs: coord,
		ValidateInput: server.NewInputValidator()}))
	t.Cleanup(srv.Close)
	_, key := testdb.APIKey(t, s, testdb.Tenant(t, s, nil), nil)
	return srv.URL, key
}

// background runs each function until the test ends.
func background(t *testing.T, fns ...func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, len(fns))
	for _, fn := range fns {
		go func() { fn(ctx); done <- struct{}{} }()
	}
	t.Cleanup(func() {
		cancel()
		for range fns {
			<-done
		}
	})
}

func TestWorkerRunsARemoteTaskEndToEnd(t *testing.T) {
	t.Parallel()
	url, key := startDuctor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.New(url, key)

	v, err := c.Publish(ctx, &sdk.Definition{
		Key: "greet",
		Steps: []sdk.StepDef{
			sdk.TaskStep("hello", "greeter.hello").Set("input_expr", `{"name": input.name}`),
		},
	})
	if err != nil || v.Version != 1 || !v.Created {
		t.Fatalf("publish = %+v, %v", v, err)
	}

	w := c.NewWorker(sdk.WorkerOptions{Queue: "default", Concurrency: 2, Logger: slog.New(slog.DiscardHandler)})
	keys := make(chan string, 1)
	w.Handle("greeter.hello", func(ctx context.Context, task sdk.Task) (any, error) {
		var in struct{ Name string }
		if err := task.Decode(&in); err != nil {
			return nil, sdk.Permanent(err)
		}
		keys <- task.IdempotencyKey
		return map[string]string{"greeting": "hello, " + in.Name}, nil
	})
	workerCtx, stopWorker := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(workerCtx) }()

	start := sdk.StartRun{Definition: "greet", Input: map[string]string{"name": "ada"}, IdempotencyKey: "greet-ada"}
	started, err := c.StartRun(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.WaitRun(ctx, started.ID, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]map[string]string // by step
	_ = json.Unmarshal(run.Output, &out)
	if run.Status != "succeeded" || out["hello"]["greeting"] != "hello, ada" {
		t.Errorf("run = %s %s, want succeeded with the worker's greeting", run.Status, run.Output)
	}
	if k := <-keys; k != started.ID+":hello" {
		t.Errorf("idempotency key = %q, want %s:hello", k, started.ID)
	}
	again, err := c.StartRun(ctx, start)
	if err != nil || again.ID != started.ID || !again.Existing {
		t.Errorf("repeated start = %+v, %v; want the same run", again, err)
	}

	stopWorker()
	if err := <-ran; err != nil {
		t.Errorf("Run = %v after shutdown", err)
	}
}

func TestClientSignalsAndEvents(t *testing.T) {
	t.Parallel()
	url, key := startDuctor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.New(url, key)
	if _, err := c.Publish(ctx, &sdk.Definition{Key: "gate", Steps: []sdk.StepDef{sdk.Signal("open", "go")}}); err != nil {
		t.Fatal(err)
	}
	started, err := c.StartRun(ctx, sdk.StartRun{Definition: "gate"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Signal(ctx, started.ID, "r1", "go", map[string]int{"n": 7}); err != nil {
		t.Fatal(err)
	}
	if err := c.Signal(ctx, started.ID, "r1", "go", nil); !sdk.IsStatus(err, 409) {
		t.Errorf("repeated signal = %v, want 409", err)
	}
	run, err := c.WaitRun(ctx, started.ID, 10*time.Millisecond)
	if err != nil || run.Status != "succeeded" {
		t.Errorf("run = %+v, %v; want succeeded by the signal", run, err)
	}
	if id, err := c.PublishEvent(ctx, sdk.Event{Name: "paid", Data: map[string]int{"n": 1}}); err != nil || id == "" {
		t.Errorf("event = %q, %v", id, err)
	}
	_, err = c.GetRun(ctx, "00000000-0000-0000-0000-000000000000")
	var apiErr *sdk.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Code != "not_found" {
		t.Errorf("missing run = %v, want a 404 APIError", err)
	}
	bad := &sdk.Definition{Key: "bad", Steps: []sdk.StepDef{sdk.NewStep("x", "sleep", nil)}}
	if _, err := c.Publish(ctx, bad); !sdk.IsStatus(err, 422) {
		t.Errorf("invalid definition = %v, want 422", err)
	}
}
