// Package engine is the coordinator's decision: a pure state machine
//
//	(manifest, state, inputs, now, seed) → (deltas, commands)
//
// in the style of etcd raft. [Engine.Decide] performs no I/O, reads no
// clock and draws no randomness of its own; it never mutates the state
// it is given. A shell (the coordinator tick job, or a step worker that
// ticks inline) loads state from Postgres, calls Decide, and persists the
// [Decision] in one transaction. Everything Ductor promises about runs —
// graph semantics, retries, exactly-once transitions — is decided here
// and tested here, without a database.
//
// # Model
//
// A run executes one compiled [definition.Manifest]. It has a [Run] row
// and one [Node] per manifest step; an inline scatter adds a node per
// item, named REF[KEY]. Run status moves pending → running ⇄ waiting →
// succeeded | failed | cancelled | timed_out | terminated (reason
// continued_as_new or transition_limit); waiting means nothing is ready
// or running and something waits. Node state moves pending → ready →
// running → succeeded | failed, through waiting (with a [WaitingType] and
// its wake data) for parking steps; skipped and cancelled can end any
// non-terminal node. Every change of run status or node state is a
// [Transition]: numbered (Seq), counted on the run (TransitionCount) and
// returned as history. Each execution of a node is an [Attempt].
//
// # One tick
//
// Decide starts a pending run (creating its nodes and readying the
// entrypoints), then applies each [Input] in order, then settles:
//
//  1. An input is validated against the state before it is trusted. A
//     [StepResult] counts only for the node's current (generation,
//     attempt) while it runs: a result for an older attempt is stale, a
//     second one for the same attempt a duplicate; both are listed in
//     Decision.Discarded and change nothing. Timers carry ids that name
//     node, purpose, generation and attempt, so an outdated timer is
//     stale too. Inputs for an ended run are discarded, except an
//     operator retry.
//  2. A terminal node resolves each outgoing edge to fired or dead:
//     outcome edges (success, error, true, false, approved, rejected)
//     first, then done, which fires for any outcome of a node that ran.
//     A skipped node's edges are all dead. On success, a choice group is
//     evaluated in branch order: the first true `when` fires, else the
//     default, and every other edge of the group dies.
//  3. Each resolved edge is recorded on its target (Node.Inbound) and the
//     target's join is applied: it needs all of its incoming edges
//     (`all`), one (`any`) or N (`at_least`), is ready once that many
//     fired (and runs once) and skipped as soon as fewer can still fire
//     (join.go). Skips therefore propagate down the graph within the
//     same tick.
//  4. A ready node starts: run_if false skips it. Pure steps (transform,
//     condition, checkpoint, gather) are evaluated right there, so they
//     finish and route inside the same call — a 1,000-step chain of
//     transforms completes in one Decide. Worker steps (task, http)
//     become a [DispatchAttempt]. Parking steps (wait, signal, event,
//     event_set, digest, approval, human_loop, sync subworkflow) go to
//     waiting and emit what will wake them ([ScheduleTimer],
//     [OpenApproval], [OpenCase], [StartChildRun]…).
//  5. Settling: a pending ContinueAsNew closes the run; the transition
//     tiers apply; when every node is terminal the run succeeds with
//     output_expr, or the map of succeeded sink outputs by ref; otherwise
//     it is running or waiting.
//
// # Failure, retry and idempotency
//
// A failed attempt is retried while the node's [definition.RetryPolicy]
// allows and the error is retryable: codes expression_error,
// expression_limit, payload_too_large, invalid_step and invalid_output
// never are. The next attempt is dispatched at once with RunAt = now +
// [Backoff] (exponential, capped, jitter in [d/2, d] drawn from
// Tick.Seed), so no one sleeps. CEL errors fail the node with
// expression_error, or expression_limit when the expression ran past its
// cost or time limit. When retries are exhausted,
// on_error decides: fail ends the run as failed, cancelling running and
// waiting nodes (with [CancelAttempt], [CancelTimer], [CloseInteraction],
// [CancelChildRun]) and skipping pending ones; continue fires the node's
// error and done edges, kills the others, and the run goes on. A run
// whose nodes all end without a fail-policy failure succeeds.
//
// Every dispatch carries an idempotency key naming the logical operation:
// {run_id}:{node}, identical for automatic retries. [RetryNode] (the
// operator's retry-from-node) re-runs the node and everything downstream
// of it — and, in an ended run, the node that failed it and every node
// the ending cancelled or skipped — keeping upstream outputs. Re-run
// nodes get the next generation: their key becomes {run_id}:{node}:g{N}
// and late inputs of the old generation are stale.
//
// # Beyond edges (docs/beyond-edges.md)
//
// Races (join.go): a join with cancel_rest, once ready, cancels what it
// no longer waits for: each unfinished predecessor on an edge not yet
// resolved, and each unfinished node upstream all of whose outgoing
// edges lead into what is being cancelled (a node that also feeds
// something else is left alone). Downstream nodes are cancelled first.
// Their work is withdrawn like a cancelled run's (attempt, timer,
// approval or case, sync child run, scatter children), Node.CancelReason
// says why, and their edges all die: the join does not fire again, their
// own successors are skipped, no on_error policy applies. Parking steps
// joined {at_least: 1, cancel_rest: true} are the deferred choice: the
// first to finish wins and the others' waits are withdrawn.
//
// Cancelling one node (cancel_node.go): [CancelNode] ends a running or
// waiting node cancelled with error code cancelled and Outcome error, its
// work withdrawn (a scatter's live children, a sync subworkflow's child
// run included). Unlike a race's loser it ran to an end: its error and
// done edges fire (ranToEnd), on_error fail fails the run, and a scatter
// child counts as failed. Any other state is discarded.
//
// Early completion (scatter_early.go): a scatter's complete_when is
// evaluated whenever children finished since its last evaluation
// (ScatterState.Checked), over the scatter's counters; only when it reads
// `results` does Decide need every child loaded (Needs). Once it holds,
// CompletedEarly is recorded with a self-transition saying so, nothing
// more is dispatched, the children not finished are cancelled (counted
// in Cancelled) and the scatter succeeds with the outcomes of the
// finished ones, which is all a gather sees.
//
// Explicit end (end_run.go): when a step with end_run succeeds, the run
// ends at once with that status (end_run: failed gives error code
// end_run), its output from output_expr or the succeeded sinks' and the
// step's outputs; running and waiting nodes are cancelled, pending ones
// skipped, and every edge still open is marked dead.
//
// Loops (loop.go): a sync subworkflow with repeat starts one child run
// per iteration, keyed {node key}:i{N}, and waits through all of them
// (Waiting.Iteration, a waiting → waiting transition per iteration).
// After a successful iteration until_expr decides, reading `output` and
// `iteration`; otherwise the next iteration starts with
// repeat.input_expr (or with.input_expr), and max_iterations without
// until_expr holding fails the node with max_iterations. A
// [ChildRunUpdate] names its child run, so a late report of an earlier
// iteration is stale. The node's output is the last iteration's.
//
// Continued children (controls.go, loop.go): a sync child that continues
// as new emits, with its [StartSuccessor], a [NotifyParent] naming the
// successor (SuccessorRunID, derived from its id and the request), and
// the successor inherits the parent link. The parent's node then waits
// for that run (Waiting.ChildRunID, with no transition: a long-lived
// child may continue without end, and the parent's history must not grow
// with it), so a report from any other run of the chain is stale, the
// node resumes with the output of the run that ends the chain, and
// withdrawing the node cancels that run ([CancelChildRun].RunID; the
// shell follows the chain to a successor not reported yet). A node reset
// by a retry cancels its chain; one that timed out leaves it running, and
// its retry waits for a new child only.
//
// A withdrawn sync child is cancelled saying why (CancelChildRun.Reason):
// "parent cancelled" only when the run was cancelled; otherwise how the
// run ended, or that its node was cancelled, lost a race, was reset by a
// retry, or that its scatter completed early, failed or was cancelled.
//
// # Controls and run limits
//
// [Cancel] ends the run cancelled and cancels every open node (sync
// children included, never async ones); its reason and who asked
// (Cancel.By) are kept on the run (Run.CancelReason, Run.CancelledBy)
// until a retry resumes it. [RetryNode] naming a scatter child retries
// that child alone: it runs again with a new attempt under the next
// Node.Retry (its idempotency key gains :r{N}), its scatter counts it in
// flight again, and a scatter that had completed reopens, resetting the
// steps after it as a retry of the scatter would but keeping every other
// child's outcome (testdata/retry_child.txt). The run timeout is a timer armed
// at start; when it fires the run ends timed_out. [ContinueAsNew] is
// recorded on the run and closes it (terminated, continued_as_new, with
// [StartSuccessor]) at the end of a tick, or defers up to
// Engine.MaxCANDeferrals ticks while Tick.MorePending says signals or
// controls remain. The transition tiers of the manifest's limits: soft
// emits a [Warn] once (whatever else the tick does, even when it also
// crosses hard or ends the run), hard synthesizes a ContinueAsNew,
// terminate ends the run with reason transition_limit; [Terminate] does the same on
// request.
//
// Signals are matched by name to a waiting signal step; unmatched ones
// are buffered (Decision.Signals) for a later signal step, at most
// Engine.MaxBufferedSignals per run; past that they are rejected, and a
// repeated request id is discarded. Events are offered to every waiting
// event, event_set or digest node whose name and match_expr match; each
// node consumes an event at most once (Decision.Events). Input from
// outside cannot fail a run it does not match: a match_expr that errors
// on an event is no match for that node, and the discard (code
// match_error) is kept on the run (Run.Discarded, the latest
// MaxKeptDiscards). An event_set's members may share a name; each is
// counted and keyed in the output by its key, and one event satisfies at
// most one member of a node, the first open one in order that matches.
//
// # Flow control
//
// A run that flow control holds back (a concurrency slot, a throttle's
// turn, a debounce's quiet: the shell decides, in Postgres) is created
// pending with Run.Held set: Decide does not start it. It starts on an
// [Admit] input, and until then it can be cancelled or terminated (it
// ends without nodes, and every later input is discarded) and buffers
// the signals sent to it; anything else is discarded. A task or http
// step with a concurrency pool dispatches with its key and limit
// (DispatchAttempt.FlowKey, FlowLimit), evaluated for each node (each
// scatter child with its item); a key that is not a string, an integer
// or a boolean, or a limit out of range, fails the node as an
// expression_error. The shell's admission counts the pool's attempts.
//
// # Values
//
// Every value is in the JSON value model of package jsonvalue (an
// integral literal within int64 an int64, any other number a float64), so
// an expression means the same on a state fresh from this tick as on one
// reloaded from the database; the property test checks it. Expression
// results are brought to the model as they are produced (a timestamp
// becomes its RFC 3339 string); one that cannot be stored (a NUL
// character, a NaN) fails the node as invalid_output. Every node output
// and the run's output obey one cap (Engine.MaxOutputBytes, 1 MiB as
// JSON): past it the node fails as payload_too_large. Neither code is
// retried.
//
// # Partial state and the shell
//
// Decide works on what the shell loaded, not on the whole run. The shell
// must load: the run row; every node of a manifest step (at most 1,000);
// the scatter children that its inputs name (StepResult.Node,
// TimerFired.Node, ChildRunUpdate.Node…); and the run's buffered
// signals. A scatter node keeps its aggregate ([ScatterState]: total,
// next index, in flight, succeeded, failed), so a child's completion
// touches that child and its scatter only: the Decision lists just those
// two nodes, whatever the fan-out. When Decide needs children it was not
// given — the next child to dispatch under `concurrency`, all children to
// complete a scatter, the live children of a scatter being cancelled —
// it says so in Decision.Needs. The shell then loads them and calls
// Decide again with no inputs and the same Now, in the same transaction,
// until Needs is empty. Every intermediate Decision is consistent and
// may be persisted as it comes.
//
// In one transaction the shell then: upserts Decision.Nodes and
// Decision.Attempts; appends Decision.Transitions to the history; applies
// Decision.Signals and Decision.Events; performs Decision.Commands
// (step-task jobs with InsertManyTx, timers, approvals, cases, child and
// successor runs with ids derived from their keys, so a re-executed tick
// creates nothing twice); marks the inputs consumed; and writes
// Decision.Run with record_version = record_version + 1 guarded by the
// version it read. Zero rows updated means another tick won: roll back
// and decide again on fresh state. Tick.Now is the database's now();
// Tick.Seed should be derived from (run id, record_version) so a replay
// decides the same.
//
// # Invariants
//
// The property test drives random interleavings, duplicates, stale
// results and controls through a fake shell and checks, after every tick:
//
//   - history is gap-free: Seq increases by one, each transition starts
//     from the state the previous one left, and TransitionCount equals
//     the last Seq;
//   - a node is terminal at most once per generation: it leaves a
//     terminal state only through an operator retry, to pending;
//   - every (node, generation, attempt) is dispatched at most once;
//   - the run is terminal if and only if every node is; it is waiting
//     if and only if nothing is ready or running and something waits;
//   - in a succeeded run every edge ended fired or dead, and a skipped
//     node's edges are all dead;
//   - Decide never mutates the state it was given;
//   - answering every outstanding command always ends the run.
//
// Scenario transcripts in testdata/*.txt show whole runs input by input;
// `go test ./app/engine -update` rewrites them, and the diff is reviewed
// like code.
package engine
