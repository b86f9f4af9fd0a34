package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/testdb"
)

// TestDevWithOwnPostgres is `make run` end to end: dev creates its own
// cluster, prints a working key, stops everything on cancellation, and
// reuses the cluster (and tenant) the second time.
func TestDevWithOwnPostgres(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "ductor-dev-")
	if err != nil {
		t.Fatal(err)
	}
	// The cluster runs as the postgres user when tests run as root.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	env := map[string]string{"DUCTOR_DEV_DIR": dir, "DUCTOR_ADDR": "127.0.0.1:0"}

	first := start(t, env, "dev")
	key := first.devKey(t)
	if code, body := get(t, first.BaseURL+"/api/v1/whoami", key); code != 200 || !strings.Contains(body, `"scopes":["admin"]`) {
		t.Fatalf("whoami with the dev key = %d %s", code, body)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "database-url")); err != nil || !strings.HasPrefix(string(b), "postgres") {
		t.Fatalf("dev saved no database URL beside its key: %q, %v", b, err)
	}
	port := readPort(t, dir)
	if err := first.Stop(t); err != nil {
		t.Fatalf("dev returned %v on Ctrl-C", err)
	}
	if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		c.Close()
		t.Fatalf("Postgres still listens on %s after dev stopped", port)
	}

	second := start(t, env, "dev")
	if got := second.devKey(t); got != key {
		t.Fatalf("second dev printed key %q, want the saved %q", got, key)
	}
	if code, _ := get(t, second.BaseURL+"/api/v1/whoami", key); code != 200 {
		t.Fatalf("the first key no longer works after restart: %d", code)
	}
	if err := second.Stop(t); err != nil {
		t.Fatal(err)
	}
}

func readPort(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pg", "port"))
	if err != nil {
		t.Fatalf("dev cluster remembers no port: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// TestDevAgainstDatabaseURL runs dev on a given database and checks the
// server's public endpoints.
func TestDevAgainstDatabaseURL(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	key := p.devKey(t)
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/api/v1/whoami": 200} {
		if code, body := get(t, p.BaseURL+path, key); code != want {
			t.Errorf("GET %s = %d %s", path, code, body)
		}
	}
	if code, body := get(t, p.BaseURL+"/api/v1/whoami", ""); code != 401 || !strings.Contains(body, `"code":"unauthorized"`) {
		t.Errorf("whoami without key = %d %s", code, body)
	}
}

// startDevOnTestDatabase runs dev on a fresh schema of the test database.
func startDevOnTestDatabase(t *testing.T) *program {
	t.Helper()
	_, url := testdb.SchemaURL(t)
	return start(t, map[string]string{"DATABASE_URL": url, "DUCTOR_ADDR": "127.0.0.1:0"}, "dev")
}
