package workers

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
// ticks, flow control's held runs.
type Sweeper struct {
	*deps
	w          *Writer
	batches    *Batches
	unserved   unservedGate
	poolCursor poolCursor
}

// Observer is the process's instruments: logs, metrics and spans of
// runs, ticks, attempts and tasks.
type Observer struct{ *deps }

// Service is what the API and the CLI call on runs: start, signal,
// control, approvals and cases; and, through its parts, schedules,
// tasks, events and batches.
type Service struct {
	*deps
	w *Writer
	t *Ticker

	Schedules *Schedules
	Tasks     *Tasks
	Events    *Events
	Batches   *Batches
}

// Schedules creates, changes and fires schedules.
type Schedules struct {
	*deps
	w *Writer
}

// Tasks hands bridge tasks to remote workers and takes their results.
type Tasks struct {
	*deps
	w *Writer
	t *Ticker
}

// Events publishes events to the runs waiting for them and starts the
// runs their triggers start.
type Events struct {
	*deps
	w *Writer
}

// Batches are bulk operations on runs, worked a chunk at a time.
type Batches struct {
	*deps
	w *Writer
}
