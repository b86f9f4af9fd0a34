package store

// This file is Ductor's one seam onto River's tables: every statement
// that reads or writes river_job is here, and nowhere else in Ductor
// (db/migrations aside). River's tables are not in sqlc's schema, so the
// statements are written by hand. Each assumption they make of River (the
// job states they name, the args keys they read, the columns they use,
// the indexes migrations drop) is pinned against the River version in
// go.mod by river_job_contract_test.go: a River upgrade that breaks one
// fails that test instead of Ductor.

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// stepJobsLive finds the River jobs of one attempt that have not
// finished, fetched or not, through river_job_ductor_step_idx (whose
// predicate the query repeats), and whether each is a step batch. It finds
// a batch by its first step only (the one its args name at the top
// level). River's tables are not in sqlc's schema, so this query is
// written by hand.
const stepJobsLive = `SELECT id, args ? 'more' FROM river_job
WHERE kind = 'ductor.step' AND state NOT IN ('completed', 'cancelled', 'discarded')
  AND args->>'tenant_id' = $1::text AND args->>'run_id' = $2::text AND args->>'node' = $3
  AND (args->>'generation')::int = $4 AND (args->>'attempt')::int = $5`

// LiveStepJob is an unfinished step job; Batch tells that it carries
// other steps besides the one it was found by.
type LiveStepJob struct {
	ID    int64
	Batch bool
}

// StepJobsLive returns the step jobs of one attempt that have not
// finished: those waiting to be fetched as well as those running, since a
// job fetched after a cancelling tick read it would run.
func (s *Store) StepJobsLive(ctx context.Context, tenantID, runID uuid.UUID, node string, generation, attempt int) ([]LiveStepJob, error) {
	rows, err := s.db.Query(ctx, stepJobsLive, tenantID.String(), runID.String(), node, generation, attempt)
	if err != nil {
		return nil, fmt.Errorf("find step jobs: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[LiveStepJob])
	if err != nil {
		return nil, fmt.Errorf("find step jobs: %w", err)
	}
	return jobs, nil
}

// stepMembers are the steps a step job j carries, each as m.a: its own
// args, then those of the further steps of a batch (args->'more').
const stepMembers = `jsonb_array_elements(jsonb_build_array(j.args) || coalesce(j.args->'more', '[]'::jsonb)) AS m(a)`

// memberAttempt matches run_attempt a with the attempt of step m.a.
const memberAttempt = `a.tenant_id = (m.a->>'tenant_id')::uuid AND a.run_id = (m.a->>'run_id')::uuid
           AND a.node = m.a->>'node' AND a.generation = (m.a->>'generation')::int
           AND a.attempt = (m.a->>'attempt')::int`

// stepJobsInFlight counts a tenant's steps queued or running on some
// queues, a batch's every step, through river_job_ductor_step_idx.
const stepJobsInFlight = `SELECT coalesce(sum(1 + coalesce(jsonb_array_length(args->'more'), 0)), 0) FROM river_job
WHERE kind = 'ductor.step' AND state NOT IN ('completed', 'cancelled', 'discarded')
  AND args->>'tenant_id' = $2::text AND queue = ANY($1::text[]) AND state IN ('available', 'running')`

// StepJobsInFlight counts a tenant's steps queued or running: its step
// jobs on queues and its unfinished bridge tasks.
func (s *Store) StepJobsInFlight(ctx context.Context, tenantID uuid.UUID, queues []string) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, stepJobsInFlight, queues, tenantID.String()).Scan(&n); err != nil {
		return 0, fmt.Errorf("count steps in flight: %w", err)
	}
	remote, err := s.q.BridgeTaskCountTenant(ctx, tenantID)
	if err != nil {
		return 0, fmt.Errorf("count bridge tasks in flight: %w", err)
	}
	return n + int(remote), nil
}

// FairClockKey names one tenant's virtual clock on one queue.
type FairClockKey struct {
	TenantID uuid.UUID
	Queue    string
}

// fairClockAdvanceMany reserves span microseconds of each tenant's
// virtual time on a queue, for several clocks in one statement: a span
// starts at the later of the tenant's last finish tag and the queue's head
// (the start tag of the next job River will fetch: its earliest available
// job, or a day ago when the queue is empty; virtual time advances far
// slower than real time, so tags stay in the past). Each (tenant, queue)
// appears once. River's tables are not in sqlc's schema, so this query is
// written by hand.
const fairClockAdvanceMany = `WITH req AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[]) AS r(tenant_id, queue, span)),
head AS (
    SELECT q.queue, m.first IS NULL AS empty, coalesce(m.first, now() - interval '24 hours') AS h
    FROM (SELECT DISTINCT queue FROM req) q,
    LATERAL (SELECT min(scheduled_at) AS first FROM river_job
        WHERE state = 'available' AND queue = q.queue AND priority = 1) m)
INSERT INTO fair_clock AS c (tenant_id, queue, finish_tag)
SELECT req.tenant_id, req.queue, head.h + req.span * interval '1 microsecond' FROM req JOIN head USING (queue)
ORDER BY req.tenant_id, req.queue
ON CONFLICT (tenant_id, queue) DO UPDATE
SET finish_tag = greatest(c.finish_tag, excluded.finish_tag - (SELECT span FROM req
        WHERE req.tenant_id = c.tenant_id AND req.queue = c.queue) * interval '1 microsecond') +
    (SELECT span FROM req WHERE req.tenant_id = c.tenant_id AND req.queue = c.queue) * interval '1 microsecond'
RETURNING c.tenant_id, c.queue, c.finish_tag - (SELECT span FROM req
    WHERE req.tenant_id = c.tenant_id AND req.queue = c.queue) * interval '1 microsecond',
    (SELECT empty FROM head WHERE head.queue = c.queue),
    (SELECT h FROM head WHERE head.queue = c.queue)`

// stepJobsRetag gives step jobs that lost their fair tag the head of
// their queue's. A tag lies a day or so in the past (see
// fairClockAdvanceMany); River sets scheduled_at to now plus a delay when
// it snoozes a job, retries it after an error or rescues it from a dead
// worker, which orders the job behind every tagged job: under a flood that
// never drains, it would wait forever. At the head it goes next, as a
// tenant that has just become busy does.
const stepJobsRetag = `WITH stray AS (
    SELECT id, queue FROM river_job
    WHERE state = 'available' AND queue = ANY($1::text[]) AND priority = 1
      AND scheduled_at > now() - interval '1 hour' AND kind = 'ductor.step'
    ORDER BY id
    LIMIT $2
    FOR UPDATE SKIP LOCKED),
head AS (
    SELECT q.queue, coalesce((SELECT min(scheduled_at) FROM river_job
        WHERE state = 'available' AND queue = q.queue AND priority = 1
          AND scheduled_at <= now() - interval '1 hour'), now() - interval '24 hours') AS h
    FROM (SELECT DISTINCT queue FROM stray) q)
UPDATE river_job j SET scheduled_at = head.h
FROM stray JOIN head USING (queue)
WHERE j.id = stray.id`

// StepJobsRetag puts up to limit available step jobs of queues whose
// scheduled_at is no fair tag back at the head of their queue, and
// returns how many it moved.
func (s *Store) StepJobsRetag(ctx context.Context, queues []string, limit int) (int, error) {
	tag, err := s.db.Exec(ctx, stepJobsRetag, queues, limit)
	if err != nil {
		return 0, fmt.Errorf("retag step jobs: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// FairTag is the start of a span of a tenant's virtual time on a queue.
// Sparse tells that the tenant had nothing queued while others had: the
// span starts at the head of a queue that is not empty.
type FairTag struct {
	Start  time.Time
	Sparse bool
}

// FairClockAdvanceMany reserves spans[i] of keys[i]'s virtual time, for
// distinct keys, in one statement, and returns each span's start tag.
func (s *Store) FairClockAdvanceMany(ctx context.Context, keys []FairClockKey, spans []time.Duration) ([]FairTag, error) {
	tenants := make([]uuid.UUID, len(keys))
	queues := make([]string, len(keys))
	micros := make([]int64, len(keys))
	for i, k := range keys {
		tenants[i], queues[i], micros[i] = k.TenantID, k.Queue, spans[i].Microseconds()
	}
	rows, err := s.db.Query(ctx, fairClockAdvanceMany, tenants, queues, micros)
	if err != nil {
		return nil, fmt.Errorf("advance fair clocks: %w", err)
	}
	tags := map[FairClockKey]FairTag{}
	for rows.Next() {
		var k FairClockKey
		var start, head time.Time
		var empty bool
		if err := rows.Scan(&k.TenantID, &k.Queue, &start, &empty, &head); err != nil {
			rows.Close()
			return nil, fmt.Errorf("advance fair clocks: %w", err)
		}
		tags[k] = FairTag{Start: start, Sparse: !empty && !start.After(head)}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("advance fair clocks: %w", err)
	}
	out := make([]FairTag, len(keys))
	for i, k := range keys {
		t, ok := tags[k]
		if !ok {
			return nil, fmt.Errorf("advance fair clocks: no tag for tenant %s on %s", k.TenantID, k.Queue)
		}
		out[i] = t
	}
	return out, nil
}

// stepJobsStranded claims step jobs whose attempt was never started and
// never will be: River shows them running for longer than the rescue
// window (a start takes milliseconds: the worker's process died between
// fetching the job and recording the start, or the fetch itself was lost
// with the database before its answer reached River), or it discarded
// them in the last hour (the worker failed before the start, or River's
// own rescuer gave up on them).
// No lease will ever run out for such an attempt. Each job is claimed once
// (a mark in its metadata) and finalized (a running one is discarded, as
// River's own rescuer would an hour later); its attempt is returned, and
// for a step batch every attempt of it that never started (the others,
// started, have their leases; their worker finds the job finalized when it
// completes, which River then leaves as it is). A
// worker that records the start after this is refused (AttemptTake.By).
const stepJobsStranded = `WITH running AS (
    SELECT j.id FROM river_job j
    WHERE j.state = 'running' AND j.kind = 'ductor.step'
      AND j.attempted_at < now() - $1 * interval '1 millisecond'
      AND ` + someNeverStarted + `
    ORDER BY j.id LIMIT $2 FOR UPDATE OF j SKIP LOCKED),
discarded AS (
    SELECT j.id FROM river_job j
    WHERE j.state = 'discarded' AND j.finalized_at > now() - interval '1 hour' AND j.kind = 'ductor.step'
      AND ` + someNeverStarted + `
    ORDER BY j.id LIMIT $2 FOR UPDATE OF j SKIP LOCKED),
stranded AS (SELECT id FROM running UNION ALL SELECT id FROM discarded),
claimed AS (
    UPDATE river_job SET metadata = river_job.metadata || '{"ductor_stranded": true}',
        state = 'discarded', finalized_at = coalesce(river_job.finalized_at, now()),
        errors = CASE WHEN river_job.state = 'running' THEN array_append(river_job.errors, jsonb_build_object(
            'at', now(), 'attempt', river_job.attempt, 'error', 'stranded: running past the rescue window without its attempt started')) ELSE river_job.errors END
    FROM stranded WHERE river_job.id = stranded.id
    RETURNING river_job.args)
SELECT (m.a->>'tenant_id')::uuid, (m.a->>'run_id')::uuid, m.a->>'node', (m.a->>'generation')::int, (m.a->>'attempt')::int
FROM claimed j, ` + stepMembers + `
WHERE ` + memberNeverStarted

// someNeverStarted holds for a step job j not yet claimed as stranded
// that carries a step whose attempt has neither started nor finished
// (every step of a batch is looked at).
const someNeverStarted = `NOT j.metadata ? 'ductor_stranded'
       AND EXISTS (SELECT 1 FROM ` + stepMembers + ` WHERE ` + memberNeverStarted + `)`

// memberNeverStarted holds for a step m.a whose attempt has neither
// started nor finished.
const memberNeverStarted = `NOT EXISTS (SELECT 1 FROM run_attempt a
         WHERE ` + memberAttempt + `
           AND (a.started_at IS NOT NULL OR a.finished_at IS NOT NULL))`

// StepJobsClaimStranded claims up to limit step jobs whose attempt was
// never started and never will be (see stepJobsStranded) and returns their
// attempts.
func (s *Store) StepJobsClaimStranded(ctx context.Context, window time.Duration, limit int) ([]LostAttempt, error) {
	rows, err := s.db.Query(ctx, stepJobsStranded, window.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("claim stranded step jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LostAttempt, error) {
		var a LostAttempt
		err := r.Scan(&a.TenantID, &a.RunID, &a.Node, &a.Generation, &a.Attempt)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim stranded step jobs: %w", err)
	}
	return out, nil
}

// stepJobsDiscardLost finalizes the running step jobs of attempts the
// sweep reported lost (their lease ran out): the process that held them is
// gone, or will find its result stale. River's own rescuer would leave
// them running for an hour, counted against their tenant's concurrency
// cap meanwhile. A worker that is still alive finds its job finalized
// when it completes, which River then leaves as it is. One index lookup
// per attempt (river_job_ductor_step_idx). A step batch is left alone:
// its other steps may still run; once each has its result (a lost one's
// is recorded when its run applies the loss), stepJobsCompleteFinished
// completes it.
const stepJobsDiscardLost = `UPDATE river_job j SET state = 'discarded', finalized_at = now(),
    errors = array_append(j.errors, jsonb_build_object('at', now(), 'attempt', j.attempt,
        'error', 'the attempt''s lease ran out without a result: reported lost and retried'))
WHERE j.id IN (
    SELECT x.id FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[])
        AS m(tenant_id, run_id, node, generation, attempt),
    LATERAL (SELECT id FROM river_job
        WHERE kind = 'ductor.step' AND state NOT IN ('completed', 'cancelled', 'discarded') AND state = 'running'
          AND NOT args ? 'more'
          AND args->>'tenant_id' = m.tenant_id AND args->>'run_id' = m.run_id AND args->>'node' = m.node
          AND (args->>'generation')::int = m.generation AND (args->>'attempt')::int = m.attempt) x)`

// StepJobsDiscardLost finalizes the running step jobs of lost attempts
// and returns how many it finalized.
func (s *Store) StepJobsDiscardLost(ctx context.Context, lost []LostAttempt) (int, error) {
	if len(lost) == 0 {
		return 0, nil
	}
	n := len(lost)
	tenants, runs, nodes := make([]string, n), make([]string, n), make([]string, n)
	generations, attempts := make([]int32, n), make([]int32, n)
	for i, a := range lost {
		tenants[i], runs[i], nodes[i] = a.TenantID.String(), a.RunID.String(), a.Node
		generations[i], attempts[i] = int32(a.Generation), int32(a.Attempt)
	}
	tag, err := s.db.Exec(ctx, stepJobsDiscardLost, tenants, runs, nodes, generations, attempts)
	if err != nil {
		return 0, fmt.Errorf("discard lost step jobs: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// tickJobsRescue finalizes tick jobs running for longer than the rescue
// window, by the database's clock: their process died mid-tick (its
// transaction rolled back, its run's wake flag already cleared). River's
// rescuer never would: ticks have no timeout. A tick still alive after
// that long is harmless to rescue: the next tick waits for its lock.
const tickJobsRescue = `UPDATE river_job j SET state = 'discarded', finalized_at = now(),
    errors = array_append(j.errors, jsonb_build_object('at', now(), 'attempt', j.attempt,
        'error', 'running past the rescue window: rescued, its run ticked again'))
WHERE j.id IN (
    SELECT id FROM river_job
    WHERE state = 'running' AND kind = 'ductor.tick' AND attempted_at < now() - $1 * interval '1 millisecond'
    ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
RETURNING (j.args->>'tenant_id')::uuid, (j.args->>'run_id')::uuid`

// TickJobsRescue finalizes up to limit tick jobs running for longer than
// window and returns their runs, to be ticked again.
func (s *Store) TickJobsRescue(ctx context.Context, window time.Duration, limit int) ([]RunKey, error) {
	rows, err := s.db.Query(ctx, tickJobsRescue, window.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("rescue tick jobs: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RunKey, error) {
		var k RunKey
		err := r.Scan(&k.TenantID, &k.ID)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("rescue tick jobs: %w", err)
	}
	return keys, nil
}

// stepJobsCompleteFinished completes step jobs that River shows running
// for longer than the rescue window although their attempt has its result
// (a batch: every step it carries): the worker recorded the result, but
// River's completion of the job was lost (its process died, or the
// database was down when River tried and River gave up). Nothing will run them again; River's rescuer would
// discard them an hour later, counted against their tenant's concurrency
// cap meanwhile.
const stepJobsCompleteFinished = `UPDATE river_job SET state = 'completed', finalized_at = now()
WHERE id IN (
    SELECT j.id FROM river_job j
    WHERE j.state = 'running' AND j.kind = 'ductor.step'
      AND j.attempted_at < now() - $1 * interval '1 millisecond'
      AND NOT EXISTS (SELECT 1 FROM ` + stepMembers + `
         WHERE NOT EXISTS (SELECT 1 FROM run_attempt a WHERE ` + memberAttempt + ` AND a.finished_at IS NOT NULL))
    ORDER BY j.id LIMIT $2 FOR UPDATE OF j SKIP LOCKED)`

// StepJobsCompleteFinished completes up to limit step jobs left running
// after their attempt finished (see stepJobsCompleteFinished) and returns
// how many it completed.
func (s *Store) StepJobsCompleteFinished(ctx context.Context, window time.Duration, limit int) (int, error) {
	tag, err := s.db.Exec(ctx, stepJobsCompleteFinished, window.Milliseconds(), limit)
	if err != nil {
		return 0, fmt.Errorf("complete finished step jobs: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// stepFlowJobs counts every tenant's step jobs of a concurrency pool
// queued or running, through river_job_ductor_flow_idx.
const stepFlowJobs = `SELECT (args->>'tenant_id')::uuid, count(*)::int FROM river_job
WHERE kind = 'ductor.step' AND state IN ` + stepFlowStates + ` AND args ? 'flow_key'
GROUP BY 1`

// stepFlowInFlight counts a tenant's step jobs of one concurrency pool's
// key queued or running, through river_job_ductor_flow_idx (whose
// predicate it repeats): available, running, and snoozed or retried
// (scheduled, retryable), which run again without passing admission.
const stepFlowInFlight = `SELECT count(*) FROM river_job j
WHERE j.kind = 'ductor.step' AND j.state IN ` + stepFlowStates + ` AND j.args ? 'flow_key'
  AND j.args->>'tenant_id' = $1::text AND j.args->>'flow_key' = $2
  AND NOT EXISTS (SELECT 1 FROM run_attempt a
    WHERE a.tenant_id = (j.args->>'tenant_id')::uuid AND a.run_id = (j.args->>'run_id')::uuid AND a.node = j.args->>'node'
      AND a.generation = (j.args->>'generation')::int AND a.attempt = (j.args->>'attempt')::int
      AND a.finished_at IS NOT NULL)`

// poolHolders lists the attempts of a tenant's concurrency pool key that
// hold its slots (those StepFlowInFlight counts): its step jobs queued or
// running whose attempt has no result yet, through
// river_job_ductor_flow_idx, and its unfinished bridge tasks, up to $3.
// River's tables are not in sqlc's schema, so it is written by hand.
const poolHolders = `SELECT h.run_id, h.node FROM (
  SELECT (j.args->>'run_id')::uuid AS run_id, j.args->>'node' AS node, j.id AS ord
  FROM river_job j
  WHERE j.kind = 'ductor.step' AND j.state IN ` + stepFlowStates + ` AND j.args ? 'flow_key'
    AND j.args->>'tenant_id' = $1::text AND j.args->>'flow_key' = $2
    AND NOT EXISTS (SELECT 1 FROM run_attempt a
      WHERE a.tenant_id = (j.args->>'tenant_id')::uuid AND a.run_id = (j.args->>'run_id')::uuid AND a.node = j.args->>'node'
        AND a.generation = (j.args->>'generation')::int AND a.attempt = (j.args->>'attempt')::int
        AND a.finished_at IS NOT NULL)
  UNION ALL
  SELECT b.run_id, b.node, 0 FROM bridge_task b WHERE b.tenant_id = $1::text::uuid AND b.flow_key = $2
) h
ORDER BY h.ord, h.run_id, h.node
LIMIT $3`

// stepFlowStates are the states of a step job that holds its pool's slot.
const stepFlowStates = `('available', 'running', 'scheduled', 'retryable')`

// pruneRiverJobs deletes the runs' River jobs that no worker holds, found
// by run id ($1, the runs' ids as text) through river_job_ductor_run_idx,
// whose predicate the query repeats (the tenant is checked on the rows
// found). An unfinished step batch is kept: it is found by its first
// step's run, and it carries other runs' steps too. River's tables are not
// in sqlc's schema, so this query is written by hand.
const pruneRiverJobs = `DELETE FROM river_job
WHERE kind IN ('ductor.tick', 'ductor.step') AND state <> 'running'
  AND (state IN ('completed', 'cancelled', 'discarded') OR NOT args ? 'more')
  AND args->>'run_id' = ANY($1::text[]) AND args->>'tenant_id' = $2::text`

// tickBacklog counts available tick jobs, up to $1. River's tables are
// not in sqlc's schema, so it is written by hand.
const tickBacklog = `SELECT count(*) FROM (SELECT 1 FROM river_job
WHERE queue = 'coordinator' AND state = 'available' LIMIT $1) AS waiting`

// TickBacklog counts the tick jobs waiting for a worker, at most max.
func (s *Store) TickBacklog(ctx context.Context, max int) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, tickBacklog, max).Scan(&n); err != nil {
		return 0, fmt.Errorf("count tick backlog: %w", err)
	}
	return n, nil
}

// UnservedJob is a task's step job that no worker took in time: its
// queue and its arguments.
type UnservedJob struct {
	Queue string
	Args  []byte
}

// stepJobsCancelUnserved cancels the task step jobs of queues still
// available past their schedule_to_start, by the database's clock
// (created_at is River's insert time, from the database). SKIP LOCKED
// leaves a job a worker is fetching to the worker. River's tables are not
// in sqlc's schema, so this query is written by hand.
const stepJobsCancelUnserved = `WITH late AS (
    SELECT id FROM river_job
    WHERE state = 'available' AND kind = 'ductor.step' AND queue = ANY($1::text[])
      AND args->>'type' = 'task' AND (args->>'schedule_to_start_ms')::bigint > 0
      AND created_at + (args->>'schedule_to_start_ms')::bigint * interval '1 millisecond' <= ductor_now()
    ORDER BY id
    LIMIT $2
    FOR UPDATE SKIP LOCKED)
UPDATE river_job j SET state = 'cancelled', finalized_at = now()
FROM late WHERE j.id = late.id
RETURNING j.queue, j.args`

// StepJobsCancelUnserved cancels up to limit task step jobs of queues
// that waited past their schedule_to_start without a worker, and returns
// them for their attempts to be failed.
func (s *Store) StepJobsCancelUnserved(ctx context.Context, queues []string, limit int) ([]UnservedJob, error) {
	rows, err := s.db.Query(ctx, stepJobsCancelUnserved, queues, limit)
	if err != nil {
		return nil, fmt.Errorf("cancel unserved step jobs: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[UnservedJob])
	if err != nil {
		return nil, fmt.Errorf("cancel unserved step jobs: %w", err)
	}
	return jobs, nil
}

// queueDepthQuery counts a tier's sparse lane with the tier's queue ($1
// matches the lane's suffix), every step of a step batch, and bridge tasks
// as the queue "bridge": waiting until a worker claims one, then running.
const queueDepthQuery = `SELECT regexp_replace(queue, $1, ''), coalesce(args->>'tenant_id', ''), state::text,
       sum(1 + coalesce(jsonb_array_length(args->'more'), 0)),
       coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
FROM river_job
WHERE kind = 'ductor.step' AND state IN ('available', 'running')
GROUP BY 1, 2, 3
UNION ALL
SELECT 'bridge', tenant_id::text, CASE WHEN token IS NULL THEN 'available' ELSE 'running' END, count(*),
       coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
FROM bridge_task
GROUP BY 1, 2, 3`

// QueueDepth is the steps of one tenant (its id as text, empty for jobs
// without one) on one queue in one state, available or running, and how
// long the oldest of them has waited, in seconds.
type QueueDepth struct {
	Queue, Tenant, State string
	Steps, Age           float64
}

// QueueDepths counts every queue's steps available and running, by tenant,
// a tier's sparse lane (the queues whose name ends in laneSuffix) with its
// tier's queue, and bridge tasks as the queue "bridge".
func (s *Store) QueueDepths(ctx context.Context, laneSuffix string) ([]QueueDepth, error) {
	rows, err := s.db.Query(ctx, queueDepthQuery, regexp.QuoteMeta(laneSuffix)+"$")
	if err != nil {
		return nil, fmt.Errorf("count queue depths: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[QueueDepth])
	if err != nil {
		return nil, fmt.Errorf("count queue depths: %w", err)
	}
	return out, nil
}

// jobsLeft describes Ductor's River jobs that have not finished.
const jobsLeft = `SELECT format('%s job %s of run %s still %s', kind, id, args->>'run_id', state)
FROM river_job WHERE kind LIKE 'ductor.%' AND state NOT IN ('completed', 'cancelled', 'discarded')`

// JobsLeft describes each of Ductor's River jobs still waiting or
// running, for the concurrency checker: once every run has ended, a job
// left behind is work lost or about to be done twice.
func (s *Store) JobsLeft(ctx context.Context) ([]string, error) {
	rows, err := s.db.Query(ctx, jobsLeft)
	if err != nil {
		return nil, fmt.Errorf("list unfinished jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list unfinished jobs: %w", err)
	}
	return out, nil
}

// RunJobsDump lists the River jobs of a run ($1, its id), with what
// River recorded of their attempts, for a failure message.
const RunJobsDump = `SELECT id, kind, state, attempt, attempted_at, finalized_at, errors, metadata FROM river_job WHERE args->>'run_id' = $1::text ORDER BY id`

// runsForgotten finds runs that hold an input no tick has drained (a
// step result, signal, control or fired timer in run_input) for longer
// than the window, by the database's clock, and that no tick job will
// tick: none is available, scheduled, running or waiting to be retried.
// Every delivery wakes its run in the transaction that stores it, so
// this finds only what a lost write left behind: after a failover to an
// asynchronous standby, the standby can hold a delivery without the
// tick job that would have drained it. A run that flow control holds
// keeps its inputs until it is let go, and is left alone. The partial
// index holds only undrained inputs, so the look is cheap while nothing
// is forgotten.
const runsForgotten = `SELECT DISTINCT i.tenant_id, i.run_id FROM run_input i
JOIN run r ON r.tenant_id = i.tenant_id AND r.id = i.run_id
WHERE i.consumed_at IS NULL AND i.created_at < now() - $1 * interval '1 millisecond'
  AND r.status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
  AND NOT EXISTS (SELECT 1 FROM flow_hold h WHERE h.tenant_id = i.tenant_id AND h.run_id = i.run_id)
  AND NOT EXISTS (SELECT 1 FROM river_job j
      WHERE j.kind = 'ductor.tick' AND j.state IN ('available', 'scheduled', 'running', 'retryable', 'pending')
        AND j.args->>'run_id' = i.run_id::text)
LIMIT $2`

// RunsForgotten returns up to limit runs with an input older than window
// that no tick job will drain (see runsForgotten), to be ticked again.
func (s *Store) RunsForgotten(ctx context.Context, window time.Duration, limit int) ([]RunKey, error) {
	rows, err := s.db.Query(ctx, runsForgotten, window.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("find forgotten runs: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RunKey, error) {
		var k RunKey
		err := r.Scan(&k.TenantID, &k.ID)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("find forgotten runs: %w", err)
	}
	return keys, nil
}
