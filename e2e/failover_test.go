package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/pgcluster"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// The primary dies (pg_ctl stop -m immediate) under a stream of starts
// and signals to two Ductor processes on a multi-host URL, and its
// synchronous standby is promoted. Afterwards, read from the new
// primary: every start the API acknowledged exists, every acknowledged
// signal was delivered, every run ends, no step's result was recorded
// twice, and both processes work against the new primary within 30 s of
// the promotion, without a restart.
func TestFailoverToSynchronousStandbyLosesNothing(t *testing.T) {
	t.Parallel()
	f := newFailover(t, true)
	f.run(t)
	if lost := f.lostStarts(t); len(lost) > 0 {
		t.Errorf("%d of %d acknowledged starts are missing after the failover: %v", len(lost), len(f.acked), lost)
	}
	if f.lostSignals > 0 {
		t.Errorf("%d acknowledged signals were missing after the failover", f.lostSignals)
	}
	f.checkSettled(t)
}

// With asynchronous replication, the last writes the primary acknowledged
// before it died may be missing on the standby. What is lost is simply
// absent; nothing that exists is stuck, and both processes carry on.
func TestFailoverToAsynchronousStandbyLeavesNothingStuck(t *testing.T) {
	t.Parallel()
	f := newFailover(t, false)
	f.run(t)
	lost := f.lostStarts(t)
	t.Logf("asynchronous replication: %d of %d acknowledged starts and %d acknowledged signals lost in the failover (the signals sent again)", len(lost), len(f.acked), f.lostSignals)
	f.checkSettled(t)
}

// failoverDefinitions are the load: a chain, a scatter, a run waiting on
// a signal, and one waiting on a timer.
var failoverDefinitions = map[string]string{
	"chain": `
key: chain
steps:
  - {ref: a, type: task, with: {handler: builtin.echo, input_expr: input}}
  - {ref: b, type: task, with: {handler: builtin.echo, input_expr: steps.a.output}}
  - {ref: c, type: task, with: {handler: builtin.echo, input_expr: steps.b.output}}
edges:
  - {from: a, to: b}
  - {from: b, to: c}
`,
	"scatter": `
key: scatter
steps:
  - ref: each
    type: scatter
    with:
      items_expr: '[1, 2, 3, 4, 5]'
      do: {type: task, with: {handler: builtin.echo, input_expr: item}}
  - {ref: all, type: gather, with: {scatter_ref: each}}
edges:
  - {from: each, to: all}
`,
	"signal": `
key: signal
output_expr: steps.go.output
steps:
  - {ref: go, type: signal, with: {name: go, timeout: 10m, on_timeout: fail}}
`,
	"timer": `
key: timer
steps:
  - {ref: pause, type: wait, with: {duration: 2s}}
  - {ref: after, type: task, with: {handler: builtin.echo, input_expr: input}}
edges:
  - {from: pause, to: after}
`,
}

var failoverKinds = []string{"chain", "scatter", "signal", "timer"}

// failoverDelay is how long the primary is gone before the standby is
// promoted.
const failoverDelay = 5 * time.Second

type failover struct {
	primary, standby *pgcluster.Cluster
	key              string
	procs            []*ductorProcess
	client           *http.Client

	mu        sync.Mutex
	acked     map[string]string // run id → definition, for every acknowledged start
	signalled map[string]bool   // signal runs whose signal was acknowledged
	// unacked are the signal runs that exist though their start was not
	// acknowledged (its answer lost in the outage); they are signalled too.
	unacked  map[string]bool
	statuses map[int]int // every status the API answered, counted
	// lostSignals counts acknowledged signals the new primary did not have.
	lostSignals int
	promoted    time.Time
}

// ductorProcess is `ductor serve` as an OS process of its own.
type ductorProcess struct {
	cmd  *exec.Cmd
	base string
	out  *lockedBuffer
}

func newFailover(t *testing.T, synchronous bool) *failover {
	t.Helper()
	if testing.Short() {
		t.Skip("failover: starts two Postgres clusters")
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ductor-failover-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // the postgres user runs the servers when we are root
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	f := &failover{acked: map[string]string{}, signalled: map[string]bool{}, unacked: map[string]bool{}, statuses: map[int]int{},
		client: &http.Client{Timeout: 15 * time.Second}}
	f.primary, err = pgcluster.Start(ctx, pgcluster.Options{Dir: filepath.Join(dir, "primary"), Database: "ductor"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.primary.Destroy(context.Background()) })
	f.prepareSchema(t)
	f.standby, err = f.primary.StartStandby(ctx, pgcluster.Options{Dir: filepath.Join(dir, "standby")}, "standby1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.standby.Destroy(context.Background()) })
	if synchronous {
		if err := f.primary.Synchronous(ctx, "standby1"); err != nil {
			t.Fatal(err)
		}
	}
	url := pgcluster.MultiHostURL("ductor", f.primary, f.standby)
	for range 2 {
		f.procs = append(f.procs, startDuctorProcess(t, url))
	}
	return f
}

// prepareSchema migrates the primary and makes a tenant, its key and
// the load's definitions.
func (f *failover) prepareSchema(t *testing.T) {
	t.Helper()
	cmd := exec.Command(ductorBinary(t), "migrate")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+f.primary.URL())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ductor migrate: %v\n%s", err, out)
	}
	pool, err := pgxpool.New(context.Background(), f.primary.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	_, f.key = testdb.APIKey(t, s, tenant, nil)
	for _, kind := range failoverKinds {
		testdb.Definition(t, s, tenant.ID, failoverDefinitions[kind])
	}
}

func startDuctorProcess(t *testing.T, databaseURL string) *ductorProcess {
	t.Helper()
	p := &ductorProcess{out: &lockedBuffer{}}
	addr := freeAddr(t)
	p.base = "http://" + addr
	p.cmd = exec.Command(ductorBinary(t), "serve", "--roles", "api,coordinator,steps")
	p.cmd.Env = append(os.Environ(), "DATABASE_URL="+databaseURL, "DUCTOR_ADDR="+addr, "DUCTOR_LOG_LEVEL=info")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		if t.Failed() {
			t.Logf("ductor process %d said:\n%s", p.cmd.Process.Pid, tail(p.out.String(), 6000))
		}
	})
	testwait.Eventually(t, 60*time.Second, "ductor serve to answer /readyz", func() bool {
		resp, err := http.Get(p.base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return p
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// call sends one API request to process i and returns the status and the
// decoded answer (status 0: no answer).
func (f *failover) call(i int, method, path string, body any) (int, map[string]any) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, f.procs[i%len(f.procs)].base+"/api/v1"+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Authorization", "Bearer "+f.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	f.mu.Lock()
	f.statuses[resp.StatusCode]++
	f.mu.Unlock()
	return resp.StatusCode, out
}

// run drives the load, fails the primary over to the standby in the
// middle of it, and signals every acknowledged signal run until its
// signal is acknowledged too.
func (f *failover) run(t *testing.T) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.startLoop(ctx, w)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.signalLoop(ctx)
	}()
	f.waitAcked(t, 40)
	if err := f.primary.Crash(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A failover manager takes a while to decide the primary is gone; the
	// load goes on meanwhile, against a primary that refuses connections
	// and a standby that refuses writes.
	pause(context.Background(), failoverDelay)
	if err := f.standby.Promote(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.promoted = time.Now()
	before := len(f.acked)
	f.mu.Unlock()
	f.bothWorking(t)
	t.Logf("both processes worked %s after the promotion", time.Since(f.promoted).Round(100*time.Millisecond))
	f.waitAcked(t, before+40)
	stop()
	wg.Wait()
	f.signalAll(t)
	f.mu.Lock()
	t.Logf("%d starts acknowledged; answers by status: %v", len(f.acked), f.statuses)
	bad := f.statuses[500]
	f.mu.Unlock()
	if bad > 0 {
		t.Errorf("the API answered 500 %d times during the failover, want 503 unavailable", bad)
	}
	for i, p := range f.procs {
		log := p.out.String()
		if down, back := strings.Count(log, `"outage":`), strings.Count(log, "database reachable again"); down != 1 || back != 1 {
			t.Errorf("process %d logged the outage %d times and its end %d times, want once each", i, down, back)
		}
	}
}

func (f *failover) startLoop(ctx context.Context, w int) {
	for n := 0; ctx.Err() == nil; n++ {
		kind := failoverKinds[(w+n)%len(failoverKinds)]
		status, out := f.call(w+n, "POST", "/runs", map[string]any{"definition": kind, "input": map[string]any{"w": w, "n": n}})
		if status == 201 || status == 200 {
			if id, ok := out["id"].(string); ok {
				f.mu.Lock()
				f.acked[id] = kind
				f.mu.Unlock()
			}
			pause(ctx, 20*time.Millisecond) // a steady load, not a flood the machine cannot keep up with
			continue
		}
		pause(ctx, 50*time.Millisecond)
	}
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// signalLoop signals acknowledged signal runs as the load goes on.
func (f *failover) signalLoop(ctx context.Context) {
	for ctx.Err() == nil {
		for _, id := range f.unsignalled() {
			f.signal(id)
		}
		pause(ctx, 100*time.Millisecond)
	}
}

func (f *failover) unsignalled() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id, kind := range f.acked {
		if kind == "signal" && !f.signalled[id] {
			ids = append(ids, id)
		}
	}
	for id := range f.unacked {
		if !f.signalled[id] {
			ids = append(ids, id)
		}
	}
	return ids
}

// signal sends run id its signal, to one process or the other by the
// id, under a request id of its own so that a retry after a lost answer
// delivers it once.
func (f *failover) signal(id string) {
	status, _ := f.call(int(id[0]), "POST", "/runs/"+id+"/signals", signalBody(id))
	// 409: a signal with this request id is stored already (an earlier
	// try committed, its answer lost in the failover).
	if status == 202 || status == 409 {
		f.mu.Lock()
		f.signalled[id] = true
		f.mu.Unlock()
	}
}

// signalAll signals every acknowledged signal run that exists until its
// signal is acknowledged.
func (f *failover) signalAll(t *testing.T) {
	t.Helper()
	lost := map[string]bool{}
	for _, id := range f.lostStarts(t) {
		lost[id] = true
	}
	// A signal acknowledged before the failover is sent again: 409 says it
	// is stored; 202 says the new primary did not have it (asynchronous
	// replication lost it) and has it now.
	f.mu.Lock()
	var acked []string
	for id := range f.signalled {
		if !lost[id] {
			acked = append(acked, id)
		}
	}
	f.mu.Unlock()
	// A start whose answer was lost in the outage (503, or the connection
	// cut) may have committed all the same: its run exists, waiting on a
	// signal the load never sent. It is signalled like the acknowledged
	// ones (the checks below still want every run to end).
	for _, id := range f.unacknowledgedSignalRuns(t) {
		f.mu.Lock()
		f.unacked[id] = true
		f.mu.Unlock()
		t.Logf("signal run %s exists though its start was not acknowledged (its answer was lost): signalled too", id)
	}
	for _, id := range acked {
		if status, _ := f.call(int(id[0]), "POST", "/runs/"+id+"/signals", signalBody(id)); status == 202 {
			f.lostSignals++
		}
	}
	testwait.Eventually(t, 60*time.Second, "every signal to be acknowledged", func() bool {
		left := 0
		for _, id := range f.unsignalled() {
			if lost[id] {
				continue
			}
			f.signal(id)
			left++
		}
		return left == 0
	})
}

// unacknowledgedSignalRuns lists the signal runs on the new primary whose
// start the API did not acknowledge.
func (f *failover) unacknowledgedSignalRuns(t *testing.T) []string {
	t.Helper()
	rows, err := f.pool(t).Query(context.Background(), `SELECT id::text FROM run WHERE definition_key = 'signal'`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, id := range ids {
		if _, ok := f.acked[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// signalBody is run id's one signal: always the same request id, so that
// sending it again delivers it at most once.
func signalBody(id string) map[string]any {
	return map[string]any{"name": "go", "request_id": "go-" + id, "payload": map[string]any{"run": id}}
}

func (f *failover) waitAcked(t *testing.T, n int) {
	t.Helper()
	testwait.Eventually(t, 90*time.Second, fmt.Sprintf("%d acknowledged starts", n), func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.acked) >= n
	})
}

// bothWorking checks that each process works against the new primary
// within 30 s of the promotion: its API starts a run, and its workers
// end runs (the log's "run ended" lines after the promotion say so).
func (f *failover) bothWorking(t *testing.T) {
	t.Helper()
	for i, p := range f.procs {
		testwait.Eventually(t, 30*time.Second, fmt.Sprintf("process %d to start a run after the promotion", i), func() bool {
			status, out := f.call(i, "POST", "/runs", map[string]any{"definition": "chain", "input": map[string]any{"probe": i}})
			return status == 201 && out["id"] != nil
		})
		testwait.Eventually(t, 30*time.Second, fmt.Sprintf("process %d's workers to end a run after the promotion", i), func() bool {
			return p.endedRunSince(f.promoted)
		})
	}
	if took := time.Since(f.promoted); took > 30*time.Second {
		t.Errorf("both processes worked against the new primary only %s after the promotion, want within 30 s", took.Round(time.Second))
	}
}

// endedRunSince reports whether the process logged a run's end after at.
func (p *ductorProcess) endedRunSince(at time.Time) bool {
	for _, line := range strings.Split(p.out.String(), "\n") {
		var l struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "run ended" && l.Time.After(at) {
			return true
		}
	}
	return false
}

// pool opens a pool on the new primary.
func (f *failover) pool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), f.standby.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// lostStarts lists the acknowledged starts the new primary does not have.
func (f *failover) lostStarts(t *testing.T) []string {
	t.Helper()
	f.mu.Lock()
	ids := make([]string, 0, len(f.acked))
	for id := range f.acked {
		ids = append(ids, id)
	}
	f.mu.Unlock()
	pool := f.pool(t)
	rows, err := pool.Query(context.Background(), `SELECT a FROM unnest($1::uuid[]) a WHERE NOT EXISTS (SELECT 1 FROM run WHERE id = a)`, ids)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lost []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		lost = append(lost, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return lost
}

// checkSettled waits for every run to end, then checks that each
// succeeded, each signal run with the signal it was sent, and that no
// step's result was recorded twice.
func (f *failover) checkSettled(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	pool := f.pool(t)
	var open int
	var stuck []string
	ended := testwait.Until(ctx, 120*time.Second, func() bool {
		stuck = stuck[:0]
		rows, err := pool.Query(ctx, `SELECT id::text || ' ' || definition_key || ' ' || status FROM run WHERE status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out') ORDER BY created_at`)
		if err != nil {
			return false
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if rows.Scan(&s) == nil {
				stuck = append(stuck, s)
			}
		}
		return rows.Err() == nil && len(stuck) == 0
	})
	open = len(stuck)
	if !ended && open == 0 {
		t.Fatal("could not read the runs from the new primary")
	}
	t.Logf("every run ended %s after the promotion", time.Since(f.promoted).Round(100*time.Millisecond))
	if open > 0 {
		f.explainStuck(t, pool, stuck)
		t.Fatalf("%d runs have not ended %s after the promotion: %s", open, time.Since(f.promoted).Round(time.Second), strings.Join(stuck[:min(len(stuck), 20)], "; "))
	}
	var failed []string
	rows, err := pool.Query(ctx, `SELECT id::text || ' ' || definition_key || ' ' || status FROM run WHERE status <> 'succeeded'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		failed = append(failed, s)
	}
	rows.Close()
	if len(failed) > 0 {
		t.Errorf("%d runs did not succeed: %s", len(failed), strings.Join(failed[:min(len(failed), 20)], "; "))
	}
	var leaders int
	testwait.Eventually(t, 30*time.Second, "River to elect a leader on the new primary", func() bool {
		err := pool.QueryRow(ctx, `SELECT count(*) FROM river_leader WHERE expires_at > now()`).Scan(&leaders)
		return err == nil && leaders == 1
	})
	var twice int
	err = pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM run_attempt WHERE finished_at IS NOT NULL AND error IS NULL
		GROUP BY tenant_id, run_id, node, generation HAVING count(*) > 1) d`).Scan(&twice)
	if err != nil {
		t.Fatal(err)
	}
	if twice > 0 {
		t.Errorf("%d steps have a result recorded twice", twice)
	}
	var wrong int
	err = pool.QueryRow(ctx, `SELECT count(*) FROM run WHERE definition_key = 'signal' AND status = 'succeeded'
		AND (state -> 'output' -> 'run') IS DISTINCT FROM to_jsonb(id::text)`).Scan(&wrong)
	if err != nil {
		t.Fatal(err)
	}
	if wrong > 0 {
		var sample string
		_ = pool.QueryRow(ctx, `SELECT id::text || ' ' || left(state::text, 600) FROM run WHERE definition_key = 'signal' AND (state -> 'output' -> 'run') IS DISTINCT FROM to_jsonb(id::text) LIMIT 1`).Scan(&sample)
		t.Errorf("%d signal runs ended without the signal they were sent (one: %s)", wrong, sample)
	}
}

// explainStuck logs what the database holds about runs that have not
// ended: their wake flag and River's jobs for them, and River's leader.
func (f *failover) explainStuck(t *testing.T, pool *pgxpool.Pool, stuck []string) {
	t.Helper()
	ctx := context.Background()
	for _, line := range stuck[:min(len(stuck), 5)] {
		id := strings.Fields(line)[0]
		var about string
		err := pool.QueryRow(ctx, `SELECT 'tick_requested=' || tick_requested || ' updated_at=' || updated_at || ' jobs=' || coalesce((
			SELECT string_agg(id || ':' || kind || ':' || state || ':attempt ' || attempt || ':scheduled ' || scheduled_at || ':errors ' || coalesce(array_to_string(errors, ','), ''), '; ')
			FROM river_job WHERE args->>'run_id' = run.id::text), 'none')
			FROM run WHERE id = $1`, id).Scan(&about)
		t.Logf("stuck run %s: %s (err %v)", line, about, err)
	}
	var leader string
	err := pool.QueryRow(ctx, `SELECT coalesce(string_agg(leader_id || ' elected ' || elected_at || ' expires ' || expires_at, '; '), 'none') FROM river_leader`).Scan(&leader)
	t.Logf("river leader: %s (err %v); now %s", leader, err, time.Now().UTC())
}
