package sysevents_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/sysevents"
)

func run(attrs map[string]any) sysevents.Run {
	return sysevents.Run{TenantID: uuid.New(), ID: uuid.New(), Definition: "d", Version: 2, Subject: "s", SearchAttributes: attrs}
}

// A run failing after its step failed for good: one ductor.step.failed
// and one ductor.run.failed, with the documented data and stable ids.
func TestFromDecisionsReportsAFailure(t *testing.T) {
	t.Parallel()
	r := run(nil)
	d := &engine.Decision{
		Nodes:       []*engine.Node{{ID: "boom", Ref: "boom", State: engine.NodeFailed, Error: &engine.Error{Code: "task_failed", Message: "no"}}},
		Transitions: []engine.Transition{{Seq: 3, Node: "boom", From: "running", To: "failed", Attempt: 1}, {Seq: 4, From: "running", To: "failed"}},
	}
	after := engine.Run{Status: engine.RunFailed, Error: &engine.Error{Code: "task_failed", Message: "no", Node: "boom"}, TransitionCount: 4}
	evs := sysevents.FromDecisions(r, engine.RunRunning, after, []*engine.Decision{d})
	if len(evs) != 2 || evs[0].Name != sysevents.StepFailed || evs[1].Name != sysevents.RunFailed {
		t.Fatalf("events = %+v", evs)
	}
	data := evs[1].Data
	if data["run_id"] != r.ID.String() || data["definition"] != "d" || data["version"] != 2 || data["subject"] != "s" ||
		data["error"].(map[string]any)["node"] != "boom" || data["links"].(map[string]any)["run"] != "/runs/"+r.ID.String() {
		t.Errorf("run.failed data = %v", data)
	}
	again := sysevents.FromDecisions(r, engine.RunRunning, after, []*engine.Decision{d})
	if again[0].ID != evs[0].ID || again[1].ID != evs[1].ID {
		t.Errorf("the same transition has another id")
	}
	if evs := sysevents.FromDecisions(r, engine.RunFailed, after, nil); len(evs) != 0 {
		t.Errorf("a run already failed reports %+v", evs)
	}
}

// The loop guard: generation 2 of a kind emits no event of that kind,
// and other kinds still go out.
func TestLoopGuard(t *testing.T) {
	t.Parallel()
	child := sysevents.ChildAttributes(sysevents.RunFailed, map[string]any{"generation": int64(0)})
	if child[sysevents.AttrGeneration] != 1 {
		t.Fatalf("child attributes = %v", child)
	}
	if sysevents.ChildAttributes("order.created", nil) != nil {
		t.Errorf("an ordinary event marks its runs")
	}
	gen1 := run(map[string]any{"event": sysevents.RunFailed, sysevents.AttrGeneration: float64(1)})
	gen2 := run(map[string]any{"event": sysevents.RunFailed, sysevents.AttrGeneration: int64(2)})
	failed := engine.Run{Status: engine.RunFailed, TransitionCount: 2}
	if evs := sysevents.FromDecisions(gen1, engine.RunRunning, failed, nil); len(evs) != 1 || evs[0].Data["generation"] != 1 {
		t.Errorf("generation 1: %+v", evs)
	}
	if evs := sysevents.FromDecisions(gen2, engine.RunRunning, failed, nil); len(evs) != 0 {
		t.Errorf("generation 2 emits %+v", evs)
	}
	if evs := sysevents.FromDecisions(gen2, engine.RunRunning, engine.Run{Status: engine.RunSucceeded}, nil); len(evs) != 1 {
		t.Errorf("generation 2 succeeding: %+v", evs)
	}
}

// The package stays pure: no database, web or queue among its imports,
// no clock read. (database/sql/driver comes with uuid's Value method.)
func TestPure(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/ductor/ductor/app/sysevents").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range []string{"github.com/jackc/pgx", "github.com/labstack/echo", "github.com/riverqueue/river", "github.com/ductor/ductor/app/store", "net/http"} {
			if dep == f || strings.HasPrefix(dep, f+"/") || dep == "database/sql" {
				t.Errorf("imports %s", dep)
			}
		}
	}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		src, _ := os.ReadFile(f)
		if !strings.HasSuffix(f, "_test.go") && strings.Contains(string(src), "time.Now(") {
			t.Errorf("%s reads the clock", f)
		}
	}
}

// A refused delivery's event names its webhook, reason, status, client
// and count of suppressed refusals, and its id follows from the webhook
// and the report's time: one report, one event.
func TestRefusedReportsTheWebhookAndWhatWasSuppressed(t *testing.T) {
	r := sysevents.WebhookRefusal{Webhook: "shop", Event: "order.placed", Reason: "bad_signature", Status: 401,
		RemoteAddr: "203.0.113.9", At: "2026-12-02T15:00:00Z", Suppressed: 41}
	e := sysevents.Refused(r)
	if e.Name != sysevents.WebhookRefused || e.ID != sysevents.Refused(r).ID {
		t.Fatalf("event %v: want %s with a stable id", e, sysevents.WebhookRefused)
	}
	for k, want := range map[string]any{"webhook_id": "shop", "event": "order.placed", "reason": "bad_signature",
		"status": 401, "remote_addr": "203.0.113.9", "at": "2026-12-02T15:00:00Z", "suppressed": int64(41)} {
		if e.Data[k] != want {
			t.Errorf("data[%s] = %v, want %v", k, e.Data[k], want)
		}
	}
	r.At = "2026-12-02T15:01:00Z"
	if sysevents.Refused(r).ID == e.ID {
		t.Error("the next report has the same id")
	}
}
