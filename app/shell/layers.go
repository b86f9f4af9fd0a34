package shell

import "sync/atomic"

// Writer is the unit of work: every durable operation that runs inside
// one transaction, given that transaction (see the package doc's
// layering).
type Writer struct{ *deps }

// Ticker is the tick loop: it reads runs, asks the engine what to do and
// has Writer persist the decision.
type Ticker struct {
	*deps
	w *Writer
	// Conflicts counts ticks that lost the record_version race.
	Conflicts atomic.Int64
}

// Sweeper is the sweep: due timers and retries, lost attempts, dead
// ticks, forgotten inputs, flow control's held runs.
type Sweeper struct {
	*deps
	w          *Writer
	unserved   unservedGate
	forgotten  forgottenGate
	poolCursor poolCursor
}

// Observer is the process's instruments: logs, metrics and spans of
// runs, ticks, attempts and tasks.
type Observer struct{ *deps }
