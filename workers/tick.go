package workers

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// TickWorker runs coordinator ticks.
type TickWorker struct {
	river.WorkerDefaults[TickArgs]
	C *Coordinator
}

// Work runs one tick of the run.
func (w *TickWorker) Work(ctx context.Context, job *river.Job[TickArgs]) error {
	return w.C.Tick(ctx, job.Args.TenantID, job.Args.RunID)
}

// Tick clears the run's wake flag, then decides and persists until it
// commits without conflict: it reads and decides without locks, then locks
// the run and checks record_version before writing. A wake that lands after
// the flag is cleared enqueues the next tick, so no input is left
// undrained.
func (c *Coordinator) Tick(ctx context.Context, tenantID, runID uuid.UUID) error {
	defer c.observeTick("job", time.Now())
	if err := store.New(c.pool).RunClearTick(ctx, tenantID, runID); err != nil {
		return err
	}
	for range maxTickConflicts {
		err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
			return c.tickTx(ctx, tx, tenantID, runID, tickOpts{})
		})
		if err == nil {
			return c.fault(FaultAfterCommit)
		}
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		c.Conflicts.Add(1)
	}
	// Still losing: whoever keeps winning is ticking this run; hand over to
	// a fresh tick rather than hold a worker and a connection waiting.
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error { return c.Wake(ctx, tx, tenantID, runID) })
}

// maxTickConflicts bounds how often one tick job decides again after
// losing the record_version race.
const maxTickConflicts = 5

// tickTx is one tick inside tx: read the run and its inputs, decide
// (again while the engine needs more children), then lock the run, check
// that its version is still the one read, and persist: nodes, attempts,
// history, commands, consumed inputs and the run itself.
// tickOpts are what an inline tick knows already: that it holds the run's
// lock, and an input it brings along instead of storing and reading back.
type tickOpts struct {
	locked bool
	input  engine.Input
}

func (c *Coordinator) tickTx(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID, o tickOpts) error {
	s := store.New(tx)
	cached, hit := c.inputs.lookup(runID)
	lean, err := s.RunGetLean(ctx, tenantID, runID, !hit)
	if err != nil {
		return err
	}
	run, now := lean.Run, lean.Now
	switch {
	case hit:
		run.State.Input = cached
	case lean.Input != nil:
		run.State.Input = lean.Input
		c.inputs.put(runID, lean.Input)
	}
	pending, err := s.RunInputsPending(ctx, tenantID, runID)
	if o.input != nil {
		pending.Inputs = append(pending.Inputs, o.input) // a duplicate is discarded by Decide
	}
	if err != nil || (len(pending.Inputs) == 0 && run.Status != engine.RunPending) {
		return err // nothing new: time-based work arrives as timer inputs
	}
	m, err := c.manifest(ctx, s, run)
	if err != nil {
		return err
	}
	state, decisions, err := c.decide(ctx, s, run, m, pending, now)
	if err != nil {
		return err
	}
	if !o.locked {
		if err := s.RunLockVersion(ctx, tenantID, runID, run.RecordVersion); err != nil {
			return err
		}
	}
	return c.persist(ctx, tx, run, m, pending, state, decisions, now)
}

// decide calls the engine until it needs nothing more, applying each
// decision to the in-memory state. It reads but writes nothing.
func (c *Coordinator) decide(ctx context.Context, s *store.Store, run store.Run, m *definition.Manifest, pending store.PendingInputs, now time.Time) (*engine.State, []*engine.Decision, error) {
	state, err := c.loadState(ctx, s, run, pending.Inputs)
	if err != nil {
		return nil, nil, err
	}
	if err := c.fault(FaultBeforeDecide); err != nil {
		return nil, nil, err
	}
	tick := engine.Tick{Now: now, Seed: seed(run.ID, run.RecordVersion), Inputs: pending.Inputs, MorePending: pending.More}
	var decisions []*engine.Decision
	for {
		d, err := c.engine.Decide(ctx, m, state, tick)
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

// persist writes a tick's decisions under the run's lock.
func (c *Coordinator) persist(ctx context.Context, tx pgx.Tx, run store.Run, m *definition.Manifest, pending store.PendingInputs, state *engine.State, decisions []*engine.Decision, now time.Time) error {
	s := store.New(tx)
	cmds := &commandBatch{c: c, s: s, tx: tx, run: run, now: now}
	for _, d := range decisions {
		if err := s.RunDecisionSave(ctx, run.TenantID, run.ID, d); err != nil {
			return err
		}
		if err := saveWaiting(ctx, s, run, m, d); err != nil {
			return err
		}
		cmds.add(d.Commands)
	}
	if err := c.fault(FaultAfterSave); err != nil {
		return err
	}
	if err := cmds.perform(ctx); err != nil {
		return err
	}
	if cmds.successor != "" {
		state.Run.ContinuedToRunID = cmds.successor
	}
	if cmds.cannotContinue {
		state.Run.Reason = engine.ReasonTransitionLimit
	}
	if err := c.fault(FaultAfterEnqueue); err != nil {
		return err
	}
	if err := s.RunInputsConsume(ctx, run.TenantID, run.ID, pending.IDs); err != nil {
		return err
	}
	if err := s.RunUpdate(ctx, run, state.Run); err != nil {
		return err
	}
	if state.Run.Status.Terminal() && !run.Status.Terminal() {
		c.metrics.finished.WithLabelValues(string(state.Run.Status)).Inc()
	}
	if err := c.fault(FaultAfterUpdate); err != nil {
		return err
	}
	if pending.More {
		return c.Wake(ctx, tx, run.TenantID, run.ID)
	}
	return nil
}

// loadState loads what Decide needs: the run, its step nodes, and the
// scatter children the inputs name.
func (c *Coordinator) loadState(ctx context.Context, s *store.Store, run store.Run, inputs []engine.Input) (*engine.State, error) {
	nodes, err := s.RunNodesSteps(ctx, run.TenantID, run.ID)
	if err != nil {
		return nil, err
	}
	st := &engine.State{Run: run.State, Nodes: make(map[string]*engine.Node, len(nodes))}
	for _, n := range nodes {
		st.Nodes[n.ID] = n
	}
	if err := loadSignals(ctx, s, run, st); err != nil {
		return nil, err
	}
	var named []string
	for _, in := range inputs {
		if name := inputNode(in); name != "" && st.Nodes[name] == nil {
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

func (c *Coordinator) loadNeeds(ctx context.Context, s *store.Store, run store.Run, st *engine.State, needs []engine.Need) error {
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

// inputNode is the node an input is about, if any.
func inputNode(in engine.Input) string {
	switch v := in.(type) {
	case engine.StepResult:
		return v.Node
	case engine.TimerFired:
		return v.Node
	case engine.ChildRunUpdate:
		return v.Node
	case engine.ApprovalDecided:
		return v.Node
	case engine.CaseStatusChanged:
		return v.Node
	case engine.RetryNode:
		return v.Node
	}
	return ""
}

// seed derives retry jitter from the run and its version, so a re-executed
// tick decides the same.
func seed(runID uuid.UUID, version int64) uint64 {
	h := fnv.New64a()
	h.Write(runID[:])
	return h.Sum64() ^ uint64(version)*0x9e3779b97f4a7c15
}
