package shell

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
)

const (
	// taskKeep is how long an expired claim is kept, so a late worker
	// hears 409 rather than 404.
	taskKeep = time.Minute
	// DefaultQueue is a task step's queue when it names none: the only
	// one local step workers serve.
	DefaultQueue = "default"
)

// remote reports whether a step job is a task for bridge workers.
func (c *Writer) remote(a StepArgs) bool {
	if a.Type != string(definition.TypeTask) {
		return false
	}
	if q, _ := a.Params["queue"].(string); q != "" && q != DefaultQueue {
		return true
	}
	local := c.LocalHandlers
	handler, _ := a.Params["handler"].(string)
	return local != nil && handler != "" && !local(handler)
}

// routeRemote stores the bridge tasks among jobs and returns the rest.
// Each tenant with new tasks is notified when tx commits.
func (c *Writer) routeRemote(ctx context.Context, tx pgx.Tx, jobs []river.InsertManyParams) ([]river.InsertManyParams, error) {
	local := jobs[:0:0]
	var tasks []store.BridgeTask
	for _, j := range jobs {
		a := j.Args.(StepArgs)
		if !c.remote(a) {
			local = append(local, j)
			continue
		}
		t, err := bridgeTask(a)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	if len(tasks) == 0 {
		return local, nil
	}
	if err := store.New(tx).BridgeTasksInsert(ctx, tasks); err != nil {
		return nil, err
	}
	return local, notifyTasks(ctx, tx, tasks)
}

func bridgeTask(a StepArgs) (store.BridgeTask, error) {
	input, err := jsonvalue.Marshal(a.Params["input"])
	if err != nil {
		return store.BridgeTask{}, fmt.Errorf("encode input of %s: %w", a.Node, err)
	}
	queue, _ := a.Params["queue"].(string)
	if queue == "" {
		queue = DefaultQueue
	}
	handler, _ := a.Params["handler"].(string)
	return store.BridgeTask{
		TenantID: a.TenantID, RunID: a.RunID, Node: a.Node, Generation: a.Generation, Attempt: a.Attempt,
		Queue: queue, Handler: handler, Input: input, IdempotencyKey: a.IdempotencyKey,
		Timeout:         time.Duration(a.TimeoutMS) * time.Millisecond,
		ScheduleToStart: time.Duration(a.ScheduleToStartMS) * time.Millisecond,
		FlowKey:         a.FlowKey,
		Trace:           a.Trace,
		Secrets:         stringList(a.Params["secrets"]),
	}, nil
}

// TaskChannel is the notification channel of new bridge tasks; the
// payload is the tenant's id.
const TaskChannel = "ductor_tasks"

func notifyTasks(ctx context.Context, tx pgx.Tx, tasks []store.BridgeTask) error {
	seen := map[uuid.UUID]bool{}
	for _, t := range tasks {
		if seen[t.TenantID] {
			continue
		}
		seen[t.TenantID] = true
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, TaskChannel, t.TenantID.String()); err != nil {
			return fmt.Errorf("notify bridge tasks: %w", err)
		}
	}
	return nil
}

// stringList reads a list of strings from params (a task step's secrets).
func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
