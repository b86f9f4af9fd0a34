package flowcontrol

// A step's concurrency pool is decided per key, on how many attempts of
// the key are in flight across the tenant. The shell (workers'
// admitFlow and wakePoolWaits) reads that count and the key's waiters
// under the key's lock, or from the sweep, and calls these.

// Attempt is a step attempt offered to its pool's key: the limit it runs
// under, and whether it has waited for the key already (it keeps its
// place in line).
type Attempt struct {
	Limit  int
	Waited bool
}

// AdmitAttempts says which attempts offered to one key start now, in
// order: while the key has attempts waiting, a new one waits behind them;
// otherwise an attempt starts while fewer than its limit are in flight,
// counting those started before it.
func AdmitAttempts(inFlight int, waiters bool, attempts []Attempt) []bool {
	start := make([]bool, len(attempts))
	for i, a := range attempts {
		if waiters && !a.Waited {
			continue
		}
		if inFlight < a.Limit {
			inFlight++
			start[i] = true
		}
	}
	return start
}

// Waiter is an attempt waiting for a key, in the order it was held:
// Woken when a sweep made it due already, not yet offered.
type Waiter struct {
	Limit int
	Woken bool
}

// Wake says which of a key's first waiters a sweep wakes: as many, in
// order, as fit while fewer attempts than a waiter's own limit hold the
// key, counting those woken and not yet offered.
func Wake(inFlight int, waiters []Waiter) []bool {
	wake := make([]bool, len(waiters))
	for i, w := range waiters {
		if w.Woken {
			inFlight++
			continue
		}
		if inFlight < w.Limit {
			wake[i] = true
			inFlight++
		}
	}
	return wake
}
