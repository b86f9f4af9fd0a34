package shell

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/store"
)

// maxYield bounds how long bulk work holds back for one spell of urgent
// work, so that a stream of idle tenants cannot stall a busy one.
const maxYield = 20 * time.Millisecond

// yieldGate gives the few statements of an idle tenant a quiet machine.
//
// Fair tags put an idle tenant's step at the head of River's queue, but
// the statements on its way (its trigger's transaction, its step's start)
// still share the CPU with a flooding tenant's grouped work, and on a
// saturated machine each takes several times as long as on an idle one.
// So while urgent work runs in this process, the process's bulk work
// waits before its next statement: for the urgent work to finish, or for
// max from the moment the spell began, whichever comes first. Statements
// already sent run on.
//
// Urgent work is a trigger of a tenant not known to be busy, and the
// start of a sparse step (StepArgs.Sparse: dispatched with nothing of its
// tenant queued while other tenants had a backlog); both hold every kind
// of bulk work (grouped attempt starts, group ticks, tick jobs; a tick
// that already holds its runs yields once more before writing). While a
// sparse step waits to be fetched from its tier's sparse lane (SparseLane,
// whose workers a flood cannot occupy) and started, the ticks wait; the
// grouped starts go on, since a sparse start that finds the express path
// full goes through them.
//
// This is the new-flow priority of fq_codel, or a CPU scheduler's
// preference for a task that wakes after sleeping, applied to database
// statements: a tenant that had nothing queued is served ahead of the
// backlog once, then takes its fair turn. When only one tenant is busy
// nothing is urgent (its steps have no one's backlog to go ahead of) and
// nothing waits. The gate is per process: urgent work in one replica does
// not hold back another's.
type yieldGate struct {
	max time.Duration

	mu      sync.Mutex
	urgent  int // urgent work running, holding all bulk work
	waiting int // sparse steps waiting to start, holding ticks
	since   time.Time
	changed chan struct{} // closed and replaced whenever a count falls
	steps   map[store.AttemptKey]*time.Timer

	yielded atomic.Int64 // nanoseconds bulk work spent waiting
}

func newYieldGate(max time.Duration) *yieldGate {
	return &yieldGate{max: max, changed: make(chan struct{}), steps: map[store.AttemptKey]*time.Timer{}}
}

// enter begins a piece of urgent work; leave ends it.
func (g *yieldGate) enter() {
	g.mu.Lock()
	g.add(&g.urgent)
	g.mu.Unlock()
}

func (g *yieldGate) leave() {
	g.mu.Lock()
	g.remove(&g.urgent)
	g.mu.Unlock()
}

// await holds ticks back while the sparse step of key waits to be fetched
// and started; started ends the wait, as does max.
func (g *yieldGate) await(key store.AttemptKey) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.steps[key]; ok {
		return
	}
	g.add(&g.waiting)
	g.steps[key] = time.AfterFunc(g.max, func() { g.started(key) })
}

func (g *yieldGate) started(key store.AttemptKey) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.steps[key]; ok {
		t.Stop()
		delete(g.steps, key)
		g.remove(&g.waiting)
	}
}

func (g *yieldGate) add(n *int) {
	if g.urgent+g.waiting == 0 {
		g.since = time.Now()
	}
	*n++
}

func (g *yieldGate) remove(n *int) {
	*n--
	close(g.changed)
	g.changed = make(chan struct{})
}

// yield waits while urgent work runs (for a tick, also while a sparse
// step waits to start), at most until max after the spell began, or
// until ctx ends.
func (g *yieldGate) yield(ctx context.Context, tick bool) {
	var timer *time.Timer
	var began time.Time
	for {
		g.mu.Lock()
		if g.urgent == 0 && (!tick || g.waiting == 0) {
			g.mu.Unlock()
			break
		}
		changed, wait := g.changed, time.Until(g.since.Add(g.max))
		g.mu.Unlock()
		if wait <= 0 {
			break
		}
		if timer == nil {
			began = time.Now()
			timer = time.NewTimer(wait)
			defer timer.Stop()
		}
		select {
		case <-changed:
			continue
		case <-timer.C:
		case <-ctx.Done():
		}
		break
	}
	if timer != nil {
		g.yielded.Add(int64(time.Since(began)))
	}
}

type bulkKey struct{}

// asBulk marks ctx as bulk work's: such work also yields inside its
// transaction, between deciding and writing (yieldBulk).
func asBulk(ctx context.Context) context.Context { return context.WithValue(ctx, bulkKey{}, true) }

// yieldBulk yields as a tick does if ctx is bulk work's; urgent work that
// ticks inline (a trigger's) goes straight on.
func (g *yieldGate) yieldBulk(ctx context.Context) {
	if ctx.Value(bulkKey{}) != nil {
		g.yield(ctx, true)
	}
}

// busyTenants remembers the tenants whose last dispatch in this process
// was not a single sparse step: they had work queued, queued several
// steps, or had no backlog of others to go ahead of. A trigger of a tenant
// not known to be busy is urgent. It is a hint: a tenant whose backlog
// drained is found sparse again at its next dispatch behind another's.
type busyTenants struct{ m sync.Map }

func (b *busyTenants) note(tenantID uuid.UUID, busy bool) {
	if busy {
		b.m.Store(tenantID, true)
	} else {
		b.m.Delete(tenantID)
	}
}

func (b *busyTenants) busy(tenantID uuid.UUID) bool {
	_, ok := b.m.Load(tenantID)
	return ok
}
