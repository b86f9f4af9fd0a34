package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// The backup and restore of docs/operations.md, on a live installation:
// `ductor serve` runs against its own database with runs waiting on a
// timer and on a signal; `pg_dump --format=custom` dumps it while it runs;
// `pg_restore --no-owner` restores the dump into a new database; a new
// `ductor serve` against the restored database accepts the same API key,
// shows the run that had finished, and the waiting runs continue and
// finish there.
func TestBackupAndRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	pgDump, pgRestore := postgresClient(t, "pg_dump"), postgresClient(t, "pg_restore")
	source := newDatabase(t, "backup_src")
	env := map[string]string{"DATABASE_URL": source, "DUCTOR_ADDR": "127.0.0.1:0", "DUCTOR_ROLES": "api,coordinator,steps"}
	ductorCLI(t, env, "migrate")
	ductorCLI(t, env, "tenant", "create", "acme")
	key := strings.TrimSpace(ductorCLI(t, env, "apikey", "create", "--tenant", "acme"))
	live := &keyed{program: start(t, env, "serve"), key: key}

	done := live.startRun(t, "backup-done", `
key: backup-done
steps:
  - {ref: hello, type: task, with: {handler: builtin.echo}}
`, map[string]any{"n": 1})
	live.waitStatus(t, done, "succeeded")
	timer := live.startRun(t, "backup-timer", `
key: backup-timer
steps:
  - {ref: nap, type: wait, with: {duration: 4s}}
  - {ref: after, type: task, with: {handler: builtin.echo}}
edges:
  - {from: nap, to: after}
`, map[string]any{"n": 2})
	signal := live.startRun(t, "backup-signal", `
key: backup-signal
steps:
  - {ref: go, type: signal, with: {name: go}}
  - {ref: after, type: task, with: {handler: builtin.echo}}
edges:
  - {from: go, to: after}
`, map[string]any{"n": 3})
	live.waitStatus(t, timer, "waiting")
	live.waitStatus(t, signal, "waiting")

	dump := filepath.Join(t.TempDir(), "ductor.dump")
	runClient(t, pgDump, append(slices.Clone(dumpFlags), "--file="+dump, "--dbname="+source)...)
	if err := live.Stop(t); err != nil {
		t.Fatalf("the source process: %v", err)
	}
	restored := newDatabase(t, "backup_dst")
	runClient(t, pgRestore, append(slices.Clone(restoreFlags), "--dbname="+restored, dump)...)

	env["DATABASE_URL"] = restored
	ductorCLI(t, env, "migrate")
	again := &keyed{program: start(t, env, "serve"), key: key}
	again.waitStatus(t, done, "succeeded")
	if code, out := again.call(t, "POST", "/runs/"+signal+"/signals", "application/json",
		`{"name": "go", "request_id": "go-1"}`); code/100 != 2 {
		t.Fatalf("signal after restore = %d %v", code, out)
	}
	for _, id := range []string{timer, signal} {
		run := again.waitStatus(t, id, "succeeded")
		if out, _ := json.Marshal(run["output"]); !strings.Contains(string(out), `"n"`) {
			t.Errorf("run %s ended with output %s, want its input echoed", id, out)
		}
	}
}

// dumpFlags and restoreFlags are the flags of the backup and restore
// commands docs/operations.md gives, which TestBackupCommandsAreDocumented
// keeps the same.
var (
	dumpFlags    = []string{"--format=custom"}
	restoreFlags = []string{"--no-owner", "--exit-on-error"}
)

// The backup section of docs/operations.md gives the commands this test
// runs.
func TestBackupCommandsAreDocumented(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"pg_dump " + strings.Join(dumpFlags, " ") + " --file=ductor.dump --dbname=",
		"pg_restore " + strings.Join(restoreFlags, " ") + " --dbname=",
		"ductor migrate", "TestBackupAndRestoreRoundTrip",
	} {
		if !strings.Contains(string(page), cmd) {
			t.Errorf("docs/operations.md does not give %q", cmd)
		}
	}
}

// keyed is a running ductor called with one API key.
type keyed struct {
	*program
	key string
}

func (k *keyed) call(t *testing.T, method, path, contentType, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, k.BaseURL+"/api/v1"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+k.key)
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return res.StatusCode, out
}

// startRun publishes the YAML definition and starts a run of it.
func (k *keyed) startRun(t *testing.T, key, doc string, input any) string {
	t.Helper()
	if code, out := k.call(t, "POST", "/definitions/"+key+"/versions", "application/yaml", doc); code != http.StatusCreated {
		t.Fatalf("publish %s: %d %v", key, code, out)
	}
	raw, _ := json.Marshal(map[string]any{"definition": key, "input": input})
	code, out := k.call(t, "POST", "/runs", "application/json", string(raw))
	if code != http.StatusCreated {
		t.Fatalf("start %s: %d %v", key, code, out)
	}
	return out["id"].(string)
}

// waitStatus polls the run until it has the status, and returns it.
func (k *keyed) waitStatus(t *testing.T, id, status string) map[string]any {
	t.Helper()
	var seen map[string]any
	if !testwait.Until(context.Background(), 60*time.Second, func() bool {
		_, seen = k.call(t, "GET", "/runs/"+id, "", "")
		return seen["status"] == status
	}) {
		t.Fatalf("run %s never %s: %v", id, status, seen)
	}
	return seen
}

// newDatabase creates a database in the test cluster, dropped when the
// test ends, and returns its URL.
func newDatabase(t *testing.T, prefix string) string {
	t.Helper()
	ctx := context.Background()
	base := testdb.URL(t)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := prefix + "_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// postgresClient finds a PostgreSQL client program on PATH or in Debian's
// /usr/lib/postgresql/*/bin, the newest first.
func postgresClient(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if p, err := exec.LookPath(filepath.Join(dirs[i], name)); err == nil {
			return p
		}
	}
	t.Fatalf("%s not found on PATH or under /usr/lib/postgresql/*/bin", name)
	return ""
}

func runClient(t *testing.T, program string, args ...string) {
	t.Helper()
	out, err := exec.Command(program, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(program), strings.Join(args, " "), err, out)
	}
}
