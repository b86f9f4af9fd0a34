package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/queries"
)

// FlowWindow is a throttle's or a rate limit's key, with how many of its
// latest starts a decision reads.
type FlowWindow struct {
	FlowKey
	Limit int
}

// FlowSlotKey is a concurrency rule's key; Oldest asks for the oldest
// runs of the key no one is cancelling (cancel_in_progress's victims),
// Head for the first run waiting for a slot of it.
type FlowSlotKey struct {
	FlowKey
	Oldest, Head bool
}

// FlowStateQuery is every key one start's rules decide on.
type FlowStateQuery struct {
	RateLimit, Throttle *FlowWindow
	Debounce            *FlowKey
	Slots               []FlowSlotKey
}

// FlowSlotsState is a key's slots held and waited for by runs that have
// not ended, the oldest of those runs no one is cancelling, oldest
// first, and the first of them waiting (uuid.Nil: none), when asked for.
type FlowSlotsState struct {
	Held, Waiting int
	Oldest        []uuid.UUID
	Head          uuid.UUID
}

// FlowState is what a FlowStateQuery's keys are: the latest starts of
// its windows, newest first, its key's open debounce (nil when none),
// its slots' states in the query's order, and the database's clock.
type FlowState struct {
	Now                 time.Time
	RateLimit, Throttle []time.Time
	Debounce            *FlowDebounce
	Slots               []FlowSlotsState
}

// Kinds of key a FlowStateLoad row answers.
const (
	flowReadStarts   = "starts"
	flowReadSlots    = "slots"
	flowReadDebounce = "debounce"
)

// FlowStateLoad reads everything a start's rules decide on, in one
// statement (one round trip, one snapshot). The caller holds the keys'
// locks.
func (s *Store) FlowStateLoad(ctx context.Context, tenantID uuid.UUID, q FlowStateQuery) (FlowState, error) {
	p := queries.FlowStateLoadParams{TenantID: tenantID, Kinds: []string{}, Pools: []string{}, Keys: []string{}, Ns: []int32{}}
	ask := func(kind string, k FlowKey, n int) {
		p.Kinds, p.Pools, p.Keys, p.Ns = append(p.Kinds, kind), append(p.Pools, k.Pool), append(p.Keys, k.Key), append(p.Ns, int32(n))
	}
	for _, w := range []*FlowWindow{q.RateLimit, q.Throttle} {
		if w != nil {
			ask(flowReadStarts, w.FlowKey, w.Limit)
		}
	}
	if q.Debounce != nil {
		ask(flowReadDebounce, *q.Debounce, 0)
	}
	for _, sl := range q.Slots {
		n := 0
		switch {
		case sl.Oldest:
			n = 1
		case sl.Head:
			n = 2
		}
		ask(flowReadSlots, sl.FlowKey, n)
	}
	rows, err := s.q.FlowStateLoad(ctx, p)
	if err != nil {
		return FlowState{}, fmt.Errorf("load flow state: %w", err)
	}
	if len(rows) != max(1, len(p.Kinds)) {
		return FlowState{}, fmt.Errorf("load flow state: %d rows for %d keys", len(rows), len(p.Kinds))
	}
	return flowStateOf(q, rows), nil
}

// flowStateOf reads the rows of FlowStateLoad, one per key asked in the
// order asked, or the clock alone.
func flowStateOf(q FlowStateQuery, rows []queries.FlowStateLoadRow) FlowState {
	st := FlowState{Now: rows[0].Now}
	i := 0
	next := func() queries.FlowStateLoadRow { i++; return rows[i-1] }
	if q.RateLimit != nil {
		st.RateLimit = next().Starts
	}
	if q.Throttle != nil {
		st.Throttle = next().Starts
	}
	if q.Debounce != nil {
		if r := next(); r.DebounceOpen {
			st.Debounce = &FlowDebounce{RunID: r.DebounceRunID, MaxAt: r.DebounceMaxAt, RunStatus: engine.RunStatus(r.DebounceStatus)}
		}
	}
	for range q.Slots {
		r := next()
		st.Slots = append(st.Slots, FlowSlotsState{Held: int(r.Held), Waiting: int(r.Waiting), Oldest: r.Oldest, Head: r.Head})
	}
	return st
}
