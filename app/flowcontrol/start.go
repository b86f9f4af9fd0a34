package flowcontrol

import (
	"fmt"
	"slices"
	"time"
)

// Start is one start of a run under its rules: the run's id and the keys
// Evaluate gave it. A start of a new run has the keys of its stage (the
// rate limit and the debounce, or all); a held run the sweep moves on
// has the throttle (unless its turn has come) and the concurrency rules.
type Start struct {
	Run  string
	Keys Keys
}

// State is everything a start's rules decide on, read in one load once
// the start holds its keys' locks.
type State struct {
	// RateLimit and Throttle are the latest starts their keys counted,
	// newest first (as many as the rule's limit).
	RateLimit, Throttle []time.Time
	// Debounce is the debounce key's open debounce, nil when none is.
	Debounce *OpenDebounce
	// Slots are the states of the keys of Keys.Slots, in their order.
	Slots []KeyState
}

// OpenDebounce is a key's open debounce: its run, whether that run is
// still pending (a start can join it), and when max_wait ends it (zero:
// no max_wait).
type OpenDebounce struct {
	Run     string
	Pending bool
	MaxAt   time.Time
}

// Outcome is what becomes of a start.
type Outcome int

const (
	// Started: every rule lets the run go now.
	Started Outcome = iota
	// RateLimited: the start is over its rate limit and refused.
	RateLimited
	// Joined: the start joins its key's open debounce; no run is created.
	Joined
	// Debounced: the run is created held, opening its key's debounce.
	Debounced
	// Throttled: the run is held until its throttle turn.
	Throttled
	// Queued: the run is held until a slot of every rule is free.
	Queued
	// Refused: a cancel_newest rule is full: refused at the API, or,
	// started by a trigger, created held and cancelled.
	Refused
)

var outcomeNames = [...]string{"started", "rate_limited", "joined", "debounced", "throttled", "queued", "refused"}

func (o Outcome) String() string { return outcomeNames[o] }

// Verdict is a start's outcome with what explains it.
type Verdict struct {
	Outcome Outcome
	// RetryAfter is how long a RateLimited start must wait.
	RetryAfter time.Duration
	// Refused is the cancel_newest rule that refused the start.
	Refused *Slot
}

// Writes are what a start's verdict records, for the shell to write in
// the start's transaction.
type Writes struct {
	// Held: the run is created held (flow control lets it go later).
	Held bool
	// Counts are the starts the rate limit and the throttle count, in
	// that order.
	Counts []Count
	// Join puts off the open debounce a Joined start joins.
	Join *Join
	// Open opens the debounce of a Debounced run.
	Open *Open
	// Hold is what a held run waits for.
	Hold *Hold
	// Slots are the run's places under its concurrency rules, held
	// (SlotsHeld) or waited for.
	Slots     []Slot
	SlotsHeld bool
	// Cancel are the runs cancel_in_progress cancels, each once, oldest
	// first.
	Cancel []string
}

// Count is one start counted under a throttle or rate limit, at At.
type Count struct {
	Pool, Key string
	At        time.Time
	Period    time.Duration
}

// Join is the open debounce of the key (Pool, Key) taking the new input
// into its run, and its quiet beginning again: its hold is due at Due.
type Join struct {
	Pool, Key string
	Run       string
	Due       time.Time
}

// Open is a new debounce of the start's key, ending at MaxAt at the
// latest (zero: no max_wait).
type Open struct {
	Pool, Key string
	MaxAt     time.Time
}

// Hold is what a held run waits for: the rule kind it is held at, until
// when (a debounce or a throttle; zero for a slot), and the rules with
// their keys.
type Hold struct {
	Kind  Kind
	Due   time.Time
	Rules []Rule
}

// Rule is one rule a held run waits on, with its key (and a concurrency
// rule's limit).
type Rule struct {
	Rule  string
	Key   string
	Limit int
}

// Decide is what a start's rules say, on the state of its keys at now
// (the database's clock), in the order the rules meet a start: the rate
// limit, the debounce, the throttle, then the concurrency rules.
func Decide(st State, s Start, now time.Time) (Verdict, Writes) {
	k := s.Keys
	var w Writes
	if r := k.RateLimit; r != nil {
		if wait := RetryAfter(now, st.RateLimit, *r); wait > 0 {
			return Verdict{Outcome: RateLimited, RetryAfter: wait}, Writes{}
		}
	}
	if q := k.Debounce; q != nil {
		if d := st.Debounce; d != nil && d.Pending {
			return Verdict{Outcome: Joined}, Writes{Join: &Join{Pool: q.Pool, Key: q.Key, Run: d.Run, Due: QuietAt(now, *q, d.MaxAt)}}
		}
		return Verdict{Outcome: Debounced}, debounced(k, now)
	}
	w.Counts = counted(k.RateLimit, now)
	if t := k.Throttle; t != nil {
		turn := NextStart(now, st.Throttle, *t)
		w.Counts = append(w.Counts, counted(t, turn)...)
		if turn.After(now) {
			w.Held = true
			w.Hold = &Hold{Kind: KindThrottle, Due: turn, Rules: []Rule{{Rule: "throttle", Key: t.Key}}}
			return Verdict{Outcome: Throttled}, w
		}
	}
	return slotted(k.Slots, st.Slots, s.Run, w)
}

// debounced are the writes of a run that opens its key's debounce.
func debounced(k Keys, now time.Time) Writes {
	q := k.Debounce
	var maxAt time.Time
	if q.MaxWait > 0 {
		maxAt = now.Add(q.MaxWait)
	}
	return Writes{
		Held:   true,
		Open:   &Open{Pool: q.Pool, Key: q.Key, MaxAt: maxAt},
		Hold:   &Hold{Kind: KindDebounce, Due: QuietAt(now, *q, maxAt), Rules: []Rule{{Rule: "debounce", Key: q.Key}}},
		Counts: counted(k.RateLimit, now),
	}
}

// slotted is the verdict of the concurrency rules, the writes of the
// rules before them in w. A run is never its own victim.
func slotted(slots []Slot, states []KeyState, self string, w Writes) (Verdict, Writes) {
	others := make([]KeyState, len(states))
	for i, ks := range states {
		others[i] = ks
		others[i].Oldest = slices.DeleteFunc(slices.Clone(ks.Oldest), func(id string) bool { return id == self })
	}
	p := planSlots(slots, others)
	switch p.verdict {
	case slotsRefuse:
		w.Held = true
		return Verdict{Outcome: Refused, Refused: p.refused}, w
	case slotsQueue:
		w.Held = true
		w.Slots = slots
		w.Hold = &Hold{Kind: KindConcurrency, Rules: slotRules(slots)}
		w.Cancel = once(p.cancel)
		return Verdict{Outcome: Queued}, w
	}
	w.Slots, w.SlotsHeld = slots, true
	return Verdict{Outcome: Started}, w
}

func counted(win *Window, at time.Time) []Count {
	if win == nil {
		return nil
	}
	return []Count{{Pool: win.Pool, Key: win.Key, At: at, Period: win.Period}}
}

func slotRules(slots []Slot) []Rule {
	out := make([]Rule, len(slots))
	for i, sl := range slots {
		out[i] = Rule{Rule: fmt.Sprintf("concurrency[%d]", sl.Rule), Key: sl.Key, Limit: sl.Limit}
	}
	return out
}

func once(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
