// Package prune deletes what each tenant's retention lets go: runs that
// finished longer ago than the tenant's retention, a root with its
// children and its ContinueAsNew chain as a unit once every one of them
// has (they share root_run_id), with every row that belongs to them
// (store.RunOwned, then their River jobs); and the tenant's events as old
// that woke nothing.
//
// A pass walks each tenant's finished runs oldest first by the database's
// clock. Each batch is one short transaction that locks its runs (skipping
// any another transaction holds, and any an operator resumed meanwhile),
// deletes their rows and then the runs, and commits without waiting for
// the disk (a batch lost with a crash is done again). The batch size
// adapts so that a batch takes about BatchTarget, and the pass pauses
// twice as long after each batch: it never holds a lock that the engine
// waits for, and leaves the database to the engine two thirds of the time. Unfinished runs are
// never touched. One replica prunes at a time (a session advisory lock);
// the others skip their pass.
package prune

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/store"
)

// Options tune a Pruner; zero values take the defaults.
type Options struct {
	// Interval is the time between passes (default DefaultInterval).
	Interval time.Duration
	// BatchTarget is how long a batch's transaction should take (default
	// 50 ms); the number of runs a batch deletes adapts to it.
	BatchTarget time.Duration
	// Pace is how long the pass pauses after a batch, as a multiple of the
	// batch's own time (default 2; negative: no pause).
	Pace   float64
	Logger *slog.Logger
}

// DefaultInterval is how often a coordinator process prunes.
const DefaultInterval = time.Minute

const (
	candidatePage = 500  // finished runs read per page of the walk
	firstBatch    = 32   // runs in the first batch of a pass
	maxBatch      = 1000 // runs in a batch at most
	eventBatch    = 1000 // events deleted per statement
	// lockKey keeps two replicas from pruning at once ("prune").
	lockKey = 0x7072_756e_65
)

// Pruner runs prune passes.
type Pruner struct {
	pool    *pgxpool.Pool
	opts    Options
	log     *slog.Logger
	metrics *metrics
	batch   int
}

// New returns a pruner over pool.
func New(pool *pgxpool.Pool, opts Options) *Pruner {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.BatchTarget <= 0 {
		opts.BatchTarget = 50 * time.Millisecond
	}
	if opts.Pace == 0 {
		opts.Pace = 2
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Pruner{pool: pool, opts: opts, log: log, metrics: newMetrics(), batch: firstBatch}
}

// Stats is what a pass deleted.
type Stats struct {
	Runs, Rows, Events int64
	Duration           time.Duration
	// Skipped reports that another replica held the prune lock.
	Skipped bool
}

// Run prunes every Interval until ctx ends.
func (p *Pruner) Run(ctx context.Context) {
	t := time.NewTicker(p.opts.Interval)
	defer t.Stop()
	for {
		if _, err := p.Pass(ctx); err != nil && ctx.Err() == nil {
			p.log.ErrorContext(ctx, "prune pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pass prunes every tenant once, unless another replica is pruning.
func (p *Pruner) Pass(ctx context.Context) (Stats, error) {
	start := time.Now()
	var st Stats
	err := p.locked(ctx, &st.Skipped, func() error {
		tenants, err := store.New(p.pool).PruneTenants(ctx)
		if err != nil {
			return err
		}
		for _, t := range tenants {
			if err := p.tenant(ctx, t, &st); err != nil {
				return fmt.Errorf("tenant %s: %w", t.ID, err)
			}
		}
		return nil
	})
	st.Duration = time.Since(start)
	p.metrics.observe(st, err)
	if err == nil && st.Runs+st.Events > 0 {
		p.log.InfoContext(ctx, "prune pass", "runs", st.Runs, "rows", st.Rows, "events", st.Events,
			"duration_ms", st.Duration.Milliseconds())
	}
	return st, err
}

// locked runs fn holding the prune's advisory lock; skipped reports that
// another session holds it (and fn did not run).
func (p *Pruner) locked(ctx context.Context, skipped *bool, fn func() error) error {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", int64(lockKey)).Scan(&got); err != nil {
		return fmt.Errorf("prune lock: %w", err)
	}
	if !got {
		*skipped = true
		return nil
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(lockKey)); err != nil {
			conn.Conn().Close(ctx) // the session's end releases the lock
		}
	}()
	return fn()
}

// tenant prunes one tenant's expired runs, then its expired events.
func (p *Pruner) tenant(ctx context.Context, t store.PruneTenant, st *Stats) error {
	s := store.New(p.pool)
	var cursor store.PruneCursor
	for {
		page, err := s.PruneCandidates(ctx, t, cursor, candidatePage)
		if err != nil || len(page) == 0 {
			return p.events(ctx, t, st, err)
		}
		cursor = page[len(page)-1].Cursor
		roots, err := s.PruneRootsExpired(ctx, t, distinctRoots(page))
		if err != nil {
			return err
		}
		if err := p.units(ctx, t, roots, st); err != nil {
			return err
		}
		if len(page) < candidatePage {
			return p.events(ctx, t, st, nil)
		}
	}
}

// units deletes the runs of expired roots in batches until none is left
// that it can lock.
func (p *Pruner) units(ctx context.Context, t store.PruneTenant, roots []uuid.UUID, st *Stats) error {
	for len(roots) > 0 {
		start := time.Now()
		limit := p.batch
		n, err := store.New(p.pool).PruneRuns(ctx, t, roots, limit)
		if err != nil {
			return err
		}
		st.Runs += n.Runs
		st.Rows += n.Rows
		p.adapt(time.Since(start))
		if err := p.pause(ctx, time.Since(start)); err != nil {
			return err
		}
		if n.Runs < int64(limit) {
			return nil
		}
	}
	return nil
}

// events deletes the tenant's expired events that woke nothing; err is
// the walk's error, returned instead when set.
func (p *Pruner) events(ctx context.Context, t store.PruneTenant, st *Stats, err error) error {
	if err != nil {
		return err
	}
	for {
		start := time.Now()
		n, err := store.New(p.pool).PruneEvents(ctx, t, eventBatch)
		if err != nil {
			return err
		}
		st.Events += n
		st.Rows += n
		if n < eventBatch {
			return nil
		}
		if err := p.pause(ctx, time.Since(start)); err != nil {
			return err
		}
	}
}

// adapt sizes the next batch so that it takes about BatchTarget.
func (p *Pruner) adapt(took time.Duration) {
	switch {
	case took > p.opts.BatchTarget:
		p.batch = max(1, p.batch/2)
	case took < p.opts.BatchTarget/2:
		p.batch = min(maxBatch, p.batch*2)
	}
}

// pause leaves the database to the engine for Pace times what a batch
// took.
func (p *Pruner) pause(ctx context.Context, took time.Duration) error {
	if p.opts.Pace < 0 {
		return ctx.Err()
	}
	t := time.NewTimer(time.Duration(float64(took) * p.opts.Pace))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func distinctRoots(page []store.PruneCandidate) []uuid.UUID {
	seen := map[uuid.UUID]bool{}
	var out []uuid.UUID
	for _, c := range page {
		if !seen[c.Root] {
			seen[c.Root] = true
			out = append(out, c.Root)
		}
	}
	return out
}
