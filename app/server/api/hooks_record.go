package api

import (
	"sync"
	"time"

	"github.com/google/uuid"
)

const (
	// failedRecordEvery is how often a webhook's failed deliveries are
	// written to it, at most, by one process: a flood of forged ones costs
	// no write past the first.
	failedRecordEvery = 10 * time.Second
	// maxRecordedHooks bounds the webhooks whose recent writes are
	// remembered; past it the quiet ones are forgotten, then all.
	maxRecordedHooks = 10_000
)

// deliveryRecorder decides which delivery results are written to their
// webhook. An accepted or duplicate delivery is always written; a failed
// one (bad or missing signature, stale timestamp, body not JSON) only if
// the webhook's last write from this process was a success or is older
// than failedRecordEvery. The failures not written are counted and added
// to the webhook's deliveries with its next write, so the count catches
// up; the metric counts every delivery at once.
type deliveryRecorder struct {
	every time.Duration

	mu    sync.Mutex
	hooks map[hookKey]*hookWrites
}

type hookKey struct {
	tenant uuid.UUID
	id     string
}

type hookWrites struct {
	at        time.Time // last write
	failed    bool      // the last write recorded a failure
	unwritten int64     // failures since the last write

	counted time.Time // when refusals were last counted at the database
	refused int64     // refusals since
}

func newDeliveryRecorder(every time.Duration) *deliveryRecorder {
	return &deliveryRecorder{every: every, hooks: map[hookKey]*hookWrites{}}
}

// failed reports whether a failed delivery is to be written, and if so
// how many deliveries the write counts (itself and those not written).
func (r *deliveryRecorder) failed(k hookKey, now time.Time) (bool, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.entry(k, now)
	if w.failed && now.Sub(w.at) < r.every {
		w.unwritten++
		return false, 0
	}
	n := 1 + w.unwritten
	w.at, w.failed, w.unwritten = now, true, 0
	return true, n
}

// refusal counts a refused delivery and reports whether it is to be
// counted at the database now (forced, or every since the last time),
// with how many refusals before it this process kept to itself.
func (r *deliveryRecorder) refusal(k hookKey, now time.Time, force bool, every time.Duration) (bool, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.entry(k, now)
	if !force && !w.counted.IsZero() && now.Sub(w.counted) < every {
		w.refused++
		return false, 0
	}
	n := w.refused
	w.counted, w.refused = now, 0
	return true, n
}

// count counts a refusal refused before its webhook was read, to be
// counted at the database with the next that is.
func (r *deliveryRecorder) count(k hookKey, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entry(k, now).refused++
}

// uncounted gives back n refusals that failed to be counted at the
// database, to be counted with the next.
func (r *deliveryRecorder) uncounted(k hookKey, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.hooks[k]; w != nil {
		w.refused += n
	}
}

// succeeded returns how many deliveries a success's write counts.
func (r *deliveryRecorder) succeeded(k hookKey, now time.Time) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.entry(k, now)
	n := 1 + w.unwritten
	w.at, w.failed, w.unwritten = now, false, 0
	return n
}

func (r *deliveryRecorder) entry(k hookKey, now time.Time) *hookWrites {
	if w := r.hooks[k]; w != nil {
		return w
	}
	if len(r.hooks) >= maxRecordedHooks {
		for key, w := range r.hooks {
			if now.Sub(w.at) >= r.every && now.Sub(w.counted) >= r.every && w.refused == 0 {
				delete(r.hooks, key)
			}
		}
		if len(r.hooks) >= maxRecordedHooks {
			clear(r.hooks)
		}
	}
	w := &hookWrites{}
	r.hooks[k] = w
	return w
}
