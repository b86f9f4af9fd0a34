package shell

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// resultGroup records step results in groups (see grouper): a flusher
// takes every result that is ready, decides their runs together with no
// transaction open, and then, in one transaction, persists those it can
// lock without waiting and that are still as read (one statement per kind
// of row for all of them) and stores the other results for their runs'
// tick jobs.
//
// A step worker hands its result over and returns without waiting for the
// group to commit, so its River slot is free for the next job at once:
// a worker that waited would hold the slot for a whole group, and the
// workers of one group would free their slots together, making every other
// tenant's step wait for the next group. A result that cannot be written
// because the database is unavailable (restarting, say) or a statement
// failed for a reason of the moment (a statement timeout, a deadlock, a
// serialization failure: store.Transient) is kept and offered again with
// backoff until its attempt's lease runs out (see retry.go); only then,
// or when its process dies, is it lost, and the sweep retries the attempt
// when the lease runs out, as for a worker that died. Past maxUnrecorded
// results waiting, workers wait for theirs again, so a slow database
// slows the workers down rather than filling memory.
type resultGroup struct {
	c *Ticker
	g grouper[*resultRequest]

	mu         sync.Mutex
	unrecorded int
	drained    *sync.Cond
}

// maxUnrecorded bounds the results handed over and not yet committed.
const maxUnrecorded = 1024

// One group out at a time, of up to 128 results: fewer busy connections
// leave more of the machine to other tenants' work.
func newResultGroup(c *Ticker) *resultGroup {
	r := &resultGroup{c: c}
	r.drained = sync.NewCond(&r.mu)
	r.g = grouper[*resultRequest]{limit: 128, flushers: 1, write: func(group []*resultRequest) {
		r.write(context.Background(), group)
	}}
	return r
}

type resultRequest struct {
	key    store.RunKey
	result engine.StepResult
	// until is when the attempt's lease may run out: the result is offered
	// again until then.
	until time.Time
	tries int
	err   error
	done  chan struct{}
}

// record hands a step's result over to be stored durably, its run ticked
// when it can be, offered until until. It waits for the commit only when
// too many results are already waiting, and then returns its error.
func (g *resultGroup) record(key store.RunKey, result engine.StepResult, until time.Time) error {
	_, err := g.handOver(key, result, until)
	return err
}

// handOver is record, also returning a channel closed once the result is
// recorded or given up on.
func (g *resultGroup) handOver(key store.RunKey, result engine.StepResult, until time.Time) (<-chan struct{}, error) {
	r := &resultRequest{key: key, result: result, until: until, done: make(chan struct{})}
	g.mu.Lock()
	g.unrecorded++
	wait := g.unrecorded > maxUnrecorded
	g.mu.Unlock()
	g.g.submit(r)
	if !wait {
		return r.done, nil
	}
	<-r.done
	return r.done, r.err
}

// finish answers a request: recorded, or given up on with r.err.
func (g *resultGroup) finish(r *resultRequest) {
	close(r.done)
	g.mu.Lock()
	g.unrecorded--
	if g.unrecorded == 0 {
		g.drained.Broadcast()
	}
	g.mu.Unlock()
}

// drain waits until every result handed over has been written or given
// up on, or ctx ends.
func (g *resultGroup) drain(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		g.mu.Lock()
		g.drained.Broadcast()
		g.mu.Unlock()
	})
	defer stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.unrecorded > 0 && ctx.Err() == nil {
		g.drained.Wait()
	}
	return ctx.Err()
}

// write records a group. If the group's transaction fails, each result is
// recorded on its own, and a result that still fails is stored for a tick
// job in a fresh transaction; one that cannot even be stored is offered
// again later (retryLater).
func (g *resultGroup) write(ctx context.Context, group []*resultRequest) {
	err := g.tickGroup(ctx, group)
	if err == nil {
		for _, r := range group {
			g.finish(r)
		}
		return
	}
	if len(group) > 1 {
		for _, r := range group {
			g.write(ctx, []*resultRequest{r})
		}
		return
	}
	r := group[0]
	c := g.c
	if !errors.Is(err, store.ErrConflict) {
		c.log.WarnContext(ctx, "inline tick failed; handing over to a tick job", "run_id", r.key.ID, "err", err)
	}
	r.err = store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		if err := c.faultTx(ctx, tx, FaultResultWrite); err != nil {
			return err
		}
		return c.w.Deliver(ctx, tx, r.key.TenantID, r.key.ID, r.result)
	})
	if store.Transient(r.err) && g.retryLater(r) {
		return
	}
	if r.err != nil {
		c.log.ErrorContext(ctx, "step result not recorded before its attempt's lease ran out; the attempt is retried",
			"run_id", r.key.ID, "node", r.result.Node, "attempt", r.result.Attempt, "tries", r.tries+1, "err", r.err)
	}
	g.finish(r)
}

// tickGroup ticks the group's free runs with their results and stores
// the others'. It reads and decides the runs with no transaction open
// (decideFree), so that no expression is evaluated while one is held,
// then, in one transaction, locks the runs it decided and persists those
// still as it read them (lockDecided); the results of the others are
// stored for their tick jobs in the same transaction. Under
// store.SameStatementTickLoad (the concurrency checker's old load) it
// locks, reads and decides inside the transaction, as it once did.
func (g *resultGroup) tickGroup(ctx context.Context, group []*resultRequest) error {
	c := g.c
	ctx = asBulk(ctx)
	c.gate.yield(ctx, true)
	ctx, done := collectPersisted(ctx)
	ctx, tally := WithFlowTally(ctx)
	var keys []store.RunKey
	inputs := map[store.RunKey][]engine.Input{}
	for _, r := range group {
		if _, seen := inputs[r.key]; !seen {
			keys = append(keys, r.key)
		}
		inputs[r.key] = append(inputs[r.key], r.result)
	}
	var err error
	if store.New(c.pool).With(c.Testing.TickLoadOptions...).LocksAsItReads() {
		err = g.tickGroupLocked(ctx, keys, inputs)
	} else {
		err = g.tickGroupDecided(ctx, keys, inputs)
	}
	if err == nil {
		c.runs.committed(done.ticks)
		c.flowMetrics.count(tally)
	}
	return err
}

func (g *resultGroup) tickGroupDecided(ctx context.Context, keys []store.RunKey, inputs map[store.RunKey][]engine.Input) (err error) {
	c := g.c
	defer c.obs.observeTick("inline", time.Now())
	begun := time.Now()
	ticks, left, err := c.decideFree(ctx, keys, inputs)
	if err != nil {
		return err
	}
	var kept []*runTick
	defer func() { c.obs.observeTicks(ctx, kept, begun, &err) }()
	return c.withTx(ctx, func(ctx context.Context, tx pgx.Tx) (err error) {
		defer recoverAs(&err)
		if err := c.faultTx(ctx, tx, FaultResultWrite); err != nil {
			return err
		}
		k, lost, err := c.lockDecided(ctx, tx, ticks)
		if err != nil {
			return err
		}
		if err := c.w.persist(ctx, tx, k); err != nil {
			return err
		}
		for _, k := range append(lost, left...) {
			if err := c.w.DeliverMany(ctx, tx, k.TenantID, k.ID, inputs[k]); err != nil {
				return err
			}
		}
		kept = k
		return nil
	})
}

// tickGroupLocked is tickGroup with the engine inside the transaction.
func (g *resultGroup) tickGroupLocked(ctx context.Context, keys []store.RunKey, inputs map[store.RunKey][]engine.Input) error {
	c := g.c
	return c.withTx(ctx, func(ctx context.Context, tx pgx.Tx) (err error) {
		// The engine runs here, on the group's goroutine rather than a
		// River worker's: a panic becomes this group's error instead of
		// taking the process down.
		defer recoverAs(&err)
		if err := c.faultTx(ctx, tx, FaultResultWrite); err != nil {
			return err
		}
		left, err := c.tickFree(ctx, tx, keys, inputs)
		if err != nil {
			return err
		}
		for _, k := range left {
			if err := c.w.DeliverMany(ctx, tx, k.TenantID, k.ID, inputs[k]); err != nil {
				return err
			}
		}
		return nil
	})
}

// retryLater offers a result that could not be stored (the database was
// unavailable, or a statement failed transiently) again after a backoff, with whatever results gather
// meanwhile, and reports false when the next try would come after its
// lease may have run out.
func (g *resultGroup) retryLater(r *resultRequest) bool {
	r.tries++
	d := retryBackoff(r.tries)
	if !time.Now().Add(d).Before(r.until) {
		return false
	}
	if r.tries == 1 {
		g.c.log.Warn("step result not recorded; offering it again until its attempt's lease runs out",
			"run_id", r.key.ID, "node", r.result.Node, "attempt", r.result.Attempt, "err", r.err)
	}
	r.err = nil
	time.AfterFunc(d, func() { g.g.submit(r) })
	return true
}

// attemptStarts records attempt starts in groups (see grouper), so a busy
// process pays one statement and one commit per group. The start of a
// sparse step (see StepArgs.Sparse) goes on its own
// instead, as urgent work, unless maxExpress of them are already out.
type attemptStarts struct {
	c *deps
	g grouper[*startRequest]

	mu      sync.Mutex
	express int
}

const maxExpress = 4

type startRequest struct {
	take    store.AttemptTake
	outcome store.TakeOutcome
	err     error
	done    chan struct{}
}

func newAttemptStarts(c *deps) *attemptStarts {
	a := &attemptStarts{c: c}
	a.g = grouper[*startRequest]{limit: 256, flushers: 1, write: a.write}
	return a
}

// start records that this worker took the attempt and reports what
// became of it (store.TakeOutcome), trying again with backoff until until
// while the database is unavailable. leased is a moment before the
// database computed the recorded lease: the lease runs at least until
// leased plus take.Lease.
func (a *attemptStarts) start(ctx context.Context, take store.AttemptTake, sparse bool, until time.Time) (outcome store.TakeOutcome, leased time.Time, err error) {
	for n := 1; ; n++ {
		leased = time.Now()
		outcome, err = a.startOnce(take, sparse)
		if !store.Unavailable(err) || !waitRetry(ctx, n, until) {
			return outcome, leased, err
		}
		if n == 1 {
			a.c.log.WarnContext(ctx, "could not record a step's start; trying again", "run_id", take.Key.Run.ID, "node", take.Key.Node, "err", err)
		}
	}
}

func (a *attemptStarts) startOnce(take store.AttemptTake, sparse bool) (store.TakeOutcome, error) {
	r := &startRequest{take: take, done: make(chan struct{})}
	if sparse && a.takeExpress() {
		a.sendUrgent(r)
		return r.outcome, r.err
	}
	a.g.submit(r)
	<-r.done
	return r.outcome, r.err
}

func (a *attemptStarts) takeExpress() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.express >= maxExpress {
		return false
	}
	a.express++
	return true
}

// sendUrgent records a sparse step's start on its own, as urgent work.
func (a *attemptStarts) sendUrgent(r *startRequest) {
	a.c.gate.enter()
	defer func() {
		a.c.gate.leave()
		a.c.gate.started(r.take.Key)
		a.mu.Lock()
		a.express--
		a.mu.Unlock()
	}()
	a.send([]*startRequest{r})
}

// write sends a group once urgent work lets it.
func (a *attemptStarts) write(group []*startRequest) {
	a.c.gate.yield(context.Background(), false)
	a.send(group)
}

func (a *attemptStarts) send(group []*startRequest) {
	takes := make([]store.AttemptTake, len(group))
	for i, r := range group {
		takes[i] = r.take
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	outcomes, err := store.New(a.c.pool).AttemptStartMany(ctx, takes, a.c.workerID)
	cancel()
	for _, r := range group {
		r.outcome, r.err = outcomes[r.take.Key], err
		close(r.done)
	}
}

// recoverAs turns a panic into *err, with its stack.
func recoverAs(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
	}
}
