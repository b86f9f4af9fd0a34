// Package checker is Ductor's concurrency and fault checker, in the
// spirit of Jepsen: it drives runs through several worker processes
// against one database while a nemesis disturbs them, then reads from the
// database alone whether what Ductor promises held.
//
// # Processes
//
// A worker is the test binary run again (StartWorker; the test package's
// TestMain calls RunWorkerIfAsked first): a coordinator, a River client
// working every queue and the sweep, on the schema the test gave it, with
// StepHandler, which records every execution in checker_execution before
// it does anything else. The test process only triggers runs and acts on
// them (Workload), so every tick and every step happens in a worker.
// Workers can be stopped, or killed with SIGKILL mid-work.
//
// # The nemesis
//
// WorkerOptions choose the interleavings a worker forces: a pause in the
// database between a tick's snapshot and its locks (the
// ductor_fault_pause function, called by the locking statement, reads the
// session's ductor.fault_pause_ms, which production never sets), and a
// pause in the process between reading a run and deciding on it while
// holding its lock (Coordinator.Fault at before_decide). HoldTicks holds
// every tick there forever, for a process to be killed holding its jobs.
// Tests add the rest from outside: a database crashed and restarted, a
// database clock ahead or behind (pgcluster.Options.ClockOffset).
//
// # The workload
//
// Workload.Round starts one run of each definition and acts on it from
// outside at the same time as the workers tick it: an inline scatter whose
// children finish a few milliseconds apart (so that both processes tick
// the scatter by turns), a child_workflow scatter, a chain, a step that
// fails once and is retried, a run sent its three signals at once (each
// twice, with one request id), a scatter cancelled mid-flight, and a run
// continued as new while a signal for it is in flight, and runs of a
// definition allowing one run per key at a time whose steps share a
// concurrency pool of one.
//
// # The invariants
//
// Read from the database (Check, and Workload.Expectations):
//
//   - every acknowledged run, child and successor ends, as expected;
//   - a scatter's counters equal its children's real states (this holds
//     at every commit, so it is also watched while the workload runs);
//   - each run's history is gap-free and as long as its transition count,
//     and no node transition is recorded twice: no node succeeds twice
//     for one attempt;
//   - no attempt's handler runs twice (with no process killed);
//   - every input is consumed, and never twice (the consumption is
//     guarded);
//   - no River job of Ductor's is left waiting or running;
//   - every acknowledged signal is consumed by the chain that goes on;
//   - no key of a definition under a concurrency rule ever has more runs
//     going than its limit (watched while the workload runs, and checked
//     afterwards from the commits that started and ended every run, which
//     a trigger records: the runs' own started_at and finished_at are
//     their ticks' transaction starts, which do not follow the slot's
//     handover), no pooled step key
//     more executions at once than its pool's limit, and once every run
//     has ended flow control holds nothing (no slot, no held run, no
//     step held back and forgotten);
//   - metering adds up (Usage): per tenant and UTC day every usage figure
//     equals what the tables it counts hold, and stored bytes equal the
//     bytes the rows hold (TestCheckerFindsStepsNotMetered switches the
//     attempts' metering off and must find the steps it missed).
//
// # Deliveries
//
// With WorkerOptions.SecretKey workers also dispatch the outbox's system
// events and send the subscriptions' deliveries (deliveries.go):
// TestDeliveryChecker finds each delivered exactly once, to every
// subscription it matches, by one process at a time, and
// TestDeliveryCheckerFindsAnUnguardedClaim, with the claim's lock and
// guards switched off, must find deliveries sent twice.
//
// # Local steps
//
// With WorkerOptions.LocalSteps a worker runs the steps its ticks
// dispatch in its own process, with no River job (shell's "Local
// steps"). TestLocalStepsCheckerWithProcessesKilledMidStep runs two such
// workers while a nemesis kills one with SIGKILL every two seconds, mid-
// step, and starts another: every run succeeds, Check finds nothing, a
// step runs at most once more per attempt of it lost with a process, and
// the counts show both that steps ran locally (more attempts started than
// step jobs carried) and that local attempts were lost and re-dispatched.
// TestLocalStepsCheckerFindsUnleasedSteps records local attempts with no
// lease (WorkerOptions.UnleasedLocalSteps): the runs of a killed process
// never go on, and Stalled must find them.
//
// # Proving it can fail
//
// WorkerOptions.SameStatement makes a worker load runs the old way, lock
// and read in one statement (store.SameStatementTickLoad). Under READ
// COMMITTED that statement returns the newest row of a run another tick
// committed after the statement's snapshot, beside nodes and inputs from
// before that commit, and the tick writes the stale nodes back.
// TestConcurrencyCheckerFindsTheLostUpdateOfTheOldLoad runs the workload
// that way and must find the lost update (a scatter whose counters
// disagree with its children, as in production: every child done, the
// scatter still counting some in flight, the run stuck); the same
// workload on today's load (TestConcurrencyChecker) finds nothing.
//
// Likewise shell.Testing.UnguardedUpgrades makes the driver's upgrades
// read a run without its lock, pause, and write their plan over whatever
// the workers committed meanwhile (no record_version check);
// TestConcurrencyCheckerFindsTheUnguardedUpgrade sends each upgraded
// run its signal during the upgrade and must find the lost update (a
// history longer than the run's transition count, or a run that consumed
// its signal and was put back to wait for it: Stalled), which the
// guarded upgrade never leaves.
package checker
