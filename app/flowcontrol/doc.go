// Package flowcontrol is the pure core of flow control per key: what a
// start of a definition is keyed by under its concurrency rules,
// debounce, throttle and rate limit (Evaluate), and what becomes of the
// start on those keys' state (Decide). It reads no clock and does no
// I/O; the shell (package workers) holds the state in Postgres, and for
// each start takes its keys' locks, loads their State in one read,
// calls Decide(state, start, now) once, and records the Writes of the
// Verdict it gets. Decide's scenarios are the transcripts in testdata
// (go test ./app/flowcontrol -update rewrites them).
//
// # Pools and keys
//
// A rule's pool is its kind, its definition and its key expression
// (Pool): two versions of a definition with the same rule share it, and
// a new expression makes a new one. A key is the text of the expression's
// value, a string, an integer or a boolean (KeyText), so a pool holds
// one state per key. A step's concurrency pool is StepPool, shared by
// every definition of the tenant: steps that name the same key share
// its slots.
//
// # Runs
//
// A start first meets the rate limit (refused past it, with how long to
// wait: RetryAfter) and the debounce (a start of a key with an open
// debounce joins its run, replacing the input; the run goes once the key
// has been quiet for the period, or at max_wait: QuietAt). Then, on the
// input it goes with, the throttle gives it its turn (NextStart: at most
// limit starts in any window of period, in arrival order, none dropped)
// and the concurrency rules a slot of each: it starts when every
// rule's key has a free slot and no earlier run waits for one; otherwise
// it waits for them (queue), is refused (cancel_newest, which wins over
// the other strategies), or makes the oldest runs of the key give way
// (cancel_in_progress: they are cancelled and the new run waits for
// their slots).
package flowcontrol
