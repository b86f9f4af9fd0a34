package e2e

// The Go SDK's tests against a real server live here, in the server's
// module: the SDK is a module of its own (sdk/go.mod), which cannot import
// the server without taking on its dependencies, so its own tests need
// nothing but the standard library (fakes for pure client behaviour), and
// what the SDK does against the real API is checked from this side.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/sdk"
	"github.com/ductor/ductor/workers"
)

// startSDKServer runs Ductor in-process against a fresh schema (API, River
// workers, sweep and task notifications) and returns its URL and an admin
// key of a new tenant.
func startSDKServer(t *testing.T) (string, string) {
	t.Helper()
	pool := testdb.Schema(t)
	log := slog.New(slog.DiscardHandler)
	exec := steps.NewExecutor(steps.NewRegistry(), steps.HTTPOptions{})
	coord, err := workers.New(workers.Config{Pool: pool, Logger: log, LocalHandlers: exec.Handles})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	client, err := workers.NewClient(pool, workers.Options{Coordinator: true, Steps: true, Logger: log, Runtime: coord,
		Executor: exec})
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
	sdkBackground(t, coord.Sweep, coord.Runs.Tasks.Listen)
	s := store.New(pool)
	box, err := secrets.NewBox(strings.Repeat("s", 32))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Deps{Pool: pool, Store: s, Logger: log, API: true, Runs: coord.Runs,
		ValidateInput: server.NewInputValidator(), Secrets: box}))
	t.Cleanup(srv.Close)
	_, key := testdb.APIKey(t, s, testdb.Tenant(t, s, nil), &testdb.APIKeyOpts{Name: testdb.Ptr("sdk")})
	return srv.URL, key
}

func sdkClient(t *testing.T, url, key string) *sdk.Client {
	t.Helper()
	c, err := sdk.New(url, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sdkBackground runs each function until the test ends.
func sdkBackground(t *testing.T, fns ...func(context.Context)) {
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

func TestSDKWorkerRunsARemoteTask(t *testing.T) {
	t.Parallel()
	url, key := startSDKServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdkClient(t, url, key)

	v, err := c.Publish(ctx, &sdk.Definition{
		Key: "greet",
		Steps: []sdk.Step{
			sdk.TaskStep("hello", sdk.TaskWith{Handler: "greeter.hello", InputExpr: `{"name": input.name}`}),
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

func TestSDKSignalsAndEvents(t *testing.T) {
	t.Parallel()
	url, key := startSDKServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdkClient(t, url, key)
	if _, err := c.Publish(ctx, &sdk.Definition{Key: "gate", Steps: []sdk.Step{sdk.SignalStep("open", sdk.SignalWith{Name: "go"})}}); err != nil {
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
	bad := &sdk.Definition{Key: "bad", Steps: []sdk.Step{sdk.NewStep("x", "sleep", nil)}}
	if _, err := c.Publish(ctx, bad); !sdk.IsStatus(err, 422) {
		t.Errorf("invalid definition = %v, want 422", err)
	}
}

// sdkWaitRun polls the run until cond holds for it, for as long as ctx lasts.
func sdkWaitRun(t *testing.T, ctx context.Context, c *sdk.Client, id string, cond func(*sdk.Run) bool) *sdk.Run {
	t.Helper()
	var r *sdk.Run
	if !testwait.Until(ctx, time.Minute, func() bool {
		got, err := c.GetRun(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			t.Fatal(err)
		}
		r = got
		return cond(r)
	}) {
		t.Fatalf("run %s never got there: %+v", id, r)
	}
	return r
}

func sdkIsStatus(s string) func(*sdk.Run) bool { return func(r *sdk.Run) bool { return r.Status == s } }

// Every API operation has a client method that works.
func TestSDKCoversTheAPI(t *testing.T) {
	t.Parallel()
	url, key := startSDKServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := sdkClient(t, url, key)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if w, err := c.Whoami(ctx); err != nil || len(w.Scopes) != 1 || w.Scopes[0] != "admin" {
		t.Fatalf("Whoami = %+v, %v", w, err)
	}
	if s, err := c.DefinitionSchema(ctx); err != nil || !strings.Contains(string(s), "with_event_set") {
		t.Fatalf("DefinitionSchema: %v", err)
	}
	ok := &sdk.Definition{Key: "ok", Steps: []sdk.Step{sdk.TransformStep("hi", `"hi"`)}}
	compiled, err := c.Compile(ctx, ok)
	if err != nil || compiled.ManifestHash == "" {
		t.Fatalf("Compile = %+v, %v", compiled, err)
	}
	must(c.SaveDraft(ctx, ok))
	if v, err := c.PublishDraft(ctx, "ok"); err != nil || v.Version != 1 || v.ManifestHash != compiled.ManifestHash {
		t.Fatalf("PublishDraft = %+v, %v", v, err)
	}
	for _, d := range []*sdk.Definition{
		{Key: "fail", Steps: []sdk.Step{sdk.TaskStep("boom", sdk.TaskWith{Handler: "builtin.fail"})}},
		{Key: "gate", Steps: []sdk.Step{sdk.SignalStep("go", sdk.SignalWith{Name: "go"})}},
		{Key: "inbox", Steps: []sdk.Step{
			sdk.ApprovalStep("ok", sdk.ApprovalWith{Approvers: []string{"key:sdk"}}),
			sdk.HumanLoopStep("work", sdk.HumanLoopWith{Title: "Work"}),
			sdk.ScatterStep("fan", sdk.ScatterWith{ItemsExpr: "[1, 2, 3]", Do: &sdk.Template{Type: sdk.TypeTransform, With: sdk.With{"expr": "item"}}}),
		}, Edges: []sdk.Edge{sdk.On("ok", "work", sdk.OutcomeApproved)}},
	} {
		_, err := c.Publish(ctx, d)
		must(err)
	}
	page, err := c.ListDefinitions(ctx, sdk.Page{Limit: 2})
	if err != nil || len(page.Definitions) != 2 || page.NextCursor == "" {
		t.Fatalf("ListDefinitions = %+v, %v", page, err)
	}
	if rest, err := c.ListDefinitions(ctx, sdk.Page{Limit: 2, Cursor: page.NextCursor}); err != nil || len(rest.Definitions) != 2 {
		t.Fatalf("ListDefinitions page 2 = %+v, %v", rest, err)
	}
	if d, err := c.GetDefinition(ctx, "ok"); err != nil || len(d.Versions) != 1 || *d.LatestVersion != 1 {
		t.Fatalf("GetDefinition = %+v, %v", d, err)
	}
	if v, err := c.GetVersion(ctx, "ok", 1); err != nil || v.Source == "" || len(v.Manifest) == 0 {
		t.Fatalf("GetVersion = %+v, %v", v, err)
	}

	first, err := c.StartRun(ctx, sdk.StartRun{Definition: "ok"})
	must(err)
	second, err := c.StartRun(ctx, sdk.StartRun{Definition: "ok"})
	must(err)
	sdkWaitRun(t, ctx, c, first.ID, sdkIsStatus("succeeded"))
	sdkWaitRun(t, ctx, c, second.ID, sdkIsStatus("succeeded"))
	runs, err := c.ListRuns(ctx, sdk.RunFilter{Definition: "ok", Page: sdk.Page{Limit: 1}})
	if err != nil || len(runs.Runs) != 1 || runs.Runs[0].ID != second.ID || runs.NextCursor == "" {
		t.Fatalf("ListRuns = %+v, %v", runs, err)
	}
	older, err := c.ListRuns(ctx, sdk.RunFilter{Definition: "ok", Page: sdk.Page{Limit: 1, Cursor: runs.NextCursor}})
	if err != nil || len(older.Runs) != 1 || older.Runs[0].ID != first.ID {
		t.Fatalf("ListRuns page 2 = %+v, %v", older, err)
	}
	if h, err := c.RunHistory(ctx, first.ID, 0, 0); err != nil || len(h) < 3 || h[0].Seq != 1 {
		t.Fatalf("RunHistory = %+v, %v", h, err)
	}
	must(c.Unpublish(ctx, "ok", 1))
	if _, err := c.StartRun(ctx, sdk.StartRun{Definition: "ok"}); err == nil {
		t.Fatal("started a run of an unpublished definition")
	}

	failed, err := c.StartRun(ctx, sdk.StartRun{Definition: "fail"})
	must(err)
	sdkWaitRun(t, ctx, c, failed.ID, sdkIsStatus("failed"))
	must(c.RetryNode(ctx, failed.ID, "boom"))
	sdkWaitRun(t, ctx, c, failed.ID, func(r *sdk.Run) bool { return r.Nodes[0].Generation == 1 && r.Terminal() })

	gate, err := c.StartRun(ctx, sdk.StartRun{Definition: "gate", Input: map[string]int{"n": 1}})
	must(err)
	sdkWaitRun(t, ctx, c, gate.ID, sdkIsStatus("waiting"))
	successor, err := c.ContinueAsNew(ctx, gate.ID, "roll-1", map[string]int{"n": 2})
	if err != nil || successor == "" {
		t.Fatalf("ContinueAsNew = %q, %v", successor, err)
	}
	sdkWaitRun(t, ctx, c, gate.ID, sdkIsStatus("terminated"))
	next := sdkWaitRun(t, ctx, c, successor, sdkIsStatus("waiting"))
	if string(next.Input) != `{"n":2}` {
		t.Errorf("successor input = %s", next.Input)
	}
	must(c.CancelRun(ctx, successor, "done"))
	sdkWaitRun(t, ctx, c, successor, sdkIsStatus("cancelled"))

	inbox, err := c.StartRun(ctx, sdk.StartRun{Definition: "inbox"})
	must(err)
	sdkWaitRun(t, ctx, c, inbox.ID, sdkIsStatus("waiting"))
	approvals, err := c.ListApprovals(ctx, "pending", 0)
	if err != nil || len(approvals) != 1 || approvals[0].RunID != inbox.ID {
		t.Fatalf("ListApprovals = %+v, %v", approvals, err)
	}
	if a, err := c.GetApproval(ctx, approvals[0].ID); err != nil || a.ID != approvals[0].ID || a.Status != "pending" {
		t.Fatalf("GetApproval = %+v, %v", a, err)
	}
	if a, err := c.DecideApproval(ctx, approvals[0].ID, true, "fine"); err != nil || a.Status != "approved" {
		t.Fatalf("DecideApproval = %+v, %v", a, err)
	}
	if _, err := c.DecideApproval(ctx, approvals[0].ID, false, ""); !sdk.IsStatus(err, 409) {
		t.Errorf("deciding twice = %v, want 409", err)
	}
	var cases []sdk.Case
	if !testwait.Until(ctx, time.Minute, func() bool {
		cases, err = c.ListCases(ctx, "open", 0)
		if ctx.Err() == nil {
			must(err)
		}
		return len(cases) > 0
	}) {
		t.Fatal("the case never opened")
	}
	if updated, err := c.UpdateCase(ctx, cases[0].ID, sdk.CaseUpdate{Status: "working", Data: map[string]string{"done": "yes"}}); err != nil || updated.Status != "working" {
		t.Fatalf("UpdateCase = %+v, %v", updated, err)
	}
	if got, err := c.GetCase(ctx, cases[0].ID); err != nil || string(got.Data) != `{"done":"yes"}` {
		t.Fatalf("GetCase = %+v, %v", got, err)
	}
	if listed, err := c.ListCasesWithData(ctx, "working", 0); err != nil || len(listed) != 1 || string(listed[0].Data) != `{"done":"yes"}` {
		t.Fatalf("ListCasesWithData = %+v, %v", listed, err)
	}
	if listed, err := c.ListCases(ctx, "working", 0); err != nil || len(listed) != 1 || listed[0].Data != nil {
		t.Fatalf("ListCases = %+v, %v; want no data", listed, err)
	}
	if updated, err := c.UpdateCase(ctx, cases[0].ID, sdk.CaseUpdate{Status: "resolved"}); err != nil || updated.Status != "resolved" {
		t.Fatalf("UpdateCase = %+v, %v", updated, err)
	}
	done := sdkWaitRun(t, ctx, c, inbox.ID, sdkIsStatus("succeeded"))
	if !strings.Contains(string(done.Output), `"done":"yes"`) {
		t.Errorf("output = %s, want the case's data", done.Output)
	}
	kids, err := c.ScatterChildren(ctx, inbox.ID, "fan", "succeeded", "", sdk.Page{})
	if err != nil || !strings.Contains(string(kids), "fan[2]") {
		t.Errorf("ScatterChildren = %s, %v", kids, err)
	}

	// Schedules, webhooks, one node's cancel.
	if _, err := c.Triggers().CreateSchedule(ctx, sdk.Schedule{ID: "hourly", Definition: "gate", Spec: sdk.ScheduleSpec{Interval: "1h"}, Paused: true}); err != nil {
		t.Fatalf("CreateSchedule: %v", err)
	}
	if got, err := c.Triggers().GetSchedule(ctx, "hourly"); err != nil || !strings.Contains(string(got), `"paused":true`) {
		t.Fatalf("GetSchedule = %s, %v", got, err)
	}
	if got, err := c.Triggers().PauseSchedule(ctx, "hourly", false, "go"); err != nil || !strings.Contains(string(got), `"paused":false`) {
		t.Fatalf("PauseSchedule = %s, %v", got, err)
	}
	if got, err := c.Triggers().TriggerSchedule(ctx, "hourly", "allow_all"); err != nil || !strings.Contains(string(got), "run_id") {
		t.Fatalf("TriggerSchedule = %s, %v", got, err)
	}
	from := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if got, err := c.Triggers().BackfillSchedule(ctx, "hourly", from, from.Add(2*time.Hour), "allow_all"); err != nil || strings.Count(string(got), "scheduled_at") != 2 {
		t.Fatalf("BackfillSchedule = %s, %v", got, err)
	}
	if list, err := c.Triggers().ListSchedules(ctx, sdk.Page{}); err != nil || !strings.Contains(string(list), "hourly") {
		t.Fatalf("ListSchedules = %s, %v", list, err)
	}
	must(c.Triggers().DeleteSchedule(ctx, "hourly"))
	hook, err := c.Triggers().CreateWebhook(ctx, "psp", "payment.settled", "")
	if err != nil || hook.Secret == "" || hook.URL == "" {
		t.Fatalf("CreateWebhook = %+v, %v", hook, err)
	}
	if rotated, err := c.Triggers().RotateWebhook(ctx, "psp"); err != nil || rotated.Secret == hook.Secret {
		t.Fatalf("RotateWebhook = %+v, %v", rotated, err)
	}
	if hooks, err := c.Triggers().ListWebhooks(ctx, sdk.Page{}); err != nil || len(hooks) != 1 || hooks[0].Secret != "" {
		t.Fatalf("ListWebhooks = %+v, %v", hooks, err)
	}
	if got, err := c.Triggers().GetWebhook(ctx, "psp"); err != nil || got.Event != "payment.settled" {
		t.Fatalf("GetWebhook = %+v, %v", got, err)
	}
	must(c.Triggers().DeleteWebhook(ctx, "psp"))
	waiting, err := c.StartRun(ctx, sdk.StartRun{Definition: "gate"})
	must(err)
	sdkWaitRun(t, ctx, c, waiting.ID, sdkIsStatus("waiting"))
	must(c.CancelNode(ctx, waiting.ID, "go", "not needed"))
	sdkWaitRun(t, ctx, c, waiting.ID, func(r *sdk.Run) bool { return r.Terminal() && r.Nodes[0].State == "cancelled" })
}
