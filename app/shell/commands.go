package shell

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
)

// commandBatch performs a run's commands in the tick's transaction. Step
// jobs are collected in jobs, for the tick to enqueue with every other
// run's.
type commandBatch struct {
	c    *Writer
	s    *store.Store
	tx   pgx.Tx
	run  store.Run
	now  time.Time // the database's clock for this tick
	cmds []engine.Command
	// successor is the ContinueAsNew successor this tick created;
	// cannotContinue reports a CAN with no published version to go to.
	successor      string
	cannotContinue bool
	jobs           []river.InsertManyParams
}

func (b *commandBatch) add(cmds []engine.Command) { b.cmds = append(b.cmds, cmds...) }

func (b *commandBatch) perform(ctx context.Context) error {
	for _, cmd := range b.cmds {
		switch v := cmd.(type) {
		case engine.DispatchAttempt:
			p, err := b.stepJob(ctx, v)
			if err != nil {
				return err
			}
			if p != nil {
				b.jobs = append(b.jobs, *p)
			}
		case engine.ScheduleTimer:
			if err := b.s.TimerSchedule(ctx, store.Timer{
				TenantID: b.run.TenantID, RunID: b.run.ID, TimerID: v.TimerID, Node: v.Node, FireAt: v.FireAt,
			}); err != nil {
				return err
			}
		case engine.CancelTimer:
			if err := b.s.TimerCancel(ctx, b.run.TenantID, b.run.ID, v.TimerID); err != nil {
				return err
			}
		case engine.OpenApproval, engine.OpenCase, engine.CloseInteraction:
			if err := b.interaction(ctx, v); err != nil {
				return err
			}
		case engine.CancelAttempt:
			if err := b.cancelAttempt(ctx, v); err != nil {
				return err
			}
		case engine.StartChildRun:
			if err := b.startChild(ctx, v); err != nil {
				return err
			}
		case engine.NotifyParent:
			if err := b.notifyParent(ctx, v); err != nil {
				return err
			}
		case engine.CancelChildRun:
			if err := b.cancelChild(ctx, v); err != nil {
				return err
			}
		case engine.StartSuccessor:
			if err := b.startSuccessor(ctx, v); err != nil {
				return err
			}
		case engine.Warn:
			b.c.metrics.warnings.WithLabelValues(warningLabel(v.Code)).Inc()
			b.c.log.WarnContext(ctx, "run warning", "run_id", b.run.ID, "tenant_id", b.run.TenantID, "code", v.Code, "message", v.Message)
		default:
			return fmt.Errorf("run %s: command %T is not supported by this version of Ductor", b.run.ID, cmd)
		}
	}
	return nil
}

// stepJob turns a dispatch into a River job on the tenant's tier queue. A
// retry waiting out its backoff is stored instead and enqueued by the sweep
// when due (River's own scheduled jobs are promoted only every few seconds).
func (b *commandBatch) stepJob(ctx context.Context, d engine.DispatchAttempt) (*river.InsertManyParams, error) {
	tenant, err := b.c.tenants.get(ctx, b.s, b.run.TenantID)
	if err != nil {
		return nil, err
	}
	args := StepArgs{
		TenantID: b.run.TenantID, RunID: b.run.ID, Node: d.Node, Ref: d.Ref, Type: d.Type,
		Generation: d.Generation, Attempt: d.Attempt, IdempotencyKey: d.IdempotencyKey,
		Params: d.Params, TimeoutMS: d.TimeoutMS, FlowKey: d.FlowKey, FlowLimit: d.FlowLimit, Trace: b.run.State.Trace,
	}
	if d.Type == string(definition.TypeTask) {
		args.ScheduleToStartMS = scheduleToStart(d.Params, tenant).Milliseconds()
	}
	queue := StepQueue(tenant.QueueClass)
	if d.RunAt.Sub(b.now) <= time.Millisecond {
		return &river.InsertManyParams{Args: args, InsertOpts: stepOpts(queue)}, nil
	}
	return nil, delayStep(ctx, b.s, args, queue, d.RunAt)
}

// DefaultScheduleToStart is how long a task waits for a worker to claim
// it when neither its step nor its tenant says.
const DefaultScheduleToStart = 5 * time.Minute

// scheduleToStart is the task's schedule_to_start: its step's, else its
// tenant's, else the default.
func scheduleToStart(params map[string]any, tenant store.Tenant) time.Duration {
	if ms, err := jsonvalue.Normalize(params["schedule_to_start_ms"]); err == nil {
		if n, ok := ms.(int64); ok && n > 0 {
			return time.Duration(n) * time.Millisecond
		}
	}
	if tenant.ScheduleToStart > 0 {
		return tenant.ScheduleToStart
	}
	return DefaultScheduleToStart
}

// delayStep stores a step job to be enqueued by the sweep at fireAt.
func delayStep(ctx context.Context, s *store.Store, args StepArgs, queue string, fireAt time.Time) error {
	raw, err := jsonvalue.Marshal(args)
	if err != nil {
		return fmt.Errorf("encode step job: %w", err)
	}
	return s.DispatchDelay(ctx, store.Dispatch{
		TenantID: args.TenantID, RunID: args.RunID, Node: args.Node, Generation: args.Generation,
		Attempt: args.Attempt, FireAt: fireAt, Queue: queue, Args: raw,
	})
}

// stepOpts are a step job's insert options: one River attempt, since
// Ductor decides retries itself.
func stepOpts(queue string) *river.InsertOpts {
	return &river.InsertOpts{Queue: queue, MaxAttempts: 1}
}

// insertSteps enqueues step jobs in tx and wakes each queue they went to,
// with the notification sent among w's writes when w is given.
func (c *Writer) insertSteps(ctx context.Context, tx pgx.Tx, jobs []river.InsertManyParams, w *store.RunWrites) error {
	if len(jobs) == 0 {
		return nil
	}
	// Admission first, so that the steps' concurrency pools and a
	// tenant's limits hold for the steps its own workers take through the
	// bridge too. A step its pool holds back takes nothing of its
	// tenant's rate.
	jobs, err := c.admitFlow(ctx, store.New(tx), jobs)
	if err != nil || len(jobs) == 0 {
		return err
	}
	jobs, err = c.admit(ctx, store.New(tx), jobs)
	if err != nil || len(jobs) == 0 {
		return err
	}
	jobs, err = c.routeRemote(ctx, tx, jobs)
	if err != nil || len(jobs) == 0 {
		return err
	}
	jobs, err = c.runLocal(ctx, tx, jobs)
	if err != nil || len(jobs) == 0 {
		return err
	}
	if err := c.fairTag(ctx, jobs); err != nil {
		return err
	}
	jobs = packSteps(jobs, c.stepBatchMax())
	if _, err := c.river().InsertManyTx(ctx, tx, jobs); err != nil {
		return fmt.Errorf("enqueue %d steps: %w", len(jobs), err)
	}
	queues := map[string]bool{}
	for _, j := range jobs {
		queues[j.InsertOpts.Queue] = true
	}
	for q := range queues {
		if w != nil {
			w.After(notifySQL, q)
		} else if err := Notify(ctx, tx, q); err != nil {
			return err
		}
	}
	return nil
}

// cancelAttempt drops the attempt's dispatch if it still waits for its
// backoff, gives the attempt its result (store.AttemptCancel), so that no
// worker starts it from then on and its row is closed whatever becomes of
// its worker, and tells the steps processes to end it if they run it
// (stepCancels): the attempt's context ends as soon as the notification
// arrives, before an http step sends its request. The attempt's own job,
// if it has one, is cancelled through River too: a job not fetched yet
// never runs. (A job fetched after this tick read it as waiting is
// cancelled all the same: River cancels a job whatever its state, under
// its row lock.) A result that still arrives is stale and the engine
// discards it. An attempt in a step batch shares its job, which River
// must not cancel (every step of it would end).
func (b *commandBatch) cancelAttempt(ctx context.Context, a engine.CancelAttempt) error {
	err := b.s.BridgeTaskDeleteAttempt(ctx, b.run.TenantID, b.run.ID, a.Node, a.Generation, a.Attempt)
	if err != nil {
		return err
	}
	if err := b.s.DispatchCancel(ctx, b.run.TenantID, b.run.ID, a.Node, a.Generation, a.Attempt); err != nil {
		return err
	}
	jobs, err := b.s.StepJobsLive(ctx, b.run.TenantID, b.run.ID, a.Node, a.Generation, a.Attempt)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Batch {
			continue
		}
		if _, err := b.c.river().JobCancelTx(ctx, b.tx, j.ID); err != nil {
			return fmt.Errorf("cancel step job %d: %w", j.ID, err)
		}
	}
	key := store.AttemptKey{Run: store.RunKey{TenantID: b.run.TenantID, ID: b.run.ID}, Node: a.Node, Generation: a.Generation, Attempt: a.Attempt}
	if err := b.s.AttemptCancel(ctx, key, &engine.Error{Code: engine.CodeCancelled, Message: "the step was cancelled"}); err != nil {
		return err
	}
	return notifyCancel(ctx, b.tx, key)
}
