package shell

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// Withdraw performs, in tx, the commands that undo the work of nodes an
// upgrade drops (app/upgrade's Result.Withdraw: a cancelled attempt, a
// timer, an approval or case, a sync child run), as a tick performs
// them. Only withdrawals are accepted: nothing may be started outside a
// tick.
func Withdraw(ctx context.Context, w *Writer, tx pgx.Tx, run store.Run, now time.Time, cmds []engine.Command) error {
	for _, c := range cmds {
		switch c.(type) {
		case engine.CancelAttempt, engine.CancelTimer, engine.CloseInteraction, engine.CancelChildRun:
		default:
			return fmt.Errorf("run %s: %T is not a withdrawal", run.ID, c)
		}
	}
	b := &commandBatch{c: w, s: store.New(tx), tx: tx, run: run, now: now}
	b.add(cmds)
	return b.perform(ctx)
}
