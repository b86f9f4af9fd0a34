// Package wftest runs a workflow definition in memory, deterministically
// and in virtual time, against mocked step results: the test runner
// behind `ductor test` and the Go package github.com/ductor/ductor/wftest.
//
// A run here is driven exactly as the shell drives one on a server: the
// same compiler (definition.Compile), the same CEL environment and the
// same pure decision (engine.Decide), fed one tick at a time with the
// inputs the outside world would send. What a server gets from workers,
// people and other systems comes from the test instead:
//
//   - a task or http attempt ([engine.DispatchAttempt]) is answered by
//     the step's mock ([Mock]): an output, an error, or a timeout, per
//     attempt and per scatter child;
//   - a sync subworkflow's child run reports the mocked result;
//   - signals, events, approval decisions, case updates and controls
//     are delivered at the virtual times the test names ([Delivery]);
//   - timers (waits, timeouts, retry backoff, the run timeout) fire when
//     the virtual clock reaches them.
//
// The clock never reads the wall: after each tick it jumps to the next
// instant anything is due, so a 72-hour approval timeout or a weekly
// cron wait costs one tick. Each tick loads the partial state a shell
// would (the run, every manifest node, the scatter children the inputs
// name, and what Decision.Needs asks for), so the runner decides what a
// server would, tick for tick.
//
// A test file ([File], *.test.yaml) names or embeds a definition and
// lists cases; each case's outcome ([Outcome]: status, output, error,
// node states, attempts, the order nodes finished in, CEL assertions over
// the final state) is compared with its expectation ([Expect]), and
// [Update] returns the file with expectations rewritten to what was
// observed, for its caller to write. [Replay] feeds
// a real run's recorded inputs through another definition version and
// reports the first tick that decides differently.
//
// The package is pure: it imports the core (engine, definition, expr,
// jsonvalue), reads no clock and does no I/O but reading test files.
package wftest
