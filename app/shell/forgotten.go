package shell

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/store"
)

// forgottenEvery spaces the sweep's looks for forgotten runs: runs with
// an input older than the rescue window that no tick job will drain
// (store.RunsForgotten). Nothing but a lost write leaves one, so the look
// is rare and the wake comes seconds late at worst.
const forgottenEvery = 5 * time.Second

// forgottenGate spaces the looks.
type forgottenGate struct {
	mu   sync.Mutex
	next time.Time
}

// take reports whether a look is due, and if so sets the next one.
func (g *forgottenGate) take(now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Before(g.next) {
		return false
	}
	g.next = now.Add(forgottenEvery)
	return true
}

// wakeForgotten ticks the forgotten runs again, whatever their wake flag
// says: the flag may have been set for the very job that was lost.
func (c *Sweeper) wakeForgotten(ctx context.Context, tx pgx.Tx, s *store.Store) (int, error) {
	if !c.forgotten.take(time.Now()) {
		return 0, nil
	}
	runs, err := s.RunsForgotten(ctx, c.RescueWindow, sweepBatch)
	if err != nil {
		return 0, err
	}
	for _, k := range runs {
		if _, err := s.RunRequestTick(ctx, k.TenantID, k.ID); err != nil {
			return 0, err
		}
		if err := c.enqueueTick(ctx, tx, k.TenantID, k.ID); err != nil {
			return 0, err
		}
	}
	if len(runs) > 0 {
		c.log.WarnContext(ctx, "ticked runs whose inputs no tick job would drain", "runs", len(runs))
	}
	return len(runs), nil
}
