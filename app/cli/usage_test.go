package cli

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// tier set and tenant set change quotas (the tenant's own override the
// tier's, none clears one); usage prints a month of every tenant as CSV.
func TestTierTenantQuotasAndUsage(t *testing.T) {
	t.Parallel()
	pool, url := testdb.SchemaURL(t)
	s := store.New(pool)
	ctx := context.Background()
	a, b := testdb.Tenant(t, s, nil), testdb.Tenant(t, s, nil)
	if _, err := runCLI(t, url, "tier", "set", "standard", "--monthly-steps", "100000", "--monthly-runs", "500"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, url, "tenant", "set", a.Slug, "--monthly-steps", "7", "--monthly-runs", "none"); err != nil {
		t.Fatal(err)
	}
	qa, _ := s.UsageQuotaGet(ctx, a.ID)
	qb, _ := s.UsageQuotaGet(ctx, b.ID)
	if qa.MonthlySteps != 7 || qa.MonthlyRuns != 500 || qb.MonthlySteps != 100000 || qa.SoftPercent != 80 {
		t.Errorf("quotas %+v and %+v, want a's 7 steps over the tier's 500 runs, b the tier's", qa, qb)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO usage_delta (tenant_id, day, definition_key, step_type, steps, runs_started)
		VALUES ($1, '2026-12-03', 'd', 'task', 30, 4), ($1, '2026-12-03', 'd', 'http', 10, 0), ($2, '2026-12-04', 'd', 'task', 2, 1),
		       ($1, '2026-11-30', 'd', 'transform', 1, 1)`, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, url, "usage", "--month", "2026-12")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "tenant,tier,month,runs_started") {
		t.Fatalf("usage csv:\n%s", out)
	}
	if !strings.Contains(out, a.Slug+",standard,2026-12,4,") || !strings.Contains(out, b.Slug+",standard,2026-12,1,") {
		t.Errorf("usage csv:\n%s", out)
	}
	// A column per step type, after the fixed ones: a's 40 steps are 10
	// http and 30 task steps.
	if !strings.HasSuffix(lines[0], ",stored_bytes,steps_http,steps_task") || !strings.Contains(out, ",40,") ||
		!strings.HasSuffix(lines[1+slices.IndexFunc(lines[1:], func(l string) bool { return strings.HasPrefix(l, a.Slug+",") })], ",10,30") {
		t.Errorf("usage csv by step type:\n%s", out)
	}
	out, err = runCLI(t, url, "usage", "--tenant", a.Slug, "--month", "2026-11", "--output", "json")
	if err != nil || !strings.Contains(out, `"steps": 1`) || !strings.Contains(out, `"transform"`) {
		t.Errorf("usage json = %s, %v", out, err)
	}
	for _, bad := range [][]string{{"usage", "--month", "12-2026"}, {"tier", "set", "standard", "--queue-class", "bulk"},
		{"tier", "set", "Free"}, {"tier", "set", "free", "--queue-class", "fast"}, {"tier", "set", "standard", "--monthly-steps", "-4"}} {
		if _, err := runCLI(t, url, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// A named tier holds quotas and a fair queue class; tenants move to it and
// their step tasks take its class's queue; a tier with tenants, or one of
// the classes, cannot be deleted.
func TestNamedTiers(t *testing.T) {
	t.Parallel()
	pool, url := testdb.SchemaURL(t)
	s := store.New(pool)
	ctx := context.Background()
	a := testdb.Tenant(t, s, nil)
	if out, err := runCLI(t, url, "tier", "set", "free", "--queue-class", "bulk", "--monthly-steps", "100"); err != nil || !strings.Contains(out, "tier free: queue class bulk, quotas set") {
		t.Fatalf("tier set free = %q, %v", out, err)
	}
	if _, err := runCLI(t, url, "tenant", "set", a.Slug, "--tier", "free"); err != nil {
		t.Fatal(err)
	}
	got, err := s.TenantGetByID(ctx, a.ID)
	if err != nil || got.Tier != "free" || got.QueueClass != store.TierBulk {
		t.Fatalf("tenant = %+v, %v; want tier free in the bulk class", got, err)
	}
	if q, _ := s.UsageQuotaGet(ctx, a.ID); q.MonthlySteps != 100 || q.Tier != "free" {
		t.Errorf("quota %+v, want free's 100 steps", q)
	}
	out, err := runCLI(t, url, "tier", "list", "--output", "json")
	if err != nil || !strings.Contains(out, `"name": "free"`) || !strings.Contains(out, `"queue_class": "bulk"`) || !strings.Contains(out, `"tenants": 1`) {
		t.Errorf("tier list = %s, %v", out, err)
	}
	if _, err := runCLI(t, url, "tier", "delete", "free"); err == nil || !strings.Contains(err.Error(), "still has tenants") {
		t.Errorf("deleting a tier with tenants: %v", err)
	}
	if _, err := runCLI(t, url, "tenant", "create", "tiered-"+a.Slug, "--tier", "gold"); err == nil || !strings.Contains(err.Error(), "known: bulk, free, interactive, standard") {
		t.Errorf("an unknown tier: %v", err)
	}
	if _, err := runCLI(t, url, "tier", "set", "free", "--queue-class", "interactive"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TenantGetBySlug(ctx, a.Slug); got.QueueClass != store.TierInteractive {
		t.Errorf("after moving free to interactive the tenant's class is %s", got.QueueClass)
	}
	if _, err := runCLI(t, url, "tenant", "set", a.Slug, "--tier", "standard"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, url, "tier", "delete", "free"); err != nil {
		t.Errorf("deleting an empty tier: %v", err)
	}
	if _, err := runCLI(t, url, "tier", "delete", "standard"); err == nil {
		t.Error("a class's tier was deleted")
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM usage_tier_quota WHERE tier = 'free'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("free's quotas outlived it: %d, %v", n, err)
	}
}
