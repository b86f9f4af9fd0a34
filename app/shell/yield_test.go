package shell

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testwait"
)

// yielded runs g.yield on its own goroutine and returns a channel closed
// when it returns.
func yielded(g *yieldGate, tick bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		g.yield(context.Background(), tick)
		close(done)
	}()
	return done
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: yield still waiting after 10 s", what)
	}
}

func TestYieldGateHoldsBulkWorkUntilUrgentWorkLeaves(t *testing.T) {
	t.Parallel()
	g := newYieldGate(time.Hour)
	waitClosed(t, yielded(g, true), "nothing urgent")

	g.enter()
	g.enter()
	starts, ticks := yielded(g, false), yielded(g, true)
	g.leave()
	select {
	case <-starts:
		t.Fatal("bulk work went on while urgent work was still running")
	case <-ticks:
		t.Fatal("a tick went on while urgent work was still running")
	default:
	}
	g.leave()
	waitClosed(t, starts, "grouped start after urgent work left")
	waitClosed(t, ticks, "tick after urgent work left")
}

func TestYieldGateSparseStepHoldsOnlyTicks(t *testing.T) {
	t.Parallel()
	g := newYieldGate(time.Hour)
	key := store.AttemptKey{Run: store.RunKey{TenantID: uuid.New(), ID: uuid.New()}, Node: "n", Attempt: 1}
	g.await(key)
	g.await(key) // a repeated dispatch of the same attempt counts once
	waitClosed(t, yielded(g, false), "grouped start while a sparse step waits")
	ticks := yielded(g, true)
	select {
	case <-ticks:
		t.Fatal("a tick went on while a sparse step waited to start")
	default:
	}
	g.started(key)
	waitClosed(t, ticks, "tick after the sparse step started")
	g.started(key) // a second start of the same attempt changes nothing
	waitClosed(t, yielded(g, true), "tick with nothing waiting")
}

func TestYieldGateWaitIsBounded(t *testing.T) {
	t.Parallel()
	const max = 50 * time.Millisecond
	g := newYieldGate(max)
	g.enter() // never leaves
	began := time.Now()
	waitClosed(t, yielded(g, true), "urgent work that never leaves")
	if waited := time.Since(began); waited < max/2 {
		t.Fatalf("yield returned after %v, before the spell's bound", waited)
	}
	if g.yielded.Load() == 0 {
		t.Fatal("the time bulk work waited is not counted")
	}
	// The bound runs from the spell's start: later bulk work does not
	// wait again while the same spell goes on.
	waitClosed(t, yielded(g, false), "bulk work late in a long spell")

	// A sparse step that is never started stops holding ticks at the bound.
	h := newYieldGate(max)
	h.await(store.AttemptKey{Run: store.RunKey{TenantID: uuid.New(), ID: uuid.New()}, Node: "n", Attempt: 1})
	waitClosed(t, yielded(h, true), "sparse step never started")
	var waiting, steps int
	if !testwait.Until(context.Background(), 10*time.Second, func() bool {
		h.mu.Lock()
		waiting, steps = h.waiting, len(h.steps)
		h.mu.Unlock()
		return waiting == 0 && steps == 0
	}) {
		t.Fatalf("the expired sparse step is still counted: waiting %d, steps %d", waiting, steps)
	}
}

// A tick that already holds its runs yields once more before writing, but
// only when it is bulk work's: a trigger's inline tick is the urgent work
// itself and must not wait for itself.
func TestYieldGateInsideATickOnlyForBulkWork(t *testing.T) {
	t.Parallel()
	g := newYieldGate(time.Hour)
	g.enter()
	inline := make(chan struct{})
	go func() {
		g.yieldBulk(context.Background())
		close(inline)
	}()
	waitClosed(t, inline, "an urgent trigger's own inline tick")
	bulk := make(chan struct{})
	go func() {
		g.yieldBulk(asBulk(context.Background()))
		close(bulk)
	}()
	select {
	case <-bulk:
		t.Fatal("a bulk tick went on writing while urgent work was running")
	default:
	}
	g.leave()
	waitClosed(t, bulk, "bulk tick after urgent work left")
}
