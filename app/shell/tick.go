package shell

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// Tick clears the run's wake flag, then reads the run and decides with no
// transaction open (the engine evaluates the definition's expressions,
// and no expression runs while a transaction is held), and only then
// locks the run (waiting for an inline tick that holds it) and persists,
// if the run's record_version is still the one it decided on; a tick
// that loses that race decides again. A wake that lands after the flag is
// cleared enqueues the next tick, so no input is left undrained.
func (c *Ticker) Tick(ctx context.Context, tenantID, runID uuid.UUID) error {
	ctx = asBulk(ctx)
	c.gate.yield(ctx, true)
	defer c.obs.observeTick("job", time.Now())
	if err := store.New(c.pool).RunClearTick(ctx, tenantID, runID); err != nil {
		return err
	}
	for range maxTickConflicts {
		tctx, done := collectPersisted(ctx)
		tctx, tally := WithFlowTally(tctx)
		err := c.tickOnce(tctx, store.RunKey{TenantID: tenantID, ID: runID})
		if err == nil {
			c.runs.committed(done.ticks)
			c.flowMetrics.count(tally)
			return c.fault(FaultAfterCommit)
		}
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		c.Conflicts.Add(1)
	}
	// Still losing: whoever keeps winning is ticking this run; hand over to
	// a fresh tick rather than hold a worker and a connection waiting.
	return store.WithTx(ctx, c.pool, func(tx pgx.Tx) error { return c.w.Wake(ctx, tx, tenantID, runID) })
}

// tickOnce is one try of a tick job: it reads the run (store.RunTickPeek)
// and decides on a connection of its own, outside any transaction, then
// persists in a transaction that locks the run first and returns
// store.ErrConflict, writing nothing, when the run's record_version moved
// since the read. Every write of a run's state, step nodes or scatter
// children and every consumption of its inputs moves the version, so a
// version that did not move means that everything the tick read,
// whatever statement read it, is still what is there under the lock. An
// input that arrived after the read stays pending: its wake has set the
// tick flag again (cleared before the read), so another tick drains it;
// but a tick that ends the run decides again on such an input instead
// (store.RunInputsArrived), since nothing would drain it: a signal, whose
// sender locked the run and found it live, must reach it or the run that
// continues it.
func (c *Ticker) tickOnce(ctx context.Context, k store.RunKey) (err error) {
	s := store.New(c.pool)
	loads, err := c.load(ctx, s, []store.RunKey{k}, false)
	if err != nil {
		return err
	}
	l, ok := loads[k]
	if !ok {
		return apperr.New(apperr.NotFound, "run not found")
	}
	t := &runTick{key: k, load: l}
	begun := time.Now()
	decided, _, err := c.decideRuns(ctx, s, nil, []*runTick{t}, 0)
	if err != nil {
		return err
	}
	if t.err != nil {
		return t.err
	}
	if len(decided) == 0 {
		return nil // nothing new to decide on
	}
	defer c.obs.observeTicks(ctx, decided, begun, &err)
	return c.withTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		s := store.New(tx)
		v, err := s.RunLockVersion(ctx, k.TenantID, k.ID)
		if err != nil {
			return err
		}
		if v != l.Run.RecordVersion {
			return store.ErrConflict
		}
		arrived, err := endsOnArrivals(ctx, s, t)
		if err != nil {
			return err
		}
		if arrived {
			return store.ErrConflict
		}
		return c.w.persist(ctx, tx, decided)
	})
}

// maxTickConflicts bounds how often one tick job decides again after
// losing the record_version race.
const maxTickConflicts = 5

// runTick is one run's part of a tick: the inputs its caller brings along
// (instead of storing and reading them back), then what the tick read and
// decided.
type runTick struct {
	key    store.RunKey
	inputs []engine.Input
	load   store.TickLoad // the run as read, with the database's clock

	m         *definition.Manifest
	pending   store.PendingInputs // the load's and the caller's
	state     *engine.State
	decisions []*engine.Decision
	// err is why this run could not be ticked; tickRuns returns it among
	// the failed and writes nothing for it.
	err error
}

// load locks the runs of keys that no other transaction holds and reads
// what their ticks need (store.RunTickLoadCached), or with lock false
// reads them without locking (store.RunTickPeek), each run's input from
// the cache when it is there, and its state and step nodes from runCache
// when this process's last commit of the run is still its newest.
func (c *Ticker) load(ctx context.Context, s *store.Store, keys []store.RunKey, lock bool) (map[store.RunKey]store.TickLoad, error) {
	if len(c.Testing.TickLoadOptions) > 0 {
		s = s.With(c.Testing.TickLoadOptions...)
	}
	read := s.RunTickPeek
	if lock {
		read = s.RunTickLoadCached
	}
	var withInput []uuid.UUID
	cached := map[store.RunKey]any{}
	for _, k := range keys {
		if in, hit := c.inputs.lookup(k.ID); hit {
			cached[k] = in
		} else {
			withInput = append(withInput, k.ID)
		}
	}
	loads, err := read(ctx, keys, withInput, c.runs.versions(keys))
	if err != nil {
		return nil, err
	}
	for k, l := range loads {
		if l.Cached {
			r, ok := c.runs.lookup(k, l.Run.RecordVersion)
			if !ok { // evicted meanwhile: read it whole
				whole, err := read(ctx, []store.RunKey{k}, []uuid.UUID{k.ID}, nil)
				if err != nil {
					return nil, err
				}
				if l, ok = whole[k]; !ok {
					return nil, fmt.Errorf("run %s: read, then not read again", k.ID)
				}
				loads[k] = l
			} else {
				l.Run.State, l.Nodes = r.state, r.nodes
			}
		}
		if in, hit := cached[k]; hit {
			l.Run.State.Input = in
		} else if l.Input != nil {
			l.Run.State.Input = l.Input
			if !l.Run.State.Held { // a debounce may still replace a held run's input
				c.inputs.put(k.ID, l.Input)
			}
		}
		loads[k] = l
	}
	return loads, nil
}

// tickRuns ticks runs that tx holds and has loaded: it decides each
// (again while the engine needs more children), then persists all of them
// together. A run whose deciding fails on its own is left out and returned
// in failed, with its err; an error that spoils the transaction is
// returned as err. A positive budget bounds the time the engine may spend
// deciding all of them (see InlineBudget); the runs it interrupts fail
// with errInlineBudget and are the caller's to hand to their tick jobs.
func (c *Ticker) tickRuns(ctx context.Context, tx pgx.Tx, ticks []*runTick, budget time.Duration) (failed []*runTick, err error) {
	defer c.obs.observeTicks(ctx, ticks, time.Now(), &err)
	decided, failed, err := c.decideRuns(ctx, store.New(tx), tx, ticks, budget)
	if err != nil {
		return nil, err
	}
	return failed, c.w.persist(ctx, tx, decided)
}

// decideRuns decides the loaded ticks that have something to decide on,
// reading through s, and returns those it decided and those whose deciding
// failed (with their err). With tx, the transaction s reads in, a failed
// statement that spoiled it is returned as err; without, s reads outside
// any transaction. budget is tickRuns'.
func (c *Ticker) decideRuns(ctx context.Context, s *store.Store, tx pgx.Tx, ticks []*runTick, budget time.Duration) (decided, failed []*runTick, err error) {
	dctx := ctx
	if budget > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeoutCause(ctx, budget, errInlineBudget)
		defer cancel()
	}
	for _, t := range ticks {
		t.pending = t.load.Pending
		t.pending.Inputs = append(t.pending.Inputs, t.inputs...) // a duplicate is discarded by Decide
		if len(t.pending.Inputs) == 0 && t.load.Run.Status != engine.RunPending {
			continue // nothing new: time-based work arrives as timer inputs
		}
		if t.m, t.err = c.Manifest(ctx, s, t.load.Run); t.err == nil {
			t.state, t.decisions, t.err = c.decide(ctx, dctx, s, t.load.Run, t.m, t.pending, t.load.Now, t.load.Nodes)
		}
		if t.err != nil {
			if tx != nil && tx.Conn().PgConn().TxStatus() == 'E' {
				return nil, nil, t.err // a failed statement spoiled the transaction
			}
			failed = append(failed, t)
			continue
		}
		decided = append(decided, t)
	}
	return decided, failed, nil
}

// errInlineBudget interrupts the engine once an inline tick has spent
// its budget.
var errInlineBudget = errors.New("inline tick budget spent")

// decide calls the engine until it needs nothing more, applying each
// decision to the in-memory state. It reads but writes nothing. The
// engine decides under dctx (ctx with the caller's budget, if any); the
// reads use ctx, since a cancelled query would spoil the transaction.
func (c *Ticker) decide(ctx, dctx context.Context, s *store.Store, run store.Run, m *definition.Manifest, pending store.PendingInputs, now time.Time, nodes []*engine.Node) (*engine.State, []*engine.Decision, error) {
	state, err := c.loadState(ctx, s, run, nodes, pending.Inputs)
	if err != nil {
		return nil, nil, err
	}
	if err := c.fault(FaultBeforeDecide); err != nil {
		return nil, nil, err
	}
	tick := engine.Tick{Now: now, Seed: seed(run.ID, run.RecordVersion), Inputs: pending.Inputs, MorePending: pending.More}
	var decisions []*engine.Decision
	for {
		d, err := c.engine.Decide(dctx, m, state, tick)
		if err != nil {
			return nil, nil, fmt.Errorf("decide run %s: %w", run.ID, err)
		}
		decisions = append(decisions, d)
		state.Apply(d)
		if len(d.Needs) == 0 {
			return state, decisions, nil
		}
		if err := c.loadNeeds(ctx, s, run, state, d.Needs); err != nil {
			return nil, nil, err
		}
		tick = engine.Tick{Now: now, Seed: tick.Seed + 1}
	}
}

// persist writes the ticks' decisions under the runs' locks: each run's
// waiting rows and commands, with the step jobs of all of them enqueued
// together; then, in one round trip, each kind of row for all runs in one
// statement: nodes, attempts, history, consumed inputs and the guarded run
// updates. (Nothing references node, attempt or history rows, so they can
// come last.)
func (c *Writer) persist(ctx context.Context, tx pgx.Tx, ticks []*runTick) error {
	if len(ticks) == 0 {
		return nil
	}
	c.gate.yieldBulk(ctx)
	s := store.New(tx)
	var w store.RunWrites
	for _, t := range ticks {
		for _, d := range t.decisions {
			if err := w.Decision(t.load.Run, d); err != nil {
				return err
			}
		}
	}
	for _, t := range ticks {
		for _, d := range t.decisions {
			if err := saveWaiting(ctx, s, t.load.Run, t.m, d); err != nil {
				return err
			}
		}
	}
	if err := c.fault(FaultAfterSave); err != nil {
		return err
	}
	var jobs []river.InsertManyParams
	cmds := make([]*commandBatch, len(ticks))
	for i, t := range ticks {
		cmds[i] = &commandBatch{c: c, s: s, tx: tx, run: t.load.Run, now: t.load.Now}
		for _, d := range t.decisions {
			cmds[i].add(d.Commands)
		}
		if err := cmds[i].perform(ctx); err != nil {
			return err
		}
		jobs = append(jobs, cmds[i].jobs...)
	}
	if err := c.insertSteps(ctx, tx, jobs, &w); err != nil {
		return err
	}
	if err := c.fault(FaultAfterEnqueue); err != nil {
		return err
	}
	for i, t := range ticks {
		if cmds[i].successor != "" {
			t.state.Run.ContinuedToRunID = cmds[i].successor
		}
		if cmds[i].cannotContinue {
			t.state.Run.Reason = engine.ReasonTransitionLimit
		}
		w.Consume(t.key, t.pending.IDs)
		if err := w.Update(t.load.Run, t.state.Run); err != nil {
			return err
		}
	}
	if err := s.RunWritesFlush(ctx, &w); err != nil {
		return err
	}
	if err := c.systemEvents(ctx, s, ticks); err != nil {
		return err
	}
	notePersisted(ctx, ticks)
	for _, t := range ticks {
		for _, d := range t.decisions {
			c.metrics.countDiscards(d)
		}
	}
	if err := c.fault(FaultAfterUpdate); err != nil {
		return err
	}
	for _, t := range ticks {
		if t.pending.More {
			if err := c.Wake(ctx, tx, t.load.Run.TenantID, t.load.Run.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadState builds what Decide needs from the run and its step nodes,
// loading the scatter children the inputs name.
func (c *Ticker) loadState(ctx context.Context, s *store.Store, run store.Run, nodes []*engine.Node, inputs []engine.Input) (*engine.State, error) {
	st := &engine.State{Run: run.State, Nodes: make(map[string]*engine.Node, len(nodes))}
	for _, n := range nodes {
		st.Nodes[n.ID] = n
	}
	if err := loadSignals(ctx, s, run, st); err != nil {
		return nil, err
	}
	var named []string
	for _, in := range inputs {
		if name := engine.InputNode(in); name != "" && st.Nodes[name] == nil {
			named = append(named, name)
		}
	}
	if len(named) > 0 {
		children, err := s.RunNodesByName(ctx, run.TenantID, run.ID, named)
		if err != nil {
			return nil, err
		}
		for _, n := range children {
			st.Nodes[n.ID] = n
		}
	}
	return st, nil
}

func (c *Ticker) loadNeeds(ctx context.Context, s *store.Store, run store.Run, st *engine.State, needs []engine.Need) error {
	for _, need := range needs {
		children, err := s.RunNodesChildren(ctx, run.TenantID, run.ID, need)
		if err != nil {
			return err
		}
		for _, n := range children {
			if st.Nodes[n.ID] == nil { // what this tick already changed is newer
				st.Nodes[n.ID] = n
			}
		}
	}
	return nil
}

// seed derives retry jitter from the run and its version, so a re-executed
// tick decides the same.
func seed(runID uuid.UUID, version int64) uint64 {
	h := fnv.New64a()
	h.Write(runID[:])
	return h.Sum64() ^ uint64(version)*0x9e3779b97f4a7c15
}
