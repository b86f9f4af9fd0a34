package runs

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/shell"
)

// How often a waiting long poll looks for tasks by itself: rarely while a
// listener relays notifications, often when none runs in this process.
const (
	recheckListening = 2 * time.Second
	recheckAlone     = 200 * time.Millisecond
)

// waiters are the long polls waiting for a tenant's tasks.
type waiters struct {
	mu        sync.Mutex
	byTenant  map[uuid.UUID]map[chan struct{}]struct{}
	listening atomic.Bool
}

// subscribe returns a channel that receives when the tenant may have new
// tasks, and the function that unsubscribes it.
func (w *waiters) subscribe(tenantID uuid.UUID) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byTenant == nil {
		w.byTenant = map[uuid.UUID]map[chan struct{}]struct{}{}
	}
	if w.byTenant[tenantID] == nil {
		w.byTenant[tenantID] = map[chan struct{}]struct{}{}
	}
	w.byTenant[tenantID][ch] = struct{}{}
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.byTenant[tenantID], ch)
		if len(w.byTenant[tenantID]) == 0 {
			delete(w.byTenant, tenantID)
		}
	}
}

// wake tells every poll waiting for the tenant, without blocking.
func (w *waiters) wake(tenantID uuid.UUID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.byTenant[tenantID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// wakeAll tells every waiting poll, of every tenant.
func (w *waiters) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, chans := range w.byTenant {
		for ch := range chans {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// TaskPollsWaiting is how many of this process's long polls wait for the
// tenant's tasks.
func (c *Tasks) Waiting(tenantID uuid.UUID) int {
	w := &c.waiters
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byTenant[tenantID])
}

func (w *waiters) recheck() time.Duration {
	if w.listening.Load() {
		return recheckListening
	}
	return recheckAlone
}

// ListenTasks relays the notifications of new bridge tasks to this
// process's long polls until ctx ends, holding one connection of the pool
// and reconnecting after a failure. Processes serving the API run it;
// without it, polls look for tasks every 200 ms.
func (c *Tasks) Listen(ctx context.Context) {
	for ctx.Err() == nil {
		err := c.listenTasks(ctx)
		c.waiters.listening.Store(false)
		if ctx.Err() != nil {
			return
		}
		c.log.WarnContext(ctx, "task notifications", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (c *Tasks) listenTasks(ctx context.Context) error {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire listener: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+shell.TaskChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer func() {
		// A connection interrupted mid-wait is closed by pgx; a healthy one
		// goes back to the pool without the subscription.
		if !conn.Conn().IsClosed() {
			_, _ = conn.Exec(context.WithoutCancel(ctx), "UNLISTEN "+shell.TaskChannel)
		}
	}()
	c.waiters.listening.Store(true)
	// Notifications sent while no listener listened are lost: every
	// waiting poll looks again now.
	c.waiters.wakeAll()
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		if id, err := uuid.Parse(n.Payload); err == nil {
			c.waiters.wake(id)
		}
	}
}
