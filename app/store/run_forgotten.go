package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// runsForgotten finds runs that hold an input no tick has drained (a
// step result, signal, control or fired timer in run_input) for longer
// than the window, by the database's clock, and that no tick job will
// tick: none is available, scheduled, running or waiting to be retried.
// Every delivery wakes its run in the transaction that stores it, so
// this finds only what a lost write left behind: after a failover to an
// asynchronous standby, the standby can hold a delivery without the
// tick job that would have drained it. A run that flow control holds
// keeps its inputs until it is let go, and is left alone. The partial
// index holds only undrained inputs, so the look is cheap while nothing
// is forgotten.
const runsForgotten = `SELECT DISTINCT i.tenant_id, i.run_id FROM run_input i
JOIN run r ON r.tenant_id = i.tenant_id AND r.id = i.run_id
WHERE i.consumed_at IS NULL AND i.created_at < now() - $1 * interval '1 millisecond'
  AND r.status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
  AND NOT EXISTS (SELECT 1 FROM flow_hold h WHERE h.tenant_id = i.tenant_id AND h.run_id = i.run_id)
  AND NOT EXISTS (SELECT 1 FROM river_job j
      WHERE j.kind = 'ductor.tick' AND j.state IN ('available', 'scheduled', 'running', 'retryable', 'pending')
        AND j.args->>'run_id' = i.run_id::text)
LIMIT $2`

// RunsForgotten returns up to limit runs with an input older than window
// that no tick job will drain (see runsForgotten), to be ticked again.
func (s *Store) RunsForgotten(ctx context.Context, window time.Duration, limit int) ([]RunKey, error) {
	rows, err := s.db.Query(ctx, runsForgotten, window.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("find forgotten runs: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RunKey, error) {
		var k RunKey
		err := r.Scan(&k.TenantID, &k.ID)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("find forgotten runs: %w", err)
	}
	return keys, nil
}
