// Package workers runs Ductor's background work as River jobs on Postgres,
// and is the shell around the pure engine: it loads a run, calls
// engine.Decide, and persists the decision in one transaction.
//
// # Ticks and steps
//
// A coordinator tick (TickWorker, Coordinator.Tick) drains a run's inputs
// (step results, controls, fired timers, signals, events, child updates),
// decides, and in one transaction writes nodes, attempts and history,
// performs the commands (step jobs, timers, child and successor runs…),
// marks the inputs consumed and updates the run guarded by its
// record_version; losing that race rolls everything back and decides again.
// Ticks coalesce through the run's tick_requested flag: only the wake that
// sets it enqueues a tick, and the tick clears it before reading, so a wake
// during a tick causes exactly one more. A step worker (StepWorker) executes
// one attempt and, in one transaction, stores the result as an input, wakes
// the run and completes its own job. Retries wait out their backoff in
// run_dispatch; Sweep (a 100 ms loop in every coordinator process, sharing
// work through SKIP LOCKED) enqueues them when due, fires due timers, and
// reports attempts whose worker vanished (lease expired) as retryable
// failures. Every deadline is compared with the database's clock.
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
// its own workers, so a saturated bulk tier cannot hold interactive work
// back and bulk work always has workers of its own: it never starves.
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
// update per batch, and adds no hop. Virtual time advances only with
// tagged work, so tags stay in the past (anchored a day behind now()), and
// an insert middleware (fairMiddleware) turns tagged jobs from scheduled to
// available. That relies on River honouring a middleware's change of
// State, pinned by TestFairTagsInterleaveTenantsInRiverOrder. Retries and
// delayed dispatches get fresh tags when the sweep enqueues them, so they
// keep their fair place rather than going behind everyone.
package workers
