package store

import (
	"context"
	"fmt"
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
