package shell

import (
	"context"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/flowcontrol"
	"github.com/ductor/ductor/app/store"
)

// admitFlow applies the steps' concurrency pools to a batch of step jobs
// before the tenants' own limits: a job whose pool's key has as many
// attempts in flight as the job's limit waits in run_dispatch until the
// sweep sees a slot of the key free and wakes it (wakePoolWaits), and so
// does a new job while others wait for its key, so that a pool's
// attempts start in the order they were held. The keys are locked (after one another, in the order of
// their locks) and their attempts in flight counted after the locks:
// step jobs queued or running and bridge tasks unfinished, across every
// run and definition of the tenant. An attempt leaves its pool when its
// job or task finishes, however it ends, so nothing has to release it.
func (c *Writer) admitFlow(ctx context.Context, s *store.Store, jobs []river.InsertManyParams) ([]river.InsertManyParams, error) {
	type poolKey struct {
		tenant uuid.UUID
		key    string
	}
	byKey := map[poolKey][]int{}
	var keys []poolKey
	for i, j := range jobs {
		a := j.Args.(StepArgs)
		if a.FlowKey == "" {
			continue
		}
		k := poolKey{a.TenantID, a.FlowKey}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	if len(keys) == 0 {
		return jobs, nil
	}
	locks := make([]store.FlowLockKey, len(keys))
	for i, k := range keys {
		locks[i] = store.FlowLockKey{TenantID: k.tenant, FlowKey: store.FlowKey{Pool: flowcontrol.StepPool, Key: k.key}}
	}
	if err := s.FlowLockAll(ctx, locks); err != nil {
		return nil, err
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].key < keys[j].key })
	held := map[int]bool{}
	for _, k := range keys {
		inFlight, err := s.StepFlowInFlight(ctx, k.tenant, k.key)
		if err != nil {
			return nil, err
		}
		waiters, err := s.PoolHasWaiters(ctx, store.PoolKey{TenantID: k.tenant, Key: k.key})
		if err != nil {
			return nil, err
		}
		offered := make([]flowcontrol.Attempt, len(byKey[k]))
		for n, i := range byKey[k] {
			a := jobs[i].Args.(StepArgs)
			offered[n] = flowcontrol.Attempt{Limit: a.FlowLimit, Waited: a.PoolWait}
		}
		for n, start := range flowcontrol.AdmitAttempts(inFlight, waiters, offered) {
			i := byKey[k][n]
			if !start {
				held[i] = true
				continue
			}
			if a := jobs[i].Args.(StepArgs); a.PoolWait {
				a.PoolWait, a.HeldUS = false, 0
				jobs[i].Args = a
			}
		}
	}
	return c.holdSteps(ctx, s, jobs, held)
}

// poolWaitRecheck is when a held attempt is offered again if no wake has
// come for it first: a backstop, since the sweep wakes a key's waiters as
// soon as it sees a slot free.
const poolWaitRecheck = time.Hour

// holdSteps stores the held jobs, each in its place in its key's line,
// for the sweep to wake, and returns the others.
func (c *Writer) holdSteps(ctx context.Context, s *store.Store, jobs []river.InsertManyParams, held map[int]bool) ([]river.InsertManyParams, error) {
	if len(held) == 0 {
		return jobs, nil
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	out := jobs[:0:0]
	for i, j := range jobs {
		if !held[i] {
			out = append(out, j)
			continue
		}
		c.flowMetrics.decided(ctx, flowcontrol.KindStep, "delayed")
		a := j.Args.(StepArgs)
		a.PoolWait = true
		if a.HeldUS == 0 { // keeps its place when it is held again
			a.HeldUS = now.UnixMicro()
		}
		if err := delayStep(ctx, s, a, j.InsertOpts.Queue, now.Add(poolWaitRecheck)); err != nil {
			return nil, err
		}
	}
	return out, nil
}
