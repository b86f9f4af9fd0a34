package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// ClockShift moves the database's clock as Ductor reads it (Now, due
// timers) forward by d from now(). Tests use it to let a day pass at once;
// production never sets it.
func (s *Store) ClockShift(ctx context.Context, d time.Duration) error {
	if err := s.q.ClockShiftSet(ctx, pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}); err != nil {
		return fmt.Errorf("shift clock: %w", err)
	}
	return nil
}
