package runs

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/upgrade"
)

// Upgrades move runs to another version of their definition (app/upgrade
// plans it), and retry failed runs on another version.
type Upgrades struct{ *deps }

// UpgradeRequest asks to move one run to Version, or, with Retry, to
// retry it from that node on Version (0: the run's own version).
type UpgradeRequest struct {
	TenantID      uuid.UUID
	RunID         uuid.UUID
	Version       int
	CancelRemoved bool
	Retry         string
	// DryRun plans without changing anything (and without locking).
	DryRun bool
	// By names who asks, for the history entry.
	By string
}

// UpgradeResult is the plan and what was done with it.
type UpgradeResult struct {
	RunID       uuid.UUID       `json:"run_id"`
	FromVersion int             `json:"from_version"`
	ToVersion   int             `json:"to_version"`
	DryRun      bool            `json:"dry_run"`
	Applied     bool            `json:"applied"`
	Noop        bool            `json:"noop,omitempty"`
	Plan        *upgrade.Result `json:"plan"`
}

// Outcome classifies a result for counts: noop, refused, upgraded (or,
// on a dry run, would_upgrade).
func (r UpgradeResult) Outcome() string {
	switch {
	case r.Noop:
		return "noop"
	case r.Plan != nil && r.Plan.Refused():
		return "refused"
	case r.DryRun:
		return "would_upgrade"
	}
	return "upgraded"
}

// Upgrade plans req and, unless it is a dry run or the plan is refused,
// applies it in one transaction holding the run's lock, so that it lands
// between two ticks: a tick that decided on the old version finds the
// run's record_version moved on and decides again on the new one. The
// upgrade records a history entry (detail "upgraded from vA to vB by
// WHO: SUMMARY"), and, with Retry, delivers the retry in the same
// transaction, and the plan's Reconsider nodes as an engine.Reconsider
// input, so that a step whose predecessors have finished starts in the
// run's next tick. Upgrading a run to the version it is on does nothing. A
// refused plan is returned with an Unprocessable error whose details are
// the result.
func (u *Upgrades) Upgrade(ctx context.Context, req UpgradeRequest) (UpgradeResult, error) {
	if req.DryRun {
		return u.plan(ctx, store.New(u.pool), nil, req)
	}
	var res UpgradeResult
	err := store.WithTx(ctx, u.pool, func(tx pgx.Tx) error {
		var err error
		res, err = u.plan(ctx, store.New(tx), tx, req)
		return err
	})
	if err != nil {
		return res, err
	}
	if res.Plan != nil && res.Plan.Refused() {
		return res, refusal(res)
	}
	return res, nil
}

func refusal(res UpgradeResult) error {
	msg := "the upgrade cannot be done safely"
	if p := res.Plan.Refusals; len(p) > 0 {
		msg = fmt.Sprintf("the upgrade cannot be done safely: %s: %s", p[0].Path, p[0].Message)
		if len(p) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(p)-1)
		}
	}
	return apperr.New(apperr.Unprocessable, "%s", msg).WithDetails(res)
}

// plan reads the run and plans req; with tx (the transaction s is
// bound to), it locks the run first and writes the plan.
func (u *Upgrades) plan(ctx context.Context, s *store.Store, tx pgx.Tx, req UpgradeRequest) (UpgradeResult, error) {
	get := s.RunGet
	unguarded := u.w.Testing.UnguardedUpgrades
	if tx != nil && !unguarded {
		get = s.RunGetLocked
	}
	run, err := get(ctx, req.TenantID, req.RunID)
	if err != nil {
		return UpgradeResult{}, err
	}
	res := UpgradeResult{RunID: run.ID, FromVersion: run.DefinitionVersion, ToVersion: req.Version, DryRun: req.DryRun}
	if req.Version == 0 {
		res.ToVersion = run.DefinitionVersion
	}
	if res.ToVersion == run.DefinitionVersion && req.Retry == "" {
		res.Noop, res.Plan = true, &upgrade.Result{Nodes: []upgrade.Node{}}
		return res, nil
	}
	if req.Retry == "" && run.Status.Terminal() {
		return res, apperr.New(apperr.Conflict, "run %s ended %s: only a running run can be upgraded (retry it on version %d instead)", run.ID, run.Status, res.ToVersion)
	}
	from, err := u.w.Manifest(ctx, s, run)
	if err != nil {
		return res, err
	}
	to := from
	hash := run.ManifestHash
	if res.ToVersion != run.DefinitionVersion {
		v, err := u.w.Version(ctx, s, req.TenantID, run.DefinitionKey, res.ToVersion)
		if err != nil {
			return res, err
		}
		u.w.Remember(v)
		to, hash = v.Manifest, v.ManifestHash
	}
	nodes, err := s.RunNodesSteps(ctx, req.TenantID, run.ID)
	if err != nil {
		return res, err
	}
	st := &engine.State{Run: run.State, Nodes: make(map[string]*engine.Node, len(nodes))}
	for _, n := range nodes {
		st.Nodes[n.ID] = n
	}
	if req.Retry != "" {
		if err := u.checkRetry(ctx, s, run, st, req.Retry); err != nil {
			return res, err
		}
	}
	res.Plan = upgrade.Plan(st, from, to, upgrade.Options{CancelRemoved: req.CancelRemoved, Retry: req.Retry})
	if tx == nil {
		return res, nil
	}
	if unguarded {
		// The fault the concurrency checker must find: a tick commits in
		// the pause, and the plan is written over it.
		time.Sleep(u.w.Testing.UpgradePause) // the fault's window, not a wait for anything
		now, err := s.RunGet(ctx, req.TenantID, req.RunID)
		if err != nil {
			return res, err
		}
		run.RecordVersion = now.RecordVersion
	}
	if err := u.write(ctx, s, tx, run, hash, res, req); err != nil {
		return res, err
	}
	res.Applied = !res.Noop && !res.Plan.Refused()
	return res, nil
}

func (u *Upgrades) checkRetry(ctx context.Context, s *store.Store, run store.Run, st *engine.State, ref string) error {
	if err := u.refuseReopenUnderConcurrency(ctx, s, run); err != nil {
		return err
	}
	n := st.Nodes[ref]
	if n == nil {
		return apperr.New(apperr.NotFound, "run has no node %q", ref)
	}
	if n.State != engine.NodeFailed && n.State != engine.NodeCancelled {
		return apperr.New(apperr.Conflict, "node %q is %s: only a failed or cancelled node can be retried", ref, n.State)
	}
	switch run.Status {
	case engine.RunSucceeded, engine.RunTerminated, engine.RunTimedOut:
		return apperr.New(apperr.Conflict, "run %s is %s: it cannot be retried", run.ID, run.Status)
	}
	return nil
}

// write applies a plan that was made under the run's lock.
func (u *Upgrades) write(ctx context.Context, s *store.Store, tx pgx.Tx, run store.Run, hash string, res UpgradeResult, req UpgradeRequest) error {
	if res.Noop || res.Plan.Refused() {
		return nil
	}
	now, err := s.Now(ctx)
	if err != nil {
		return err
	}
	p := res.Plan
	if res.ToVersion != res.FromVersion {
		if err := shell.Withdraw(ctx, u.w, tx, run, now, p.Withdraw); err != nil {
			return err
		}
		if err := s.RunUpgradeDropNodes(ctx, run.TenantID, run.ID, p.Delete); err != nil {
			return err
		}
		st := run.State
		st.Meta = cloneMeta(st.Meta)
		st.Meta["version"] = res.ToVersion
		st.TransitionCount++
		by := req.By
		if by == "" {
			by = "an operator"
		}
		tr := engine.Transition{
			Seq: st.TransitionCount, At: now, From: string(st.Status), To: string(st.Status),
			Detail: fmt.Sprintf("upgraded from v%d to v%d by %s: %s", res.FromVersion, res.ToVersion, by, p.Summary),
		}
		var w store.RunWrites
		if err := w.Decision(run, &engine.Decision{Nodes: p.Write, Transitions: []engine.Transition{tr}}); err != nil {
			return err
		}
		if err := s.RunWritesFlush(ctx, &w); err != nil {
			return err
		}
		if err := s.RunUpgradeSetVersion(ctx, run, res.ToVersion, hash, st); err != nil {
			return err
		}
	}
	// The retry first (it reopens an ended run), then the nodes whose
	// join the upgrade decided: no edge into them resolves again, so the
	// engine is asked to apply their joins on the target version. A tick
	// decides only on inputs, so a plain upgrade always delivers one:
	// with no node to reconsider it still lets the run settle on the
	// target version (one whose last waiting node was cancelled ends).
	var ins []engine.Input
	if req.Retry != "" {
		ins = append(ins, engine.RetryNode{RequestID: uuid.NewString(), Node: req.Retry})
	}
	if req.Retry == "" || len(p.Reconsider) > 0 {
		ins = append(ins, engine.Reconsider{RequestID: uuid.NewString(), Nodes: p.Reconsider})
	}
	return u.w.DeliverMany(ctx, tx, run.TenantID, run.ID, ins)
}

func cloneMeta(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// inBatch upgrades one run of an upgrade batch, in the batch's
// transaction (a savepoint of it): a refused plan fails the batch for
// that run, with the first refusal as the message; a run that has ended
// is left alone (counted done).
func (u *Upgrades) inBatch(ctx context.Context, tx pgx.Tx, b store.Batch, r store.Run) error {
	if r.Status.Terminal() {
		return nil // an ended run stays on its version: nothing to do
	}
	res, err := u.plan(ctx, store.New(tx), tx, batchUpgradeRequest(b, r.ID, false))
	if err != nil {
		return err
	}
	if res.Plan != nil && res.Plan.Refused() {
		return refusal(res)
	}
	return nil
}

func batchUpgradeRequest(b store.Batch, runID uuid.UUID, dry bool) UpgradeRequest {
	return UpgradeRequest{
		TenantID: b.TenantID, RunID: runID, Version: b.Upgrade.Version, CancelRemoved: b.Upgrade.CancelRemoved,
		DryRun: dry, By: b.Actor,
	}
}

// MaxUpgradeDryRun bounds the runs one dry run of an upgrade batch plans
// (it answers at once, in the request): narrow a filter that matches
// more.
const MaxUpgradeDryRun = 1000

// UpgradeCounts are a batch upgrade's dry run: how many runs each
// outcome would get (would_upgrade, noop, refused, ended: a run that has
// ended, which the batch leaves alone, failed: a run that cannot be
// planned), and the refusals' paths with how many runs each.
type UpgradeCounts struct {
	Total    int            `json:"total"`
	Outcomes map[string]int `json:"outcomes"`
	Refusals map[string]int `json:"refusals"`
}

// DryRun plans the batch's upgrade for each of its runs and counts the
// outcomes, changing nothing. A batch over more than MaxUpgradeDryRun
// runs is refused (422).
func (u *Upgrades) DryRun(ctx context.Context, b store.Batch) (UpgradeCounts, error) {
	counts := UpgradeCounts{Outcomes: map[string]int{}, Refusals: map[string]int{}}
	s := store.New(u.pool)
	if err := batchScope(ctx, s, &b); err != nil {
		return counts, err
	}
	if b.Total > MaxUpgradeDryRun {
		return counts, apperr.New(apperr.Unprocessable, "a dry run plans at most %d runs; this batch covers %d: narrow the filter", MaxUpgradeDryRun, b.Total)
	}
	for {
		runs, chunk, err := nextBatchRuns(ctx, s, b)
		if err != nil {
			return counts, err
		}
		if chunk.Failed > 0 {
			counts.Outcomes["failed"] += chunk.Failed
		}
		for _, r := range runs {
			counts.Total++
			if r.Status.Terminal() {
				counts.Outcomes["ended"]++
				continue
			}
			res, err := u.plan(ctx, s, nil, batchUpgradeRequest(b, r.ID, true))
			switch {
			case err != nil && apperr.CodeOf(err) == apperr.Internal:
				return counts, err
			case err != nil:
				counts.Outcomes["failed"]++
				continue
			}
			counts.Outcomes[res.Outcome()]++
			for _, p := range res.Plan.Refusals {
				counts.Refusals[p.Path]++
			}
		}
		if chunk.Finished {
			return counts, nil
		}
		b.Cursor, b.Index = chunk.Cursor, chunk.Index
	}
}
