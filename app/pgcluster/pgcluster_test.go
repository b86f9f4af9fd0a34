package pgcluster

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// testDir returns a fresh directory the postgres user can reach even when
// tests run as root, unlike t.TempDir, whose parent is private.
func testDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgcluster-test-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// start starts a cluster and destroys it when the test ends.
func start(t *testing.T, opts Options) *Cluster {
	t.Helper()
	c, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Destroy(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return c
}

func connect(t *testing.T, c *Cluster) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), c.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func queryString(t *testing.T, c *Cluster, sql string) string {
	t.Helper()
	var s string
	if err := connect(t, c).QueryRow(t.Context(), sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func TestStartStopReuse(t *testing.T) {
	t.Parallel()
	dir := testDir(t)
	c := start(t, Options{Dir: dir, Database: "app"})

	if got := queryString(t, c, "SELECT current_database() || ' ' || current_user"); got != "app "+Superuser {
		t.Fatalf("connected to %q", got)
	}
	if _, err := connect(t, c).Exec(t.Context(), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('yes')"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.URL(), "postgres://"+Superuser+"@127.0.0.1:"+strconv.Itoa(c.Port())+"/app?") {
		t.Fatalf("URL() = %s", c.URL())
	}

	again := start(t, Options{Dir: dir, Database: "app"})
	if again.URL() != c.URL() {
		t.Fatalf("reused running cluster at %s, want %s", again.URL(), c.URL())
	}
	pid := c.postmaster().pid

	if err := c.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	assertStopped(t, c.Port(), pid)
	if err := again.Stop(t.Context()); err != nil {
		t.Fatalf("stopping a stopped cluster: %v", err)
	}

	restarted := start(t, Options{Dir: dir, Database: "app"})
	if restarted.Port() != c.Port() {
		t.Errorf("restarted on port %d, want remembered %d", restarted.Port(), c.Port())
	}
	if got := queryString(t, restarted, "SELECT v FROM kept"); got != "yes" {
		t.Fatalf("kept = %q", got)
	}
	if got := queryString(t, restarted, "SHOW fsync"); got != "on" {
		t.Errorf("fsync = %s on a durable cluster", got)
	}
}

func TestStartStale(t *testing.T) {
	t.Parallel()
	dir := testDir(t)
	c := start(t, Options{Dir: dir, Fast: true})
	for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		if got := queryString(t, c, "SHOW "+name); got != "off" {
			t.Errorf("%s = %s on a Fast cluster", name, got)
		}
	}
	if got := queryString(t, c, "SHOW max_connections"); got != "300" {
		t.Errorf("max_connections = %s", got)
	}
	if got := queryString(t, c, "SHOW listen_addresses"); got != "127.0.0.1" {
		t.Errorf("listen_addresses = %s", got)
	}
	if err := c.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	// A postmaster.pid naming a live process that is not postgres, as after
	// a crash and pid reuse, and the remembered port taken meanwhile.
	stale := strconv.Itoa(os.Getpid()) + "\n" + c.dataDir() + "\n0\n" + strconv.Itoa(c.Port()) + "\n\n127.0.0.1\n0\nready\n"
	if err := os.WriteFile(c.pidFile(), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port())))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	restarted := start(t, Options{Dir: dir, Fast: true})
	if restarted.Port() == c.Port() {
		t.Fatalf("restarted on taken port %d", c.Port())
	}
	pid := restarted.postmaster().pid
	if err := restarted.Destroy(t.Context()); err != nil {
		t.Fatal(err)
	}
	assertStopped(t, restarted.Port(), pid)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Destroy left %s: %v", dir, err)
	}
}

// assertStopped checks that nothing listens on port and pid has exited.
func assertStopped(t *testing.T, port, pid int) {
	t.Helper()
	if pid <= 0 {
		t.Fatalf("no postmaster pid recorded")
	}
	if processRunning(pid) {
		t.Errorf("postmaster %d still running", pid)
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err == nil {
		conn.Close()
		t.Errorf("port %d still accepts connections", port)
	}
}

func TestStartUntraversableParent(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root hands the cluster to another user")
	}
	parent := testDir(t) // mode 0700, owned by root
	_, err := Start(t.Context(), Options{Dir: filepath.Join(parent, "pg")})
	if err == nil || !strings.Contains(err.Error(), "not traversable") || !strings.Contains(err.Error(), parent) {
		t.Fatalf("err = %v, want one naming %s as not traversable", err, parent)
	}
}

func TestFindBinaries(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, v := range []string{"9.6", "15", "13"} {
		bin := filepath.Join(root, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range binaryNames {
			if err := os.WriteFile(filepath.Join(bin, name), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Version 16 lacks initdb, so is skipped.
	if err := os.MkdirAll(filepath.Join(root, "16", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	notOnPath := func(string) (string, error) { return "", errors.New("not found") }

	b, err := findBinaries(notOnPath, root)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "15", "bin", "initdb"); b.initdb != want {
		t.Errorf("initdb = %s, want %s", b.initdb, want)
	}

	onPath := func(name string) (string, error) { return "/opt/pg/" + name, nil }
	if b, _ := findBinaries(onPath, root); b.pgCtl != "/opt/pg/pg_ctl" {
		t.Errorf("pg_ctl = %s, want the one on PATH", b.pgCtl)
	}

	_, err = findBinaries(notOnPath, filepath.Join(root, "none"))
	if err == nil || !strings.Contains(err.Error(), "initdb, pg_ctl, postgres") || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Errorf("err = %v", err)
	}
}

// A cluster started with a ClockOffset runs under libfaketime: its now()
// is that far from this process's clock, ahead or behind.
func TestClockOffset(t *testing.T) {
	t.Parallel()
	for _, offset := range []time.Duration{30 * time.Second, -30 * time.Second} {
		t.Run(offset.String(), func(t *testing.T) {
			t.Parallel()
			c := start(t, Options{Dir: testDir(t), Fast: true, ClockOffset: offset})
			var db time.Time
			before := time.Now()
			if err := connect(t, c).QueryRow(t.Context(), "SELECT now()").Scan(&db); err != nil {
				t.Fatal(err)
			}
			if got := db.Sub(before); got < offset-5*time.Second || got > offset+5*time.Second {
				t.Fatalf("the server's clock is %s from ours, want about %s", got, offset)
			}
		})
	}
}
