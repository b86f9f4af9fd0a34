package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/testdb"
)

// --url and --api-key go anywhere on an API command's line and win over
// DUCTOR_URL and DUCTOR_API_KEY.
func TestAPIFlagsWinOverTheEnvironment(t *testing.T) {
	t.Parallel()
	b := setupTriggers(t)
	url, key := b.vars["DUCTOR_URL"], b.vars["DUCTOR_API_KEY"]
	b.vars["DUCTOR_URL"], b.vars["DUCTOR_API_KEY"] = "http://127.0.0.1:1", "dk_wrong"
	if _, _, err := b.run(t, "whoami"); err == nil {
		t.Fatal("whoami with a wrong DUCTOR_URL succeeded")
	}
	me := b.runJSON(t, "whoami", "--url", url, "--api-key", key)
	if me["tenant_id"] != b.tenant.ID.String() || !strings.HasPrefix(key, me["prefix"].(string)) {
		t.Fatalf("whoami printed %v", me)
	}
	if list := b.runJSON(t, "webhook", "list", "--api-key", key, "--url="+url); list["webhooks"] == nil {
		t.Fatalf("webhook list printed %v", list)
	}
	delete(b.vars, "DUCTOR_API_KEY")
	if _, _, err := b.run(t, "whoami", "--url", url); err == nil || !strings.Contains(err.Error(), "--api-key") {
		t.Fatalf("whoami without a key: %v", err)
	}
	if table, _, err := b.run(t, "whoami", "--url", url, "--api-key", key, "--output", "table"); err != nil || !strings.HasPrefix(table, "TENANT") {
		t.Fatalf("whoami table = %q, %v", table, err)
	}
}

// A flag no command knows is a usage error (exit 2), on API and admin
// commands alike; --url is not a flag of admin commands.
func TestUnknownFlagsAreUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "get", "x", "--bogus"}, {"run", "start", "k", "--wait=maybe"}, {"whoami", "--bogus"},
		{"schedule", "update", "s", "--bogus"}, {"migrate", "--bogus"}, {"tenant", "list", "--url", "http://x"},
		{"member", "list", "--bogus"},
	} {
		_, err := runCLI(t, "", args...)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "-h`") {
			t.Errorf("ductor %v = %v, want a usage error", args, err)
		}
	}
}

// run start --output json prints the run as run get does; without
// --output it prints the id alone.
func TestRunStartOutput(t *testing.T) {
	t.Parallel()
	b := setupTriggers(t)
	testdb.Definition(t, b.store, b.tenant.ID, applyOrders)
	run := b.runJSON(t, "run", "start", "orders", "--input", `{"amount": 2}`, "--output", "json")
	if run["definition"] != "orders" || run["id"] == nil || run["nodes"] == nil {
		t.Fatalf("run start --output json printed %v", run)
	}
	out, _, err := b.run(t, "run", "start", "orders", "--input", `{"amount": 2}`)
	if id := strings.TrimSpace(out); err != nil || strings.ContainsAny(id, " \n{") || id == "" {
		t.Fatalf("run start printed %q, %v", out, err)
	}
}

func TestScheduleUpdateAndWebhookGet(t *testing.T) {
	t.Parallel()
	b := setupTriggers(t)
	testdb.Definition(t, b.store, b.tenant.ID, applyOrders)
	b.runJSON(t, "schedule", "create", "orders", "--id", "daily", "--cron", "0 6 * * *", "--input", `{"amount": 2}`)
	up := b.runJSON(t, "schedule", "update", "daily", "--cron", "30 7 * * 1-5", "--timezone", "Europe/Paris", "--overlap", "allow_all")
	spec := up["spec"].(map[string]any)
	if spec["cron"] != "30 7 * * 1-5" || spec["timezone"] != "Europe/Paris" || up["overlap"] != "allow_all" {
		t.Fatalf("update printed %v", up)
	}
	if in := up["input"].(map[string]any); in["amount"] != 2.0 {
		t.Errorf("update without --input changed the input: %v", up["input"])
	}
	if up := b.runJSON(t, "schedule", "update", "daily", "--input", `{"amount": 3}`, "--pause-on-failure"); up["pause_on_failure"] != true || up["overlap"] != "allow_all" {
		t.Errorf("second update printed %v", up)
	}
	if _, _, err := b.run(t, "schedule", "update", "daily"); !errors.Is(err, ErrUsage) {
		t.Errorf("update with nothing to change: %v", err)
	}
	if _, _, err := b.run(t, "schedule", "update", "daily", "--cron", "61 * * * *"); err == nil || !strings.Contains(err.Error(), "minute: 61 is out of range") {
		t.Errorf("update to a bad cron: %v", err)
	}

	w := b.runJSON(t, "webhook", "create", "shop", "--event", "order.placed")
	got := b.runJSON(t, "webhook", "get", "shop")
	if got["id"] != "shop" || got["event"] != "order.placed" || got["url"] != w["url"] || got["secret"] != nil {
		t.Errorf("webhook get printed %v", got)
	}
	if _, _, err := b.run(t, "webhook", "get", "nope"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("webhook get of a missing webhook: %v", err)
	}
}
