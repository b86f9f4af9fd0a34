package checker

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/pgcluster"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// A chain of ten 20 ms steps with a 60 s timeout, leased for 70 s (plus
// the worker's 10 s rescue window): both far longer than the outage, even
// on a loaded machine where the restart's recovery takes many seconds
// more. A step's timeout has to outlast the outage too, not only its
// lease: the handler waits for the same database, and one still waiting
// when its timeout passes fails and is retried, a second execution that
// at-least-once allows and this test would count (see
// TestOutageLongerThanAStepsTimeoutRetriesIt).
const outageChain = `
key: out-chain
steps:
  - {ref: s1, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 20}'}}
  - {ref: s2, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 20}'}}
  - {ref: s3, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 20}'}}
  - {ref: s4, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 20}'}}
  - {ref: s5, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 20}'}}
  - {ref: s6, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 20}'}}
  - {ref: s7, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 20}'}}
  - {ref: s8, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 20}'}}
  - {ref: s9, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 20}'}}
  - {ref: s10, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 20}'}}
edges:
  - {from: s1, to: s2}
  - {from: s2, to: s3}
  - {from: s3, to: s4}
  - {from: s4, to: s5}
  - {from: s5, to: s6}
  - {from: s6, to: s7}
  - {from: s7, to: s8}
  - {from: s8, to: s9}
  - {from: s9, to: s10}
`

// Postgres crashes (pg_ctl stop -m immediate) under a load of chains of
// 20 ms steps and stays down for five seconds. Meanwhile the API answers
// 503 unavailable with Retry-After. Afterwards every acknowledged run
// succeeds, no step ran twice (the worker kept the starts and results it
// could not write and wrote them once the database was back, instead of
// dropping them to be retried after their lease), no attempt that ran was
// reported lost (only a job whose fetch the crash swallowed, which never
// ran, is retried after the rescue window), and the slowest chains took
// seconds longer, not minutes.
func TestOutageLosesNoResultAndRunsNoStepTwice(t *testing.T) {
	t.Parallel()
	c := startCluster(t, pgcluster.Options{}) // durable: a crash must not lose commits
	testdb.Definition(t, c.store, c.tenant, outageChain)
	StartWorker(t, c.cluster.URL(), WorkerOptions{RescueWindow: 10 * time.Second})

	load := c.loadChains(t)
	load.until(t, 20, time.Minute)
	if err := c.cluster.Crash(c.ctx); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	c.expectUnavailable(t)
	for time.Since(down) < 5*time.Second {
		time.Sleep(50 * time.Millisecond) // the outage lasts five seconds; the load goes on meanwhile
	}
	if _, err := pgcluster.Start(c.ctx, c.opts); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	load.until(t, load.count()+20, time.Minute)
	ids, refused := load.stop()

	durations := c.chainsEnd(t, ids)
	c.settleJobs(t, 30*time.Second)
	found, strandedFetches := c.outageViolations(t)
	if len(found) > 0 {
		t.Fatalf("%d violations:\n%s", len(found), strings.Join(found, "\n"))
	}
	slices.Sort(durations)
	p50, p99 := durations[len(durations)/2], durations[len(durations)*99/100]
	if p99 > 20*time.Second {
		t.Errorf("chains' p99 %s, want seconds", p99)
	}
	t.Logf("down %s; %d chains acknowledged, %d refused during the outage, all succeeded; no step ran twice; %d fetches lost with the database and retried; chain p50 %s, p99 %s, max %s",
		back.Sub(down).Round(time.Millisecond), len(ids), refused, strandedFetches, p50.Round(time.Millisecond), p99.Round(time.Millisecond),
		durations[len(durations)-1].Round(time.Millisecond))
}

// A step that cannot hear back from its own database for longer than its
// timeout (an outage swallowed the acknowledgement of its handler's
// commit, and the database comes back too late) fails as the executor
// finds it, timed out, and is retried by its policy: it executes twice, once
// in each attempt. The worker records the failed attempt's result once the
// database is back, so nothing is reported lost, and no attempt executes
// twice. This is how a step runs twice across an outage with nothing
// lost, and why TestOutageLosesNoResultAndRunsNoStepTwice gives its steps
// a timeout longer than its outage.
func TestOutageLongerThanAStepsTimeoutRetriesIt(t *testing.T) {
	t.Parallel()
	c := startCluster(t, pgcluster.Options{})
	testdb.Definition(t, c.store, c.tenant, `
key: out-timeout
steps:
  - {ref: s1, type: task, timeout: 3s, with: {handler: checker.step, input_expr: '{"outage_attempts": 1}'}}
`)
	// Leased for 33 s: the timed-out result waits for the database far
	// longer than the outage and a loaded machine's crash recovery take.
	StartWorker(t, c.cluster.URL(), WorkerOptions{RescueWindow: 30 * time.Second})
	id := c.start(t, "out-timeout", nil)
	testwait.Eventually(t, 30*time.Second, "the first attempt's execution", func() bool {
		var n int
		err := c.pool.QueryRow(c.ctx, `SELECT count(*) FROM checker_execution WHERE run_id = $1`, id).Scan(&n)
		return err == nil && n == 1
	})
	if err := c.cluster.Crash(c.ctx); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	for time.Since(down) < 6*time.Second {
		time.Sleep(50 * time.Millisecond) // the outage outlasts the step's 3 s timeout
	}
	if _, err := pgcluster.Start(c.ctx, c.opts); err != nil {
		t.Fatal(err)
	}
	if run := c.waitRun(t, id, time.Minute, ended); run.Status != engine.RunSucceeded {
		t.Fatalf("run ended %s:\n%s", run.Status, Dump(c.ctx, c.pool, id))
	}
	c.settleJobs(t, 30*time.Second)
	found, err := Check(c.ctx, c.pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("%d violations:\n%s", len(found), strings.Join(found, "\n"))
	}
	got, err := lines(c.ctx, c.pool, `SELECT format('attempt %s executed %s times, ended %s', a.attempt,
		       (SELECT count(*) FROM checker_execution e WHERE e.run_id = a.run_id AND e.node = a.node AND e.attempt = a.attempt),
		       coalesce(a.error->>'code', 'ok'))
		FROM run_attempt a WHERE a.run_id = $1 AND a.node = 's1' ORDER BY a.attempt`, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"attempt 1 executed 1 times, ended timeout", "attempt 2 executed 1 times, ended ok"}
	if !slices.Equal(got, want) {
		t.Fatalf("attempts %q, want %q:\n%s", got, want, Dump(c.ctx, c.pool, id))
	}
}

// outageViolations is what the checks found after an outage, and how many
// attempts were reported lost without ever running: a job whose fetch
// the crash swallowed (River never received it) is retried after the
// rescue window. An attempt that ran and was reported lost would be a
// result dropped; a step that ran twice, a result dropped or written
// twice.
func (c *ownCluster) outageViolations(t *testing.T) ([]string, int) {
	t.Helper()
	found, err := Check(c.ctx, c.pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT format('run %s: node %s executed %s times (%s)', e.run_id, e.node, count(*),
		        string_agg(format('attempt %s by pid %s at %s, ended %s', e.attempt, e.pid, e.started_at,
		                          coalesce(a.error->>'code', CASE WHEN a.finished_at IS NULL THEN 'unfinished' ELSE 'ok' END)), '; ' ORDER BY e.id))
		 FROM checker_execution e LEFT JOIN run_attempt a ON a.run_id = e.run_id AND a.node = e.node AND a.attempt = e.attempt
		 GROUP BY e.run_id, e.node HAVING count(*) > 1`,
		`SELECT format('run %s: node %s attempt %s ran and was reported lost', a.run_id, a.node, a.attempt)
		 FROM run_attempt a JOIN checker_execution e ON e.run_id = a.run_id AND e.node = a.node AND e.attempt = a.attempt
		 WHERE a.error->>'code' = 'worker_lost'`,
	} {
		more, err := lines(c.ctx, c.pool, q)
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, more...)
	}
	var stranded int
	if err := c.pool.QueryRow(c.ctx, `SELECT count(*) FROM run_attempt WHERE error->>'code' = 'worker_lost'`).Scan(&stranded); err != nil {
		t.Fatal(err)
	}
	return found, stranded
}

// expectUnavailable checks that the API answers 503 unavailable with
// Retry-After while the database is down (rather than 500 internal).
func (c *ownCluster) expectUnavailable(t *testing.T) {
	t.Helper()
	req, _ := http.NewRequest("GET", c.api.URL+"/api/v1/runs", nil)
	req.Header.Set("Authorization", "Bearer "+c.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("GET /api/v1/runs while the database is down: %d, Retry-After %q; want 503 with Retry-After",
			res.StatusCode, res.Header.Get("Retry-After"))
	}
}

// chainsEnd waits for every run to end succeeded and returns how long
// each took, by the database's clock.
func (c *ownCluster) chainsEnd(t *testing.T, ids []uuid.UUID) []time.Duration {
	t.Helper()
	var out []time.Duration
	for _, id := range ids {
		run := c.waitRun(t, id, 2*time.Minute, ended)
		if run.Status != engine.RunSucceeded || run.FinishedAt == nil {
			t.Fatalf("run %s ended %s: %v", id, run.Status, run.State.Error)
		}
		out = append(out, run.FinishedAt.Sub(run.CreatedAt))
	}
	return out
}

// chainLoad triggers chains one after another, up to four at a time,
// counting those acknowledged and those refused.
type chainLoad struct {
	mu      sync.Mutex
	acked   []uuid.UUID
	refused int
	done    chan struct{}
	stopped chan struct{}
}

func (c *ownCluster) loadChains(t *testing.T) *chainLoad {
	t.Helper()
	l := &chainLoad{done: make(chan struct{}), stopped: make(chan struct{})}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-l.done:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
				run, _, err := c.coord.Runs.Start(ctx, runs.Trigger{TenantID: c.tenant, Definition: "out-chain"}, nil)
				cancel()
				l.mu.Lock()
				if err == nil {
					l.acked = append(l.acked, run.ID)
				} else {
					l.refused++
				}
				l.mu.Unlock()
				time.Sleep(50 * time.Millisecond) // the load's pace: a trigger every 50 ms per driver
			}
		})
	}
	go func() { wg.Wait(); close(l.stopped) }()
	t.Cleanup(func() { l.stop() })
	return l
}

func (l *chainLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// until waits until n chains are acknowledged.
func (l *chainLoad) until(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	if !testwait.Until(context.Background(), timeout, func() bool { return l.count() >= n }) {
		t.Fatalf("only %d of %d chains acknowledged within %s", l.count(), n, timeout)
	}
}

// stop ends the load and returns what it acknowledged and refused.
func (l *chainLoad) stop() ([]uuid.UUID, int) {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	<-l.stopped
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]uuid.UUID(nil), l.acked...), l.refused
}

// settleJobs waits until no River job of Ductor's is left running or
// waiting: a job whose completion River could not write during the outage
// is completed by the sweep after the rescue window.
func (c *ownCluster) settleJobs(t *testing.T, timeout time.Duration) {
	t.Helper()
	testwait.Until(context.Background(), timeout, func() bool {
		left, err := Jobs(c.ctx, c.pool)
		if err != nil {
			t.Fatal(err)
		}
		return len(left) == 0
	})
}
