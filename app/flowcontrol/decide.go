package flowcontrol

import (
	"time"

	"github.com/ductor/ductor/app/definition"
)

// NextStart is when a start of a window's key may go: at once while the
// key had fewer than Limit starts, else a period after the Limit-th
// latest (latest are the key's latest starts, newest first; a throttle's
// include the turns it gave runs still waiting for them). Taking every
// start at NextStart keeps at most Limit starts in any window of Period.
func NextStart(now time.Time, latest []time.Time, w Window) time.Time {
	if len(latest) < w.Limit {
		return now
	}
	next := latest[w.Limit-1].Add(w.Period)
	if next.Before(now) {
		return now
	}
	return next
}

// RetryAfter is how long a start over a rate limit must wait, 0 when it
// may go now.
func RetryAfter(now time.Time, latest []time.Time, w Window) time.Duration {
	return NextStart(now, latest, w).Sub(now)
}

// QuietAt is when a debounce whose latest start was at last lets its run
// go: a period later, but no later than maxAt (zero: no bound).
func QuietAt(last time.Time, q Quiet, maxAt time.Time) time.Time {
	at := last.Add(q.Period)
	if !maxAt.IsZero() && maxAt.Before(at) {
		return maxAt
	}
	return at
}

// KeyState is what a key's slots are, among runs that have not ended.
type KeyState struct {
	Held, Waiting int
	// Oldest are the runs of the key that no one is cancelling yet,
	// holding a slot or waiting, oldest first (enough of them for
	// cancel_in_progress).
	Oldest []string
	// Head is the first run waiting for a slot of the key ("": none),
	// read for a waiting run's admission.
	Head string
}

// Admits reports whether run, waiting for a slot of each of slots, takes
// them now: at every key it is the first run waiting and a slot is free
// by the limit it waits under. states are the keys' states, in order.
func Admits(run string, slots []Slot, states []KeyState) bool {
	for i, sl := range slots {
		if states[i].Head != run || states[i].Held >= sl.Limit {
			return false
		}
	}
	return true
}

// Free reports whether a new run fits a key at once: a slot is free and
// no earlier run waits for one (arrival order).
func Free(st KeyState, limit int) bool { return st.Waiting == 0 && st.Held < limit }

// slotVerdict is what a start does under its concurrency rules.
type slotVerdict int

const (
	// slotsFree: every rule has a slot; the run starts now.
	slotsFree slotVerdict = iota
	// slotsQueue: the run waits (pending) for a slot of every rule.
	slotsQueue
	// slotsRefuse: a cancel_newest rule is full; the run is refused (or,
	// started by a trigger, cancelled).
	slotsRefuse
)

// slotPlan is a start's verdict under its slots, the runs
// cancel_in_progress cancels for it, and the rule that refused it.
type slotPlan struct {
	verdict slotVerdict
	cancel  []string
	refused *Slot
}

// planSlots plans a start under its slots, given each key's state.
func planSlots(slots []Slot, states []KeyState) slotPlan {
	var p slotPlan
	for i, s := range slots {
		if Free(states[i], s.Limit) {
			continue
		}
		switch s.Strategy {
		case definition.StrategyCancelNewest:
			return slotPlan{verdict: slotsRefuse, refused: &slots[i]}
		case definition.StrategyCancelInProgress:
			p.cancel = append(p.cancel, Victims(states[i], s.Limit)...)
		}
		p.verdict = slotsQueue
	}
	if p.verdict == slotsFree {
		p.cancel = nil
	}
	return p
}

// Victims are the runs cancel_in_progress cancels so that the key's
// runs, the new one included, fit its limit: the oldest.
func Victims(st KeyState, limit int) []string {
	n := len(st.Oldest) + 1 - limit
	if n <= 0 {
		return nil
	}
	return st.Oldest[:n]
}
