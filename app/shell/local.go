package shell

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// LocalSteps lets a process run the steps its own ticks dispatch (see the
// package doc, "Local steps"). Run executes one attempt; nil turns local
// steps off and every step goes through River.
type LocalSteps struct {
	Run func(ctx context.Context, a StepArgs) (output any, err *engine.Error)
	// Slots bounds the local steps running at once (0: DefaultLocalSlots).
	Slots int
}

// DefaultLocalSlots is how many local steps a process runs at once unless
// LocalSteps.Slots says otherwise.
const DefaultLocalSlots = 64

// localSteps is a process's pool of local step slots and the steps that
// hold them.
type localSteps struct {
	c       *deps
	run     func(ctx context.Context, a StepArgs) (any, *engine.Error)
	slots   int
	results *resultGroup
	cancels *stepCancels

	base context.Context // ends at Close, after a grace
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu       sync.Mutex
	inUse    int
	byTenant map[uuid.UUID]int

	launched atomic.Int64 // local steps run since the process started
}

func newLocalSteps(c *deps, results *resultGroup, cancels *stepCancels) *localSteps {
	slots := c.Local.Slots
	if slots <= 0 {
		slots = DefaultLocalSlots
	}
	base, stop := context.WithCancel(context.Background())
	return &localSteps{c: c, run: c.Local.Run, slots: slots, results: results, cancels: cancels,
		base: base, stop: stop, byTenant: map[uuid.UUID]int{}}
}

// localStep is one attempt a transaction recorded as started here, to run
// once it commits.
type localStep struct {
	args    StepArgs
	queue   string
	ctx     context.Context // ends when the attempt is cancelled
	release func()          // unwatches the attempt
	until   time.Time       // when its lease may run out
}

// localSink collects the local steps of one transaction: only that
// transaction's own writes (tx itself, not a savepoint inside it) may add
// to it, since only its commit is seen.
type localSink struct {
	tx    pgx.Tx
	steps []*localStep
}

type localSinkKey struct{}

// withTx runs fn in a transaction (store.WithTx) and, once it commits,
// runs the local steps its ticks chose; a transaction that fails runs
// none and frees their slots.
func (c *deps) withTx(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if c.local == nil {
		return store.WithTx(ctx, c.pool, func(tx pgx.Tx) error { return fn(ctx, tx) })
	}
	sink := &localSink{}
	committing := false
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		sink.tx = tx
		if err := fn(context.WithValue(ctx, localSinkKey{}, sink), tx); err != nil {
			return err
		}
		committing = true
		return nil
	})
	if err == nil && len(sink.steps) > 0 && c.Testing.LoseCommitAck != nil && c.Testing.LoseCommitAck() {
		err = errCommitAckLost
	}
	switch {
	case err == nil:
		c.local.launch(sink.steps)
	case committing && len(sink.steps) > 0:
		// The commit failed, which does not say it did not commit: its
		// answer may be lost with the connection after it did.
		c.local.settle(sink.steps)
	default:
		c.local.abandon(sink.steps)
	}
	return err
}

// errCommitAckLost is the error of a commit whose answer
// Testing.LoseCommitAck took away.
var errCommitAckLost = errors.New("the commit's answer was lost (testing)")

// runLocal takes, of the step jobs a tick's transaction is about to
// enqueue, those this process may run itself: it records their attempts
// as started here with their leases, in tx, and leaves them for the
// transaction's commit to run (withTx). It returns the jobs that still go
// through River. Only a transaction withTx opened may run steps locally.
func (c *Writer) runLocal(ctx context.Context, tx pgx.Tx, jobs []river.InsertManyParams) ([]river.InsertManyParams, error) {
	sink, _ := ctx.Value(localSinkKey{}).(*localSink)
	if c.local == nil || sink == nil || sink.tx != tx || !c.local.cancels.listeningNow() {
		return jobs, nil
	}
	s := store.New(tx)
	var (
		keep   []river.InsertManyParams
		picked []river.InsertManyParams
	)
	for _, j := range jobs {
		a, ok := j.Args.(StepArgs)
		if !ok || !c.localEligible(ctx, s, a) || !c.local.reserve(a.TenantID) {
			keep = append(keep, j)
			continue
		}
		picked = append(picked, j)
	}
	if len(picked) == 0 {
		return jobs, nil
	}
	takes := make([]store.AttemptTake, len(picked))
	keys := make([]store.AttemptKey, len(picked))
	for i, j := range picked {
		a := j.Args.(StepArgs)
		keys[i] = a.AttemptKey()
		takes[i] = store.AttemptTake{Key: keys[i], Lease: AttemptLease(a, c.RescueWindow), Input: a.KeptInput(), StepType: a.Type}
	}
	leased := time.Now()
	outcomes, err := s.AttemptStartMany(ctx, takes, c.workerID)
	if err == nil && c.Testing.UnleasedLocalSteps {
		err = s.AttemptDropLease(ctx, keys)
	}
	if err != nil {
		for _, j := range picked {
			c.local.free(j.Args.(StepArgs).TenantID)
		}
		return nil, err
	}
	ctxs, releases := c.local.cancels.watchNow(c.local.base, keys)
	for i, j := range picked {
		a := j.Args.(StepArgs)
		if outcomes[keys[i]] != store.Taken {
			// Its run is gone or the attempt has its result already:
			// nothing to run, here or through River.
			releases[i]()
			c.local.free(a.TenantID)
			continue
		}
		sink.steps = append(sink.steps, &localStep{args: a, queue: j.InsertOpts.Queue, ctx: ctxs[i], release: releases[i],
			until: leased.Add(takes[i].Lease)})
	}
	return keep, nil
}

// AttemptLease is how long a worker, a step worker or a local step,
// leases attempt a: its timeout plus the rescue window.
func AttemptLease(a StepArgs, window time.Duration) time.Duration {
	return time.Duration(a.TimeoutMS)*time.Millisecond + window
}

// localEligible tells whether a step may run where it was decided: a
// task or http step alone in its job, not sparse (the sparse lane is
// faster for it), not in a concurrency pool or held back by one, of a
// tenant with no admission limits (those count River's jobs).
func (c *Writer) localEligible(ctx context.Context, s *store.Store, a StepArgs) bool {
	if a.Type != string(definition.TypeTask) && a.Type != string(definition.TypeHTTP) {
		return false
	}
	if a.Sparse || a.FlowKey != "" || a.PoolWait || len(a.More) > 0 {
		return false
	}
	t, err := c.tenants.get(ctx, s, a.TenantID)
	return err == nil && t.MaxConcurrency == 0 && t.RatePerSecond == 0
}

// reserve takes a slot for a step of tenant, unless every slot is taken
// or the tenant already holds its fair share of them: the slots divided
// among the tenants holding any (it among them). A step that gets no slot
// goes through River, where the fair queue orders it.
func (l *localSteps) reserve(tenant uuid.UUID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inUse >= l.slots {
		return false
	}
	holders := len(l.byTenant)
	if l.byTenant[tenant] == 0 {
		holders++
	}
	if l.byTenant[tenant] >= max(1, l.slots/holders) {
		return false
	}
	l.inUse++
	l.byTenant[tenant]++
	return true
}

// running is how many slots local steps hold now.
func (l *localSteps) running() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inUse
}

func (l *localSteps) free(tenant uuid.UUID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inUse--
	if l.byTenant[tenant]--; l.byTenant[tenant] <= 0 {
		delete(l.byTenant, tenant)
	}
}

// abandon frees the slots of steps whose transaction did not commit.
func (l *localSteps) abandon(steps []*localStep) {
	for _, s := range steps {
		s.release()
		l.free(s.args.TenantID)
	}
}

// settle runs those of steps whose transaction did commit although its
// commit failed, and frees the others. A commit's answer can be lost with
// the connection (a database crash, a failover, a network cut) after the
// commit is durable: the attempts are then recorded as started here, and
// leased, and no one else runs them until the lease runs out. So once the
// database answers again, the process renews the lease of those still
// held in its name (RunAttemptRenewHeld), which tells it which they are,
// and runs them; an attempt that is not (the transaction rolled back, or
// the sweep claimed it) is not its to run. It stops asking when a lease
// would run out first or the process stops: the sweep then retries the
// attempt, as it would after a crash.
func (l *localSteps) settle(steps []*localStep) {
	l.wg.Go(func() {
		until := steps[0].until
		takes := make([]store.AttemptTake, len(steps))
		for i, s := range steps {
			takes[i] = store.AttemptTake{Key: s.args.AttemptKey(), Lease: AttemptLease(s.args, l.c.RescueWindow)}
			if s.until.Before(until) {
				until = s.until
			}
		}
		wait := 50 * time.Millisecond
		for {
			held, err := store.New(l.c.pool).AttemptRenewHeld(l.base, takes, l.c.workerID)
			if err == nil {
				var run, drop []*localStep
				renewed := time.Now()
				for i, s := range steps {
					if held[takes[i].Key] {
						s.until = renewed.Add(takes[i].Lease)
						run = append(run, s)
					} else {
						drop = append(drop, s)
					}
				}
				l.abandon(drop)
				l.launch(run)
				return
			}
			if time.Now().Add(wait).After(until) || l.base.Err() != nil {
				l.c.log.Warn("could not learn whether local steps committed; their attempts are retried when their leases run out",
					"steps", len(steps), "err", err)
				l.abandon(steps)
				return
			}
			select {
			case <-l.base.Done():
			case <-time.After(wait):
			}
			wait = min(2*wait, 2*time.Second)
		}
	})
}

// launch runs steps whose transaction committed, each on a goroutine of
// its own.
func (l *localSteps) launch(steps []*localStep) {
	l.launched.Add(int64(len(steps)))
	for _, s := range steps {
		l.wg.Go(func() { l.execute(s) })
	}
}

// execute runs one local attempt and hands its result to the result
// group, as a step worker does. A step whose process is stopping hands
// nothing over: its lease runs out and the sweep retries it.
func (l *localSteps) execute(s *localStep) {
	defer func() {
		s.release()
		l.free(s.args.TenantID)
	}()
	ctx, done := l.c.obs.attemptBegins(s.ctx, s.queue, time.Now(), s.args)
	out, stepErr := l.run(ctx, s.args) // the executor turns a panic into the attempt's error
	done(stepErr)
	if l.base.Err() != nil {
		return
	}
	a := s.args
	result := engine.StepResult{Node: a.Node, Generation: a.Generation, Attempt: a.Attempt, Output: out, Error: stepErr}
	if _, err := l.results.handOver(store.RunKey{TenantID: a.TenantID, ID: a.RunID}, result, s.until); err != nil {
		l.c.log.Warn("a local step's result was not recorded; the attempt is retried when its lease runs out",
			"run_id", a.RunID, "node", a.Node, "err", err)
	}
}

// close waits up to grace for the local steps running to hand their
// results over, then ends the others' contexts (their leases run out and
// the sweep retries them) and waits for them to return.
func (l *localSteps) close(grace time.Duration) {
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
	}
	l.stop()
	<-done
}
