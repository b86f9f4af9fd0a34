package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

const seedYAML = `
tenants:
  - slug: demo-seed
    name: Demo
    tier: bulk
    definitions:
      - file: flows/orders.yaml
      - document:
          key: hello
          steps: [{ref: hi, type: transform, with: {expr: '"hi"'}}]
    api_keys:
      - {name: ci, scopes: ["runs:write", "runs:read"]}
      - {name: admin}
    members:
      - {email: Dana@Example.com, role: owner}
`

func TestSeedLoadsTenantsDefinitionsKeysAndMembers(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	seed := b.file(t, "seed.yaml", seedYAML)
	out, errOut, err := b.run(t, "seed", "-f", seed)
	if err == nil || !strings.Contains(err.Error(), "flows/orders.yaml") {
		t.Fatalf("seed with a missing definition file = %q %q %v", out, errOut, err)
	}
	if err := os.Mkdir(filepath.Join(b.dir, "flows"), 0o700); err != nil {
		t.Fatal(err)
	}
	b.file(t, "flows/orders.yaml", applyOrders)
	out, _, err = b.run(t, "seed", "-f", seed)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tenant, err := b.store.TenantGetBySlug(ctx, "demo-seed")
	if err != nil || tenant.Tier != store.TierBulk || tenant.Name != "Demo" {
		t.Fatalf("tenant = %+v, %v", tenant, err)
	}
	for _, want := range []string{
		"tenant demo-seed " + tenant.ID.String() + " (created)\n",
		"definition demo-seed/orders v1 " + hashOf(t, applyOrders) + " (created)\n",
		"definition demo-seed/hello v1 ",
		"member demo-seed/dana@example.com owner\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("seed output lacks %q:\n%s", want, out)
		}
	}
	secret := secretOf(t, out, "apikey demo-seed/ci ")
	hash, err := checkKey(b.store, ctx, secret)
	if err != nil {
		t.Fatalf("printed key %q: %v", secret, err)
	}
	key, err := b.store.APIKeyAuthenticate(ctx, hash)
	if err != nil || key.TenantID != tenant.ID || len(key.Scopes) != 2 {
		t.Fatalf("seeded key = %+v, %v", key, err)
	}
	again, _, err := b.run(t, "seed", "-f", seed)
	if err != nil || !strings.Contains(again, "(exists)") || strings.Count(again, "(unchanged)") != 2 ||
		strings.Contains(again, "dk_") || strings.Count(again, "exists (its secret") != 2 {
		t.Fatalf("seeding again = %q, %v; want nothing new", again, err)
	}
	if keys, _ := b.store.APIKeyList(ctx, tenant.ID); len(keys) != 2 {
		t.Fatalf("%d keys after seeding twice, want 2", len(keys))
	}
}

func secretOf(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(line, prefix); ok {
			return s
		}
	}
	t.Fatalf("no line %q in %q", prefix, out)
	return ""
}

// A seed file with problems reports all of them and writes nothing.
func TestSeedWithProblemsWritesNothing(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	seed := b.file(t, "seed.yaml", `
tenants:
  - slug: good-seed
    definitions:
      - document: {key: fine, steps: [{ref: a, type: transform, with: {expr: "1"}}]}
  - slug: bad-seed
    tier: gold
    definitions:
      - document: {key: broken, steps: [{ref: a, type: sleep}, {ref: b, type: transform, with: {expr: "1 +"}}]}
      - {}
    api_keys: [{name: x, scopes: [root]}]
    members: [{email: a@b.c, role: god}]
`)
	_, _, err := b.run(t, "seed", "-f", seed)
	if err == nil {
		t.Fatal("seed with problems succeeded")
	}
	for _, want := range []string{
		"tenants[1].tier", "tenants[1].definitions[0]: steps[0].type", "tenants[1].definitions[0]: steps[1].with.expr",
		"tenants[1].definitions[1]: give exactly one", "tenants[1].api_keys[0]", "tenants[1].members[0]", "nothing was written",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := b.store.TenantGetBySlug(context.Background(), "good-seed"); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("a failed seed created a tenant: %v", err)
	}
	bad := b.file(t, "typo.yaml", "tenants:\n  - slug: x\n    tenant_tier: bulk\n")
	if _, _, err := b.run(t, "seed", "-f", bad); err == nil || !strings.Contains(err.Error(), "tenant_tier") {
		t.Fatalf("unknown field = %v, want it named", err)
	}
	if _, _, err := b.run(t, "seed"); err == nil || !strings.Contains(err.Error(), "seed -f FILE") {
		t.Fatalf("seed without -f = %v", err)
	}
}

func TestSeedSchedulesAndWebhooks(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	b.vars["DUCTOR_SECRET_KEY"] = strings.Repeat("k", 32)
	seed := b.file(t, "seed.yaml", `
tenants:
  - slug: sched-seed
    definitions:
      - document: {key: hello, steps: [{ref: hi, type: transform, with: {expr: '"hi"'}}]}
    schedules:
      - {id: nightly, definition: hello, spec: {cron: "0 2 * * *", timezone: Europe/Paris}, overlap: buffer_one}
    webhooks:
      - {id: shop, event: order.placed}
`)
	out, _, err := b.run(t, "seed", "-f", seed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "schedule sched-seed/nightly created") || !strings.Contains(out, "webhook sched-seed/shop /hooks/sched-seed/shop whsec_") {
		t.Errorf("seed output:\n%s", out)
	}
	tenant, _ := b.store.TenantGetBySlug(context.Background(), "sched-seed")
	sc, err := b.store.ScheduleGet(context.Background(), tenant.ID, "nightly")
	if err != nil || sc.NextAt == nil || sc.Overlap != "buffer_one" {
		t.Errorf("seeded schedule = %+v, %v", sc, err)
	}
	again, _, err := b.run(t, "seed", "-f", seed)
	if err != nil || !strings.Contains(again, "schedule sched-seed/nightly exists") || strings.Contains(again, "whsec_") {
		t.Errorf("seeding again = %v:\n%s", err, again)
	}
	bad := b.file(t, "bad.yaml", "tenants:\n  - slug: x\n    schedules:\n      - {id: s, definition: hello, spec: {interval: 1ms}}\n")
	if _, _, err := b.run(t, "seed", "-f", bad); err == nil || !strings.Contains(err.Error(), "schedules[0]: spec.interval") {
		t.Errorf("a bad schedule: %v", err)
	}
}
