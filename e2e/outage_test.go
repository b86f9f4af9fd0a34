package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/pgcluster"
	"github.com/ductor/ductor/app/testwait"
)

// While Postgres is down, `ductor dev` logs the outage once (and then at
// most once per interval, 30 s) instead of every failed fetch of every
// queue, and says when the database is back.
func TestDatabaseOutageIsLoggedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ductor-outage-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // the postgres user runs the server when we are root
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	opts := pgcluster.Options{Dir: filepath.Join(dir, "pg"), Database: "ductor"} // durable: a crash keeps the schema
	cluster, err := pgcluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Destroy(context.Background()) })
	p := start(t, map[string]string{"DATABASE_URL": cluster.URL(), "DUCTOR_ADDR": "127.0.0.1:0", "DUCTOR_PRUNE_INTERVAL": "1s"}, "dev")

	if err := cluster.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 30*time.Second, "the outage in the log", func() bool { return strings.Contains(p.Stderr.String(), "outage=") })
	before := logLineCount(p)
	window := time.NewTimer(3 * time.Second) // how long the log is watched: 60 fetch polls of each of 7 queues
	<-window.C
	during := logLineCount(p) - before
	if during > 3 {
		t.Errorf("%d lines logged in 3 s of outage, want at most 3:\n%s", during, p.Stderr.String())
	}
	if _, err := pgcluster.Start(ctx, opts); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 30*time.Second, "the log to say the database is back", func() bool {
		return strings.Contains(p.Stderr.String(), `msg="database reachable again"`)
	})
	after := p.Stderr.String()[strings.Index(p.Stderr.String(), "database reachable again"):]
	if strings.Contains(after, "level=ERROR") {
		t.Errorf("errors after the database came back:\n%s", after)
	}
	if n := strings.Count(p.Stderr.String(), "outage="); n != 1 {
		t.Errorf("the outage was announced %d times, want once:\n%s", n, p.Stderr.String())
	}
}

func logLineCount(p *program) int { return strings.Count(p.Stderr.String(), "\n") }
