package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/queries"
)

// RunRows names the rows of one table that belong to a batch of runs:
// Where is a predicate joining the table's row t to one run's id r.id ($1
// is the tenant; the match on t.tenant_id is added to it). Each run's rows
// are found through an index that starts with (tenant_id, run_id), one
// run at a time, whatever the planner's statistics say.
type RunRows struct {
	Table string
	Where string
}

const ofRuns = "t.run_id = r.id"

// RunOwned lists every table whose rows belong to runs, a table before
// the one it references (approval_decision before approval). The prune
// deletes a batch of runs' rows from each, then River's jobs of the runs,
// then the runs. A new table of rows that belong to a run is one more line
// here: TestPruneCoversEveryRunTable fails until it is.
var RunOwned = []RunRows{
	{"run_history_batch", ofRuns},
	{"run_node", ofRuns},
	{"run_attempt", ofRuns},
	{"run_input", ofRuns},
	{"run_timer", ofRuns},
	{"run_dispatch", ofRuns},
	{"run_signal", ofRuns},
	{"event_wait", ofRuns},
	{"event_use", ofRuns},
	{"approval_decision", "t.approval_id IN (SELECT a.id FROM approval a WHERE a.tenant_id = $1 AND a.run_id = r.id)"},
	{"approval", ofRuns},
	{"run_case", ofRuns},
	{"bridge_task", ofRuns},
	{"flow_hold", ofRuns},
	{"flow_slot", ofRuns},
	{"flow_debounce", ofRuns},
}

func (r RunRows) deleteSQL() string {
	return fmt.Sprintf("DELETE FROM %s t USING %s WHERE t.tenant_id = $1 AND (%s)", r.Table, RunIDs, r.Where)
}

// RunIDs is the relation r of the batch's run ids ($2) in RunRows.Where.
const RunIDs = "unnest($2::uuid[]) AS r(id)"

// PruneTenant is a tenant with a limited retention and what finished
// before Cutoff (the database's clock minus the retention) is due.
type PruneTenant struct {
	ID     uuid.UUID
	Cutoff time.Time
}

// PruneTenants lists the tenants whose finished runs expire.
func (s *Store) PruneTenants(ctx context.Context) ([]PruneTenant, error) {
	rows, err := s.q.PruneTenants(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tenants to prune: %w", err)
	}
	out := make([]PruneTenant, len(rows))
	for i, r := range rows {
		out[i] = PruneTenant{ID: r.ID, Cutoff: r.Cutoff}
	}
	return out, nil
}

// PruneCursor is where a walk over a tenant's finished runs stands: the
// last (finished_at, id) it saw.
type PruneCursor struct {
	FinishedAt time.Time
	ID         uuid.UUID
}

// PruneCandidate is a finished run and its root.
type PruneCandidate struct {
	ID, Root uuid.UUID
	Cursor   PruneCursor
}

// PruneCandidates returns up to limit of the tenant's runs that finished
// before cutoff, oldest first, after the cursor.
func (s *Store) PruneCandidates(ctx context.Context, t PruneTenant, after PruneCursor, limit int) ([]PruneCandidate, error) {
	rows, err := s.q.PruneRunsFinishedBefore(ctx, queries.PruneRunsFinishedBeforeParams{
		TenantID: t.ID, Cutoff: t.Cutoff, AfterFinishedAt: after.FinishedAt, AfterID: after.ID, MaxRows: int32(limit),
	})
	if err != nil {
		return nil, fmt.Errorf("list runs to prune: %w", err)
	}
	out := make([]PruneCandidate, len(rows))
	for i, r := range rows {
		out[i] = PruneCandidate{ID: r.ID, Root: r.RootRunID, Cursor: PruneCursor{FinishedAt: r.FinishedAt, ID: r.ID}}
	}
	return out, nil
}

// PruneRootsExpired returns the roots whose every run finished before the
// tenant's cutoff and has no attempt leased to a worker.
func (s *Store) PruneRootsExpired(ctx context.Context, t PruneTenant, roots []uuid.UUID) ([]uuid.UUID, error) {
	out, err := s.q.PruneRootsExpired(ctx, queries.PruneRootsExpiredParams{RootIds: roots, TenantID: t.ID, Cutoff: t.Cutoff})
	if err != nil {
		return nil, fmt.Errorf("check runs to prune: %w", err)
	}
	return out, nil
}

// Pruned counts what a prune batch deleted.
type Pruned struct {
	Runs int64
	// Rows counts every row deleted, the runs' own included.
	Rows int64
}

// PruneRuns deletes, in one transaction, up to limit runs of the expired
// roots with every row that belongs to them (RunOwned, then their River
// jobs). It locks the runs first and skips any another transaction holds
// or that no longer finished before the cutoff, and gives up rather than
// wait long for a lock.
func (s *Store) PruneRuns(ctx context.Context, t PruneTenant, roots []uuid.UUID, limit int) (Pruned, error) {
	var p Pruned
	err := s.InTx(ctx, func(tx *Store) error {
		// A prune lost with a crash is done again by the next pass, so its
		// commit need not wait for the disk: the engine's commits do.
		if _, err := tx.db.Exec(ctx, "SET LOCAL lock_timeout = '1s'; SET LOCAL synchronous_commit = off"); err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		ids, err := tx.q.PruneRunsLock(ctx, queries.PruneRunsLockParams{TenantID: t.ID, RootIds: roots, Cutoff: t.Cutoff, MaxRows: int32(limit)})
		if err != nil || len(ids) == 0 {
			return err
		}
		if p.Rows, err = tx.pruneOwned(ctx, t.ID, ids); err != nil {
			return err
		}
		p.Runs, err = tx.q.PruneRunsDelete(ctx, queries.PruneRunsDeleteParams{TenantID: t.ID, Ids: ids})
		p.Rows += p.Runs
		return err
	})
	if err != nil {
		return Pruned{}, fmt.Errorf("prune runs: %w", err)
	}
	return p, nil
}

// pruneOwned deletes the runs' rows from every table of RunOwned and their
// River jobs, in one round trip, and returns how many rows went.
func (s *Store) pruneOwned(ctx context.Context, tenantID uuid.UUID, ids []uuid.UUID) (int64, error) {
	b := &pgx.Batch{}
	for _, r := range RunOwned {
		b.Queue(r.deleteSQL(), tenantID, ids)
	}
	runs := make([]string, len(ids))
	for i, id := range ids {
		runs[i] = id.String()
	}
	b.Queue(pruneRiverJobs, runs, tenantID.String())
	res := s.db.SendBatch(ctx, b)
	defer res.Close()
	var n int64
	for i := 0; i < b.Len(); i++ {
		tag, err := res.Exec()
		if err != nil {
			return 0, err
		}
		n += tag.RowsAffected()
	}
	return n, res.Close()
}

// PruneEvents deletes up to limit of the tenant's events older than the
// cutoff that no node consumed, and returns how many.
func (s *Store) PruneEvents(ctx context.Context, t PruneTenant, limit int) (int64, error) {
	n, err := s.q.PruneEvents(ctx, queries.PruneEventsParams{TenantID: t.ID, Cutoff: t.Cutoff, MaxRows: int32(limit)})
	if err != nil {
		return 0, fmt.Errorf("prune events: %w", err)
	}
	return n, nil
}
