package cli

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/server/servertest"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

const (
	upgradeParV1 = `
key: par
steps:
  - {ref: a, type: transform, with: {expr: '"A"'}}
  - {ref: b, type: signal, with: {name: go}}
edges:
  - {from: a, to: b}
`
	upgradeParV2 = `
key: par
steps:
  - {ref: a, type: transform, with: {expr: '"A"'}}
  - {ref: b, type: signal, with: {name: go}}
  - {ref: c, type: transform, with: {expr: '"C"'}}
edges:
  - {from: a, to: b}
  - {from: a, to: c}
`
	// v3 drops the waiting signal.
	upgradeParV3 = `
key: par
steps:
  - {ref: a, type: transform, with: {expr: '"A"'}}
edges: []
`
)

// `ductor run upgrade ID --version N` prints the plan (--dry-run changes
// nothing), applies it, and a refused upgrade prints the plan with its
// refusals and fails unless --cancel-removed allows it; the bulk form
// counts the outcomes on a dry run and moves the runs a filter matches.
func TestRunUpgradeCommand(t *testing.T) {
	t.Parallel()
	b := setupWorked(t)
	testdb.Definition(t, b.store, b.tenant.ID, upgradeParV1)
	waiting := func(id string) {
		t.Helper()
		testwait.Value(t, 20*time.Second, "run "+id+" waits on b", func() (string, bool) {
			out, _, err := b.run(t, "run", "get", id, "--output", "json")
			return out, err == nil && strings.Contains(out, `"status": "waiting"`)
		})
	}
	start := func() string {
		t.Helper()
		out, errOut, err := b.run(t, "run", "start", "par", "--version", "1")
		if err != nil {
			t.Fatalf("run start: %v %s", err, errOut)
		}
		return strings.TrimSpace(out)
	}
	one, two := start(), start()
	waiting(one)
	waiting(two)
	testdb.Definition(t, b.store, b.tenant.ID, upgradeParV2)
	testdb.Definition(t, b.store, b.tenant.ID, upgradeParV3)

	dry := b.runJSON(t, "run", "upgrade", one, "--version", "2", "--dry-run", "--output", "json")
	if dry["dry_run"] != true || dry["applied"] != false || !strings.Contains(mustJSON(t, dry["plan"]), `"outcome":"added","ref":"c","would_run":"yes"`) {
		t.Fatalf("dry run printed %v", dry)
	}
	table, _, err := b.run(t, "run", "upgrade", one, "--version", "2", "--dry-run", "--output", "table")
	if err != nil || !strings.Contains(table, "NODE") || !regexp.MustCompile(`(?m)^c\s+added\s+-\s+yes`).MatchString(table) {
		t.Fatalf("dry run table %q, %v", table, err)
	}
	if got := b.runJSON(t, "run", "get", one, "--output", "json"); got["version"] != 1.0 {
		t.Fatalf("a dry run moved the run: %v", got)
	}

	// v3 removes b, which waits: refused, the plan printed.
	out, _, err := b.run(t, "run", "upgrade", one, "--version", "3", "--output", "json")
	if err == nil || !strings.Contains(err.Error(), "steps.b") || !strings.Contains(out, `"refusals"`) {
		t.Fatalf("removing a waiting node: %q, %v; want the plan with its refusal and an error", out, err)
	}
	if got := b.runJSON(t, "run", "upgrade", two, "--version", "3", "--cancel-removed", "--output", "json"); got["applied"] != true {
		t.Fatalf("--cancel-removed: %v", got)
	}
	testwait.Value(t, 20*time.Second, "run "+two+" ends on v3 without b", func() (string, bool) {
		out, _, err := b.run(t, "run", "get", two, "--output", "json")
		return out, err == nil && strings.Contains(out, `"status": "succeeded"`)
	})

	done := b.runJSON(t, "run", "upgrade", one, "--version", "2", "--output", "json")
	if done["applied"] != true || done["to_version"] != 2.0 {
		t.Fatalf("upgrade printed %v", done)
	}
	testwait.Value(t, 20*time.Second, "c runs on v2", func() (string, bool) {
		out, _, err := b.run(t, "run", "get", one, "--output", "json")
		return out, err == nil && strings.Contains(out, `"node": "c"`) && strings.Contains(out, `"output": "C"`)
	})

	// In bulk: a third run on v1, counted by a dry run, then moved.
	three := start()
	waiting(three)
	counts := b.runJSON(t, "run", "batch", "upgrade", "--filter", "definition=par", "--filter", "status=waiting", "--version", "2", "--dry-run")
	c, _ := counts["counts"].(map[string]any)
	if outcomes := mustJSON(t, c["outcomes"]); c["total"] != 2.0 || !strings.Contains(outcomes, `"would_upgrade":1`) || !strings.Contains(outcomes, `"noop":1`) {
		t.Fatalf("bulk dry run printed %v", counts)
	}
	batch := b.runJSON(t, "run", "upgrade", "--filter", "definition=par", "--filter", "status=waiting", "--version", "2", "--wait")
	if batch["status"] != "completed" || batch["action"] != "upgrade" {
		t.Fatalf("bulk upgrade printed %v", batch)
	}
	if got := b.runJSON(t, "run", "get", three, "--output", "json"); got["version"] != 2.0 {
		t.Fatalf("the bulk upgrade left the run on version %v", got["version"])
	}
	for _, args := range [][]string{
		{"run", "upgrade", one},
		{"run", "upgrade", "--filter", "definition=par"},
		{"run", "batch", "frob", "--filter", "definition=par"},
		{"run", "batch"},
	} {
		if _, _, err := b.run(t, args...); !errors.Is(err, ErrUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// setupWorked is setupTriggers with workers that tick the runs, and the
// sweep, which works the batches.
func setupWorked(t *testing.T) *applyBundle {
	t.Helper()
	pool, url := testdb.SchemaURL(t)
	s := store.New(pool)
	log := slog.New(slog.DiscardHandler)
	coord := servertest.StartWorkers(t, pool, log, nil)
	ctx, cancel := context.WithCancel(context.Background())
	swept := make(chan struct{})
	go func() { coord.Sweep(ctx); close(swept) }()
	t.Cleanup(func() { cancel(); <-swept })
	srv := httptest.NewServer(server.New(server.Deps{Pool: pool, Store: s, Logger: log, API: true, Runs: coord.Runs, Secrets: servertest.TestBox(t)}))
	t.Cleanup(srv.Close)
	b := &applyBundle{store: s, tenant: testdb.Tenant(t, s, nil), dir: t.TempDir()}
	_, key := testdb.APIKey(t, s, b.tenant, nil)
	b.vars = map[string]string{"DUCTOR_URL": srv.URL, "DUCTOR_API_KEY": key, "DATABASE_URL": url}
	return b
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
