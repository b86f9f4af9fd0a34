package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/config"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// runCLI runs the command in-process with DATABASE_URL set to url.
func runCLI(t *testing.T, url string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := Env{
		Getenv: func(k string) string {
			if k == "DATABASE_URL" {
				return url
			}
			return ""
		},
		Stdout: &out, Stderr: &errOut,
	}
	err := Run(context.Background(), args, env)
	return out.String(), err
}

func TestMigrateTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	_, url := testdb.SchemaURL(t)
	out, err := runCLI(t, url, "migrate")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "nothing applied") {
		t.Fatalf("migrate on a migrated database printed %q", out)
	}
}

func TestTenantAndAPIKeyCreate(t *testing.T) {
	t.Parallel()
	pool, url := testdb.SchemaURL(t)
	out, err := runCLI(t, url, "tenant", "create", "acme", "--tier", "bulk")
	if err != nil {
		t.Fatal(err)
	}
	id, err := uuid.Parse(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("tenant create printed %q, want the tenant id", out)
	}
	out, err = runCLI(t, url, "apikey", "create", "--tenant", "acme", "--scope", "runs:read", "--scope", "runs:write", "--name", "ci")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("apikey create printed %d lines, want the key alone: %q", len(lines), out)
	}
	hash, err := checkKey(store.New(pool), context.Background(), lines[0])
	if err != nil {
		t.Fatalf("printed key %q: %v", lines[0], err)
	}
	key, err := store.New(pool).APIKeyAuthenticate(context.Background(), hash)
	if err != nil || key.TenantID != id || key.Name != "ci" || len(key.Scopes) != 2 {
		t.Fatalf("stored key = %+v, %v", key, err)
	}
}

func TestBadInputIsExplained(t *testing.T) {
	t.Parallel()
	_, url := testdb.SchemaURL(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"tenant", "create", "acme", "--tier", "gold"}, "unknown tier"},
		{[]string{"apikey", "create"}, "--tenant is required"},
		{[]string{"apikey", "create", "--tenant", "nobody"}, "not found"},
		{[]string{"apikey", "create", "--tenant", "x", "--scope", "root"}, "unknown scope"},
	}
	for _, tc := range cases {
		_, err := runCLI(t, url, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}

func TestMissingDatabaseNamesTheSetting(t *testing.T) {
	t.Parallel()
	_, err := runCLI(t, "", "migrate")
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Setting != "DATABASE_URL" {
		t.Fatalf("migrate without DATABASE_URL: %v", err)
	}
}

func TestDevRefusesNonLoopbackAddress(t *testing.T) {
	t.Parallel()
	_, err := runCLI(t, "", "dev", "--addr", "0.0.0.0:8080")
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Setting != "DUCTOR_ADDR" {
		t.Fatalf("dev on 0.0.0.0: %v", err)
	}
}

func TestTenantSet(t *testing.T) {
	t.Parallel()
	_, url := testdb.SchemaURL(t)
	if _, err := runCLI(t, url, "tenant", "create", "limited"); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, url, "tenant", "set", "limited", "--tier", "bulk", "--max-concurrency", "4", "--rate", "2.5")
	if err != nil || !strings.Contains(out, "tier=bulk max_concurrency=4 rate_per_second=2.5") {
		t.Fatalf("tenant set = %q, %v", out, err)
	}
	out, err = runCLI(t, url, "tenant", "set", "limited", "--rate", "0")
	if err != nil || !strings.Contains(out, "max_concurrency=4 rate_per_second=0 retention=30d") {
		t.Fatalf("changing one limit kept the other? %q, %v", out, err)
	}
	out, err = runCLI(t, url, "tenant", "set", "limited", "--retention", "720h")
	if err != nil || !strings.Contains(out, "rate_per_second=0 retention=30d") {
		t.Fatalf("tenant set --retention 720h = %q, %v", out, err)
	}
	out, err = runCLI(t, url, "tenant", "set", "limited", "--retention", "0")
	if err != nil || !strings.Contains(out, "retention=forever") {
		t.Fatalf("tenant set --retention 0 = %q, %v", out, err)
	}
	if _, err = runCLI(t, url, "tenant", "set", "limited", "--retention", "soon"); err == nil {
		t.Fatal("tenant set --retention soon was accepted")
	}
	if !strings.Contains(out, "schedule_to_start=default(5m0s)") {
		t.Fatalf("tenant set = %q, want the default schedule_to_start", out)
	}
	out, err = runCLI(t, url, "tenant", "set", "limited", "--schedule-to-start", "90s")
	if err != nil || !strings.Contains(out, "schedule_to_start=1m30s") || !strings.Contains(out, "max_concurrency=4") ||
		!strings.Contains(out, "retention=forever") {
		t.Fatalf("tenant set --schedule-to-start = %q, %v", out, err)
	}
	if _, err := runCLI(t, url, "tenant", "set", "limited", "--schedule-to-start", "soon"); !errors.Is(err, ErrUsage) {
		t.Fatalf("a bad duration = %v, want a usage error", err)
	}
}

// checkKey checks a key with the deployment's keyring and returns its hash.
func checkKey(s *store.Store, ctx context.Context, secret string) ([]byte, error) {
	kr, err := s.Keyring(ctx)
	if err != nil {
		return nil, err
	}
	p, err := kr.Check(secret)
	return p.Hash, err
}
