// Package shell is the imperative shell around the pure engine: it reads
// runs, asks engine.Decide what to do, and writes the decision, with
// River as the queue between ticks and steps.
//
// # Layering
//
// Ductor's shell is four layers, each built once from a Config and wired
// to the one below; nothing is set after construction. From the bottom:
//
//   - The unit of work (Writer): every durable operation that runs inside
//     one transaction, given that transaction: creating a run with its
//     flow control rules (CreateRun), delivering an input and waking the
//     run (Deliver, Wake), performing a decision's commands and
//     persisting it (persist, commandBatch), enqueueing step jobs through
//     admission, the fair queue and the bridge. Transactions are opened
//     in one way only, store.WithTx; an inline tick nests a savepoint in
//     the caller's.
//   - The tick loop (Ticker, Sweeper, Steps): ticks that read, decide and
//     have the Writer persist; the result group and the grouped attempt
//     starts of step workers; the sweep of due timers, retries, lost
//     attempts and held runs; the fair clock. Observer holds the
//     instruments all of them report to.
//   - The runs service (package runs): what the API and the CLI call,
//     start, signal, control, approvals and cases, schedules, bridge
//     tasks, events, batches, built on a Shell.
//   - The River adapters (package shell): job workers that hand each
//     job to the layer that does it, the client that works the queues,
//     and New, which builds a process's layers from one Config.
//
// A layer calls only the layers below it. The core it stands on (engine,
// flowcontrol, expr, definition) is pure; app/store is the only place
// SQL is written, and app/store/river_job.go the only place River's own
// table is.
//
// # Ticks and steps
//
// A tick drains a run's inputs (step results, controls, fired timers,
// signals, events, child updates), decides, and in one transaction
// performs the commands (step jobs, timers, child and successor runs…),
// writes nodes, attempts and history, marks the inputs consumed and
// updates the run guarded by its record_version; a tick whose guard fails
// rolls everything back and decides again (counted in a metric). Tick
// jobs and the result group's ticks read and decide with no transaction
// open, so that no expression of a definition is evaluated while a
// transaction is held, and then lock the run (FOR NO KEY UPDATE, which
// still lets other transactions insert inputs and attempts for the run)
// and persist only if its record_version is still the one they decided
// on. An inline tick inside another transaction (tickInline) and a
// start's tick (TickNew) still hold the lock from before they read until
// they commit. The guard catches any writer that did not lock.
//
// Ticks work in groups: one statement reads what a set of runs' ticks
// need (the run, its step nodes, its pending inputs, the database's
// clock); the engine decides each; then one statement locks those it can
// lock without waiting, and the writes of those still at the version read
// go as one statement per kind of row, sent in one round trip (see "Read,
// decide, write" below). A
// step worker (StepWorker) takes its attempt through attemptStarts, which
// groups the starts of concurrent workers into one statement, executes it,
// and hands the result to resultGroup, which takes every result handed
// over meanwhile and ticks their runs together: the runs that have no
// tick job coming (decideFree), with the results passed straight to the
// engine, persisted if it can lock them without waiting and they are
// still as read (lockDecided). The results of the other runs (busy,
// changed meanwhile, or hot: a fan-out's children finishing) are stored
// as inputs,
// with one statement per run, and the run's tick job (Ticker.Tick, run by
// workers.TickWorker) drains them in batches. The worker does not wait for
// its group to commit, so its River slot is free for the next job at once.
// A start or a result that cannot be written because the database is
// unavailable is kept and tried again with backoff while the attempt is
// still the worker's (retry.go); a result lost with its process leaves
// the attempt leased and unfinished, and the sweep retries it when the
// lease runs out, as it does for a worker that died. Tick jobs coalesce through the run's tick_requested
// flag: only the wake that sets it enqueues a tick, and the tick clears
// it before reading, so a wake during a tick causes exactly one more (and
// an input delivered after the tick's read stays pending for it).
// Triggers tick their new run inline the same way.
//
// Retries wait out their backoff in run_dispatch; Sweep (a 100 ms loop in
// every coordinator process, sharing work through SKIP LOCKED) enqueues
// them when due, fires due timers, and reports attempts whose worker
// vanished as retryable failures: their lease ran out without a result, or
// their River job has been running past the rescue window without the
// attempt's start ever being recorded. It finalizes their River jobs at
// the same time, re-ticks runs whose tick job died mid-tick, and completes
// step jobs whose result was recorded but whose River completion was lost.
// Every deadline is compared with the database's clock.
//
// A task nobody takes fails as no_worker after its schedule_to_start: a
// bridge task no worker claimed (failUnstarted), or a task of the
// server's own handlers whose step job is still available while no
// process with the steps role has been seen alive working its queue
// (failUnserved; those processes record themselves in step_worker every
// few seconds, HeartbeatSteps), so a backlog behind live workers never
// fails a task.
//
// River's defaults hand a job from one worker to the next in ~100 ms to
// 1 s (a 100 ms fetch cooldown that also rate-limits insert notifications,
// and a 1 s poll). Every queue here fetches with a 2 ms cooldown and polls
// every 50 ms, and every transaction that enqueues work also sends its own
// notification (Notify), so the next job is fetched at once.
//
// # The tiered fair queue
//
// Tiers are River queues: coordinator ticks on their own queue (cheap,
// coalesced, and they unblock everything), then step tasks on one queue per
// tenant tier (steps_interactive, steps_standard, steps_bulk), each with
// its own workers in proportion to the tier's weight (TierWeights, 4:2:1),
// so a saturated bulk tier cannot hold interactive work back and bulk work
// always has workers of its own: it never starves.
//
// Inside a tier, tenants share the workers by start-time fair queueing.
// River fetches a queue in (priority, scheduled_at, id) order; Ductor
// writes a virtual start tag into each step job's scheduled_at. When a
// tick (or the sweep) enqueues a tenant's batch, fairTag reserves
// len(batch) × StepCost of that tenant's virtual time in fair_clock,
// starting at the later of the tenant's previous finish tag and the
// queue's head (its earliest available job). A tenant that just became
// busy therefore starts at the head, right behind what is already being
// fetched, while a tenant with 5,000 queued steps has tags stretching far
// behind it: the two interleave instead of one waiting for the other. It
// is work-conserving (one busy tenant gets every worker), costs one row
// update per group of batches, and adds no hop. Virtual time advances only with
// tagged work, so tags stay in the past (anchored a day behind now()), and
// an insert middleware (fairMiddleware) turns tagged jobs from scheduled to
// available. That relies on River honouring a middleware's change of
// State, pinned by TestFairTagsInterleaveTenantsInRiverOrder. Retries and
// delayed dispatches get fresh tags when the sweep enqueues them, so they
// keep their fair place rather than going behind everyone; a step job
// that River itself snoozed, retried or rescued (its scheduled_at is now
// a real time, behind every tag) is put back at the head by the sweep.
//
// Tags order the queue, but on a saturated machine the few statements on
// an idle tenant's way (its trigger's transaction, its step's start) share
// the CPU with the flood's grouped work, and each takes several times its
// idle time. So the clock also reports whether the tenant had anything
// queued: a step dispatched for a tenant with nothing queued, while others
// have a backlog, is marked sparse (StepArgs.Sparse) and goes to its
// tier's sparse lane, a queue with workers of its own, so that it never
// waits for a worker slot the flood holds. A trigger of a tenant not known
// to be busy and a sparse step's start (recorded on its own, not in a
// group) are urgent: while urgent work runs, the process's bulk work
// (grouped starts, group ticks, tick jobs) waits before its next
// statement, for at most 20 ms a spell (yieldGate); while a sparse step
// waits to be fetched, the ticks wait. When only one tenant is busy
// nothing is urgent and nothing waits.
//
// A tenant's own limits (max_concurrency and rate_per_second, set with
// `ductor tenant set`) apply before any of that, when its steps are
// enqueued (admit): under a lock on the tenant's token-bucket row, so two
// replicas never admit past a limit together, and counting the tenant's
// queued and running steps (each of a step batch) and unfinished bridge
// tasks against its cap. Steps over a
// limit wait in run_dispatch and the sweep offers them again, spaced at
// the rate or after a short recheck of the cap.
//
// # What a step costs
//
// The goal is a step that costs about two River jobs: a chain at half of
// River's raw no-op rate, a scatter at 0.7 of it (bench/README.md has the
// figures and the profile). A River job is one row written three times
// (inserted, fetched, completed), each version in a few btrees, all three
// statements shared by a hundred jobs. A step is that job plus its share
// of two grouped transactions: the attempt's start (a run_attempt row)
// and the tick that applies its result and dispatches what follows (lock
// and read, decide, then one round trip of writes: the attempt's result,
// the changed nodes, a history batch, the run row, the next step jobs).
// The design keeps every row a step writes to one version per tick and
// every version out of indexes it does not need:
//
//   - History is one row per run and tick (run_history_batch, its
//     transitions as a JSON array; run_history is a view of the old
//     rows), not one per transition.
//   - A tick's rewrite of its run row and of a node's row changes no
//     indexed column (a run's status changes only when it starts and
//     ends), and both tables keep room on their pages (fillfactor), so
//     those updates are HOT: no new index entries.
//   - Step jobs are not indexed by River's GIN indexes on args and
//     metadata (dropped: a step job's args made dozens of entries per
//     version); Ductor finds step jobs by attempt or tenant through one
//     btree on live step jobs only (river_job_ductor_step_idx), with the
//     same predicate in each lookup; the retention prune finds a run's
//     jobs by run id through another (river_job_ductor_run_idx), and step
//     pools a key's jobs through a third that holds only pool jobs
//     (river_job_ductor_flow_idx).
//   - A group tick or a tick job that commits remembers the state and
//     step nodes it wrote, keyed by the record version it wrote
//     (runCache); the next tick of the run reads its row's columns and
//     inputs after the lock as always, and its state and nodes only when
//     the version moved on (another process ticked it). Every write of
//     either moves the version, so what is reused is exactly what the
//     read would have returned.
//   - Every statement on the path is prepared once per connection (pgx's
//     statement cache) and sent in pipelines: a group's lock and read in
//     one round trip, its writes in another. uuids are encoded and
//     scanned in binary (store.RegisterUUID), not through strings.
//
// Each guarantee holds as before because none of these changes what is
// decided or when it is written: the same rows are written in the same
// transactions, and the history view has the shape the checker's
// invariants read.
//
// Measured, these took WAL per chain step from 12 to 7.5 KiB but left
// the chain near 0.1× and the scatter near 0.15× River's raw rate: a
// step still cost about twelve River jobs of CPU, most of it River's job,
// the attempt's start and the step's share of its tick's statements, per
// step. So several ready steps of one tenant share one River job, a step
// batch (packSteps; at most Config.StepBatchMax, 4 by default, 1
// turns batches off), and every guarantee stays per step:
//
//   - Packing happens last, after admission, pools, routing to bridge
//     workers and fair tags (insertSteps): only local task and http steps
//     of one tenant, queue, type and schedule_to_start share a job, never
//     a sparse step, a step of a concurrency pool or one its pool held
//     back. The first step's args stay at the top level of the job's, the
//     others go in StepArgs.More, so every lookup of a step job by tenant,
//     run and node finds the batch by its first step. The batch keeps its
//     first step's fair tag; its tenant reserved the span of all of them.
//   - The worker runs the steps side by side, each as in a job of its own:
//     taken through the grouped conditional start, executed unless
//     refused, its result handed over (StepWorker.workBatch). River's
//     timeout is the longest step's plus the usual backstop. A step whose
//     start could not be recorded offers the job again once the results of
//     the steps that ran are recorded: delivered again, the job skips those
//     (they have a result) and takes the others.
//   - A step of a batch is never cancelled through River, which would end
//     the whole job. The cancelling tick gives the attempt its result
//     (store.AttemptCancel), so no worker starts it from then on, and
//     notifies the steps processes, which end that attempt's own context
//     if they run it (stepCancels, whose comment says why no cancel is
//     missed). A step with a job of its own is cancelled the same way, and
//     its job through River too.
//   - Leases and lost-step detection stay per attempt: the sweep reports
//     every step of a job running past the rescue window (or discarded)
//     that never started; a batch is completed by the sweep only once
//     every step it carries has its result, and finalizing the jobs of
//     lost attempts leaves batches alone.
//   - Admission counts steps, not jobs (a batch's every step, against the
//     tenant's max_concurrency), as do the queue-depth metrics; a batch
//     that waited past its schedule_to_start with no worker fails each of
//     its steps as no_worker; the retention prune keeps an unfinished
//     batch, which may carry other runs' steps.
//
// A batch runs up to StepBatchMax steps in one of River's worker slots,
// so a process may run that many times its slots at once; steps mostly
// wait on something else (an HTTP call, a bridge), and the step's own
// timeout still bounds each. bench/README.md ("Towards two River jobs a
// step") has what batches changed.
//
// # Local steps
//
// A process that has both the ticks and the executor (Config.Local, the
// coordinator and steps roles together) runs the task and http steps its
// own ticks dispatch without a River job. When a tick's transaction was
// opened by withTx (a tick job's, a result group's, or a start's through
// Ticker.WithTx, whose inline tick dispatches the run's first steps),
// insertSteps gives
// the step jobs left after admission, pools and the bridge to runLocal:
// a step alone in its job, not sparse, of no pool, of a tenant with no
// admission limits, for which the process has a free slot within the
// tenant's fair share (the slots divided among the tenants holding any),
// has its attempt recorded as started by this process, with the lease a
// step worker would take (its timeout plus the rescue window), in that
// transaction, and is registered for cancels (stepCancels, only while its
// listener listens) before the commit. Once the transaction commits the
// step runs on a goroutine of its own and hands its result to the result
// group, whose next group tick applies it and dispatches what follows,
// locally again when it can; a transaction that fails before its commit
// runs none of its steps. A commit that fails may have committed all the
// same (its answer lost with the connection in a crash or a failover):
// the process then asks, once the database answers, which of the
// attempts are still held in its name, renewing their leases as it asks
// (settle, RunAttemptRenewHeld), and runs those; the others it drops.
// The attempt row says started, by this process, leased; a crash leaves
// it leased with no result, and the sweep of any coordinator reports it
// lost when the lease runs out, as it does for a step worker that died,
// and the step's policy retries it. Exactly-once transitions hold as for
// any result (applied under the run's lock and record version); cancels
// reach the attempt's context through the notification as for a
// batched step; a step that goes local never waited, so
// schedule_to_start and no_worker do not apply; pools and admission limits keep River's path, where they are
// counted. Fairness holds because a tenant holds at most its share of
// the local slots; every other step goes through the tiered fair queue.
// A sparse step, a retry the sweep enqueues and a bridge task keep
// River's path, as does a trigger's first step in a process without the
// steps role (an API replica).
//
// # Read, decide, write
//
// Every path that reads state, decides on it and writes must decide on
// what it read after it holds the lock that orders its writers, in a
// statement that started after the lock was granted, or check under that
// lock that what it read has not changed (tick jobs, below): under READ
// COMMITTED, a statement that locks a row returns the row's newest
// version when another transaction committed it after the statement's
// snapshot (EvalPlanQual), while everything else the statement reads
// comes from the older snapshot, and an optimistic version check on the
// locked row does not protect what was read beside it. Each path and why
// it holds (TestConcurrencyChecker, in app/checker, drives them all from
// several processes under a nemesis that pauses ticks between snapshot and
// lock and between reading and writing):
//
//   - Inline ticks inside another transaction (tickFree): RunTickLock
//     locks, RunTickRead reads in the next statement. Once the same
//     statement, the lost update behind scatters stuck with every child
//     done (store.SameStatementTickLoad restores it for the checker, which
//     finds it; it also turns off runCache, as the old load had none, and
//     puts the result group back on this path). A run's state and nodes
//     taken from runCache are those of the record version RunTickRead
//     read.
//   - Result group ticks (decideFree, lockDecided) read as tick jobs do
//     (below), decide, then lock their runs without waiting
//     (store.RunTickLockFree) and persist those still at the version read
//     and with no tick job on its way since, with the same check of a run
//     that ends; the others' results are stored for their tick jobs.
//   - Tick jobs (Ticker.Tick, tickOnce) read before they lock, with
//     no transaction open: the run, its step nodes and its inputs in one
//     statement (store.RunTickPeek, the same read unlocked), scatter
//     children and buffered signals in later ones (loadState, loadNeeds).
//     The engine decides; then the write transaction locks the run
//     (RunLockVersion, waiting) and gives up with store.ErrConflict,
//     writing nothing, unless the record_version is still the one read.
//     Every write of a run's state, step nodes or scatter children and
//     every consumption of its inputs moves the version, so an unmoved
//     version means that every statement of the read saw what is there
//     under the lock. Inputs are the exception: delivering one does not
//     move the version, and one delivered after the read stays pending for
//     the next tick (its wake set the flag the tick cleared), unless the
//     tick ends the run, which drains nothing more: then an input the read
//     did not see (store.RunInputsArrived) makes it decide again, as a
//     signal whose sender locked the run and found it live must reach it
//     or its successor. A tick job that keeps losing hands over to a fresh
//     one after maxTickConflicts. FaultBeforeDecide, the checker's pause,
//     now falls between the read and the lock.
//   - Trigger ticks (TickNew) decide on the row their own transaction
//     inserted, which no one else can see yet.
//   - Writes are guarded as well: the run update by record_version, the
//     consumption of inputs by consumed_at (an input consumed twice fails
//     the tick), and everything a tick creates has an id derived from what
//     made it, inserted with ON CONFLICT DO NOTHING.
//   - Signals (runs.Service.Signal) lock the run (and each successor they
//     follow) before deciding it is live: a signal decided on a run that a
//     tick was continuing as new or ending was stored for a run that
//     drains nothing more, and lost.
//   - Cancelling an attempt cancels its River job whatever its state, not
//     only a running one: a job fetched after the tick read it as waiting
//     would have run a cancelled step. Every cancelled attempt (in a step
//     batch or not) is also given its result in the cancelling
//     transaction, which the start's conditional statement sees on the
//     newest row version, and which closes its row whatever becomes of its
//     worker.
//   - Step starts (attemptStarts) are conditional in one statement: an
//     attempt with a result is not taken, nor one whose job the sweep may
//     already have reported stranded (AttemptTake.By), so a late start
//     never runs a step the sweep is retrying.
//   - The sweep claims what it reports with UPDATE or DELETE … WHERE on
//     the rows' own columns and SKIP LOCKED (due timers and dispatches,
//     expired leases, stranded and dead jobs), whose conditions Postgres
//     re-checks on the newest row; the engine then discards a report that
//     lost a race with a real result as stale or a duplicate.
//   - Approvals, cases and bridge tasks lock their row (FOR UPDATE) and
//     decide on its own columns, counting decisions after the lock;
//     admission locks the tenant's bucket and counts its jobs after.
//   - Cancels, retries from a node, ContinueAsNew and child-run updates
//     only deliver inputs: their run's tick decides on them, under its
//     lock, and discards what no longer applies. Trigger idempotency and
//     event idempotency rest on unique keys.
package shell
