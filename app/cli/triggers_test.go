package cli

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

// setupTriggers is setupApply with a coordinator (runs are queued, not
// worked) and sealed secrets, for the schedule and webhook commands.
func setupTriggers(t *testing.T) *applyBundle {
	t.Helper()
	pool, url := testdb.SchemaURL(t)
	s := store.New(pool)
	log := slog.New(slog.DiscardHandler)
	coord, err := workers.New(workers.Config{Pool: pool, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	box, err := secrets.NewBox(strings.Repeat("s", 32))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Deps{Pool: pool, Store: s, Logger: log, API: true, Runs: coord.Runs, Secrets: box}))
	t.Cleanup(srv.Close)
	b := &applyBundle{store: s, tenant: testdb.Tenant(t, s, nil), dir: t.TempDir()}
	_, key := testdb.APIKey(t, s, b.tenant, nil)
	b.vars = map[string]string{"DUCTOR_URL": srv.URL, "DUCTOR_API_KEY": key, "DATABASE_URL": url}
	return b
}

func (b *applyBundle) runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errOut, err := b.run(t, args...)
	if err != nil {
		t.Fatalf("ductor %v: %v %s", args, err, errOut)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("ductor %v printed %q", args, out)
	}
	return v
}

func TestScheduleCommands(t *testing.T) {
	t.Parallel()
	b := setupTriggers(t)
	testdb.Definition(t, b.store, b.tenant.ID, applyOrders)
	sc := b.runJSON(t, "schedule", "create", "orders", "--id", "daily", "--cron", "0 6 * * *", "--timezone", "America/New_York",
		"--input", `{"amount": 2}`, "--overlap", "buffer_one", "--start-at", "2030-01-01T00:00:00Z")
	if sc["id"] != "daily" || sc["overlap"] != "buffer_one" || !strings.HasPrefix(sc["next_run_at"].(string), "2030-01-01T11:00:00") {
		t.Fatalf("create printed %v", sc)
	}
	if p := b.runJSON(t, "schedule", "pause", "daily", "--note", "quiet"); p["paused"] != true || p["note"] != "quiet" {
		t.Errorf("pause printed %v", p)
	}
	if p := b.runJSON(t, "schedule", "unpause", "daily"); p["paused"] != false {
		t.Errorf("unpause printed %v", p)
	}
	if tr := b.runJSON(t, "schedule", "trigger", "daily"); tr["action"].(map[string]any)["run_id"] == nil {
		t.Errorf("trigger printed %v", tr)
	}
	bf := b.runJSON(t, "schedule", "backfill", "daily", "--from", "2030-01-01T00:00:00Z", "--to", "2030-01-03T00:00:00Z", "--overlap", "allow_all")
	if acts := bf["actions"].([]any); len(acts) != 2 {
		t.Errorf("backfill printed %v", bf)
	}
	if got := b.runJSON(t, "schedule", "get", "daily"); len(got["recent_actions"].([]any)) != 3 {
		t.Errorf("get printed %v", got)
	}
	if list := b.runJSON(t, "schedule", "list"); len(list["schedules"].([]any)) != 1 {
		t.Errorf("list printed %v", list)
	}
	b.runJSON(t, "schedule", "delete", "daily")
	if _, _, err := b.run(t, "schedule", "get", "daily"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("get after delete: %v", err)
	}
	if _, _, err := b.run(t, "schedule", "create", "orders", "--interval", "5ms"); err == nil || !strings.Contains(err.Error(), "at least 1s") {
		t.Errorf("a 5ms interval: %v", err)
	}
}

func TestWebhookCommands(t *testing.T) {
	t.Parallel()
	b := setupTriggers(t)
	w := b.runJSON(t, "webhook", "create", "stripe", "--event", "payment.received")
	if !strings.HasPrefix(w["secret"].(string), "whsec_") || !strings.HasSuffix(w["url"].(string), "/hooks/"+b.tenant.Slug+"/stripe") {
		t.Fatalf("create printed %v", w)
	}
	if r := b.runJSON(t, "webhook", "rotate", "stripe"); r["secret"] == w["secret"] || r["secret"] == nil {
		t.Errorf("rotate printed %v", r)
	}
	if list := b.runJSON(t, "webhook", "list"); len(list["webhooks"].([]any)) != 1 || list["webhooks"].([]any)[0].(map[string]any)["secret"] != nil {
		t.Errorf("list printed %v", list)
	}
	b.runJSON(t, "webhook", "delete", "stripe")
	if _, _, err := b.run(t, "webhook", "rotate", "stripe"); err == nil {
		t.Errorf("rotate after delete succeeded")
	}
}
