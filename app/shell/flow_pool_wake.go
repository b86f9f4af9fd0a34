package shell

import (
	"context"
	"sync"

	"github.com/ductor/ductor/app/flowcontrol"
	"github.com/ductor/ductor/app/store"
)

// A sweep wakes the waiters of at most poolWakeKeys pool keys, and at most
// poolWakeHeads waiters of each, so that one tenant's thousands of blocked
// keys cost every pass a bounded amount: the next pass goes on from where
// this one stopped (poolCursor).
const (
	poolWakeKeys  = 100
	poolWakeHeads = 256
)

// poolCursor is the last pool key a sweep of this process looked at.
type poolCursor struct {
	mu    sync.Mutex
	after store.PoolKey
}

func (p *poolCursor) get() store.PoolKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.after
}

func (p *poolCursor) set(k store.PoolKey) {
	p.mu.Lock()
	p.after = k
	p.mu.Unlock()
}

// wakePoolWaits makes due, for each pool key with attempts waiting, as
// many of its first waiters (in the order they were held) as the key has
// slots free, for enqueueDue to offer them to their pool in the same
// transaction. A waiter fits while fewer attempts than its own limit hold
// the key, counting those woken and not yet offered. Nothing waits on a
// timer: a held attempt costs nothing until a slot frees. Two processes
// waking the same slot is harmless, since admission (admitFlow) decides
// under the key's lock and holds again what does not fit.
func (c *Sweeper) wakePoolWaits(ctx context.Context, s *store.Store) (int, error) {
	keys, err := s.PoolWaitKeys(ctx, c.poolCursor.get(), poolWakeKeys)
	if err != nil {
		return 0, err
	}
	next := store.PoolKey{}
	if len(keys) == poolWakeKeys {
		next = keys[len(keys)-1]
	}
	c.poolCursor.set(next)
	woken := 0
	for _, k := range keys {
		inFlight, err := s.StepFlowInFlight(ctx, k.TenantID, k.Key)
		if err != nil {
			return 0, err
		}
		heads, err := s.PoolWaitHeads(ctx, k, poolWakeHeads)
		if err != nil {
			return 0, err
		}
		waiters := make([]flowcontrol.Waiter, len(heads))
		for i, w := range heads {
			waiters[i] = flowcontrol.Waiter{Limit: w.Limit, Woken: w.Woken}
		}
		var wake []store.PoolWaiter
		for i, ok := range flowcontrol.Wake(inFlight, waiters) {
			if ok {
				wake = append(wake, heads[i])
			}
		}
		if err := s.PoolWake(ctx, k.TenantID, wake); err != nil {
			return 0, err
		}
		woken += len(wake)
	}
	return woken, nil
}
