package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/sdk"
)

// A bridge task declared with `secrets:` gets their values in a Go SDK
// worker (Task.Secrets), beside an input that does not hold them; a task
// whose secret does not exist fails with secret_not_found and never
// reaches the worker.
func TestSDKWorkerReceivesTaskSecrets(t *testing.T) {
	t.Parallel()
	url, key := startSDKServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdkClient(t, url, key)
	const value = "sk_test_bridge_secret_value"
	put := func(name, v string) {
		req, _ := http.NewRequestWithContext(ctx, "PUT", url+"/api/v1/secrets/"+name, strings.NewReader(`{"value": "`+v+`"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != http.StatusCreated {
			t.Fatalf("set %s: %v %v", name, res, err)
		}
		res.Body.Close()
	}
	put("STRIPE_KEY", value)
	for _, d := range []*sdk.Definition{
		{Key: "charge", Steps: []sdk.Step{sdk.TaskStep("charge", sdk.TaskWith{Handler: "payments.charge", Queue: "payments",
			InputExpr: `{"amount": 5}`, Secrets: []string{"STRIPE_KEY"}})}},
		{Key: "charge-missing", Steps: []sdk.Step{sdk.TaskStep("charge", sdk.TaskWith{Handler: "payments.charge", Queue: "payments",
			Secrets: []string{"NOT_SET"}})}},
	} {
		if _, err := c.Publish(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	w := c.NewWorker(sdk.WorkerOptions{Queue: "payments", Logger: slog.New(slog.DiscardHandler)})
	got := make(chan sdk.Task, 2)
	w.Handle("payments.charge", func(ctx context.Context, task sdk.Task) (any, error) {
		got <- task
		return map[string]bool{"charged": true}, nil
	})
	workerCtx, stopWorker := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(workerCtx) }()
	defer func() { stopWorker(); <-ran }()

	started, err := c.StartRun(ctx, sdk.StartRun{Definition: "charge"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.WaitRun(ctx, started.ID, 10*time.Millisecond)
	if err != nil || run.Status != "succeeded" {
		t.Fatalf("run = %+v, %v", run, err)
	}
	task := <-got
	if task.Secrets["STRIPE_KEY"] != value {
		t.Errorf("the worker got secrets %v", task.Secrets)
	}
	if strings.Contains(string(task.Input), value) {
		t.Errorf("the input holds the value: %s", task.Input)
	}
	for _, p := range []string{"/api/v1/runs/" + started.ID, "/api/v1/runs/" + started.ID + "/history"} {
		req, _ := http.NewRequestWithContext(ctx, "GET", url+p, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(raw), value) {
			t.Errorf("%s shows the value: %s", p, raw)
		}
	}

	missing, err := c.StartRun(ctx, sdk.StartRun{Definition: "charge-missing"})
	if err != nil {
		t.Fatal(err)
	}
	run, err = c.WaitRun(ctx, missing.ID, 10*time.Millisecond)
	if err != nil || run.Status != "failed" || !strings.Contains(fmt.Sprint(run.Error), "secret_not_found") || !strings.Contains(fmt.Sprint(run.Error), "NOT_SET") {
		t.Errorf("a task whose secret is missing: %+v, %v", run, err)
	}
	select {
	case task := <-got:
		t.Errorf("the worker got the task whose secret is missing: %+v", task)
	default:
	}
}
