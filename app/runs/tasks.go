package runs

import (
	"context"
	"crypto/subtle"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// TaskPoll is what a bridge worker asks for.
type TaskPoll struct {
	Queue    string
	Handlers []string
	WorkerID string
	Max      int
	// Wait is how long to wait for a task when none is waiting.
	Wait time.Duration
}

// TaskPoll claims up to p.Max of the tenant's waiting tasks. When there
// are none it waits up to p.Wait for some, woken by the notification of
// new tasks (or a periodic recheck), and returns early, empty, when ctx
// ends.
func (c *Tasks) Poll(ctx context.Context, tenantID uuid.UUID, p TaskPoll) (tasks []store.BridgeTask, err error) {
	defer func() { c.obs.Polled(tasks, err) }()
	tasks, err = c.taskClaim(ctx, tenantID, p)
	if err != nil || len(tasks) > 0 || p.Wait <= 0 {
		return tasks, err
	}
	wake, stop := c.waiters.subscribe(tenantID)
	defer stop()
	deadline := time.NewTimer(p.Wait)
	defer deadline.Stop()
	recheck := time.NewTicker(c.waiters.recheck())
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-deadline.C:
			return nil, nil
		case <-wake:
		case <-recheck.C:
		}
		if tasks, err := c.taskClaim(ctx, tenantID, p); err != nil || len(tasks) > 0 {
			return tasks, err
		}
	}
}

func (c *Tasks) taskClaim(ctx context.Context, tenantID uuid.UUID, p TaskPoll) ([]store.BridgeTask, error) {
	var tasks []store.BridgeTask
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		var err error
		tasks, err = store.New(tx).BridgeTasksClaim(ctx, store.BridgeTaskClaim{
			TenantID: tenantID, Queue: p.Queue, Handlers: p.Handlers, WorkerID: p.WorkerID, Max: p.Max,
		}, c.lease)
		return err
	})
	return tasks, err
}

// TaskComplete delivers a bridge task's output as its attempt's result.
func (c *Tasks) Complete(ctx context.Context, tenantID, id uuid.UUID, token string, output any) error {
	return c.taskResult(ctx, tenantID, id, token, output, nil)
}

// TaskFail delivers a bridge task's failure as its attempt's result; a
// retryable one is retried by the step's policy.
func (c *Tasks) Fail(ctx context.Context, tenantID, id uuid.UUID, token string, stepErr *engine.Error) error {
	return c.taskResult(ctx, tenantID, id, token, nil, stepErr)
}

// taskResult checks the token and the lease, deletes the task and, in the
// same transaction, delivers the result exactly as a local step worker
// would: a duplicate is dropped by the input's dedup key.
func (c *Tasks) taskResult(ctx context.Context, tenantID, id uuid.UUID, token string, output any, stepErr *engine.Error) error {
	var task store.BridgeTask
	err := store.WithTx(context.WithoutCancel(ctx), c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		t, err := c.taskHeld(ctx, s, tenantID, id, token)
		if err != nil {
			return err
		}
		if err := s.BridgeTaskDelete(ctx, tenantID, id); err != nil {
			return err
		}
		task = t
		res := engine.StepResult{Node: t.Node, Generation: t.Generation, Attempt: t.Attempt, Output: output, Error: stepErr}
		return c.t.DeliverAndTick(ctx, tx, tenantID, t.RunID, res)
	})
	c.obs.TaskAnswered(ctx, task, stepErr, err)
	return err
}

// TaskHeartbeat extends a claimed task's lease and returns the new one.
// A task whose attempt is no longer leased (reported lost, cancelled or
// ended) is a conflict: its worker should stop.
func (c *Tasks) Heartbeat(ctx context.Context, tenantID, id uuid.UUID, token string) (until time.Time, err error) {
	defer func() { c.obs.Heartbeat(err) }()
	err = store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		t, err := c.taskHeld(ctx, s, tenantID, id, token)
		if err != nil {
			return err
		}
		until, err = s.BridgeTaskExtend(ctx, t, c.lease)
		return err
	})
	return until, err
}

// taskHeld locks the tenant's task and checks that token holds its live
// claim: a wrong or expired token is store.ErrTaskLeaseLost.
func (c *Tasks) taskHeld(ctx context.Context, s *store.Store, tenantID, id uuid.UUID, token string) (store.BridgeTask, error) {
	t, live, err := s.BridgeTaskLock(ctx, tenantID, id)
	if err != nil {
		return store.BridgeTask{}, err
	}
	if !live || t.Token == "" || subtle.ConstantTimeCompare([]byte(t.Token), []byte(token)) != 1 {
		return store.BridgeTask{}, store.ErrTaskLeaseLost
	}
	return t, nil
}
