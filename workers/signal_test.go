package workers_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

func (b testBundle) signal(t *testing.T, id uuid.UUID, rid, name string, payload any) error {
	t.Helper()
	_, err := b.coord.Runs.Signal(b.ctx, b.tenant.ID, id, engine.Signal{RequestID: rid, Name: name, Payload: payload})
	return err
}

func wantCode(t *testing.T, err error, code apperr.Code) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

// Signals sent before any step waits for them are buffered, and later
// signal steps take them in arrival order.
func TestSignalsBufferedBeforeTheStepWaitsAreTakenInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: sig-order
steps:
  - { ref: open, type: signal, with: { name: open } }
  - { ref: x1, type: signal, with: { name: x } }
  - { ref: x2, type: signal, with: { name: x } }
  - { ref: x3, type: signal, with: { name: x } }
edges:
  - { from: open, to: x1 }
  - { from: x1, to: x2 }
  - { from: x2, to: x3 }
`)
	id := b.start(t, "sig-order", nil)
	b.waitNode(t, id, "open", engine.NodeWaiting)
	for i, rid := range []string{"a", "b", "c"} {
		if err := b.signal(t, id, rid, "x", map[string]any{"n": i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	b.waitBuffered(t, id, 3)
	if err := b.signal(t, id, "go", "open", "opened"); err != nil {
		t.Fatal(err)
	}
	nodes := b.finish(t, id, engine.RunSucceeded)
	if nodes["open"].Output != "opened" {
		t.Errorf("open output %v", nodes["open"].Output)
	}
	for i, ref := range []string{"x1", "x2", "x3"} {
		if got := nodes[ref].Output.(map[string]any)["n"]; got != int64(i+1) {
			t.Errorf("%s took signal %v, want %d", ref, got, i+1)
		}
	}
	sigs, err := b.store.SignalsList(b.ctx, b.tenant.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sigs {
		if s.Status != store.SignalConsumed || s.Node == "" {
			t.Errorf("signal %s is %s by %q, want consumed", s.RequestID, s.Status, s.Node)
		}
	}
}

// waitBuffered polls until the run row counts n buffered signals.
func (b testBundle) waitBuffered(t *testing.T, id uuid.UUID, n int) {
	t.Helper()
	var run store.Run
	if !testwait.Until(b.ctx, 30*time.Second, func() bool {
		var err error
		run, err = b.store.RunGet(b.ctx, b.tenant.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return run.State.BufferedSignals == n
	}) {
		t.Fatalf("run buffers %d signals, want %d", run.State.BufferedSignals, n)
	}
}

// A repeated request id is refused, also when it is sent to the run's
// ContinueAsNew successor.
func TestSignalDuplicateRequestIDRefusedAcrossTheChain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: sig-dup
steps:
  - { ref: a, type: signal, with: { name: a } }
  - { ref: b, type: signal, with: { name: b } }
edges:
  - { from: a, to: b }
`)
	id := b.start(t, "sig-dup", nil)
	if err := b.signal(t, id, "r1", "a", 1); err != nil {
		t.Fatal(err)
	}
	wantCode(t, b.signal(t, id, "r1", "b", 2), apperr.Conflict)

	successor := b.start(t, "sig-dup", nil)
	if _, err := b.pool.Exec(b.ctx, `UPDATE run SET continued_from_run_id = $1 WHERE id = $2`, id, successor); err != nil {
		t.Fatal(err)
	}
	wantCode(t, b.signal(t, successor, "r1", "a", 3), apperr.Conflict)
	if err := b.signal(t, successor, "r2", "a", 4); err != nil {
		t.Fatal(err)
	}
	if n := b.waitNode(t, successor, "a", engine.NodeSucceeded); n.Output != int64(4) {
		t.Errorf("successor took %v, want the fresh signal 4", n.Output)
	}
	if n := b.waitNode(t, id, "a", engine.NodeSucceeded); n.Output != int64(1) {
		t.Errorf("first run took %v, want 1", n.Output)
	}
}

// Unmatched signals are kept up to the bound; past it the sender is
// refused, and a consumed signal frees its place.
func TestSignalBufferBound(t *testing.T) {
	t.Parallel()
	b := setupWith(t, func(c *workers.Config) { c.MaxBufferedSignals = 3 })
	b.publishYAML(t, `
key: sig-bound
steps:
  - { ref: w, type: signal, with: { name: w } }
  - { ref: x, type: signal, with: { name: x } }
edges:
  - { from: w, to: x }
`)
	id := b.start(t, "sig-bound", nil)
	b.waitNode(t, id, "w", engine.NodeWaiting)
	for i := range 3 {
		if err := b.signal(t, id, "x"+string(rune('a'+i)), "x", i); err != nil {
			t.Fatal(err)
		}
	}
	err := b.signal(t, id, "x-over", "x", 99)
	wantCode(t, err, apperr.RateLimited)
	if !strings.Contains(err.Error(), "3") {
		t.Errorf("message %q does not name the bound", err)
	}
	b.waitBuffered(t, id, 3)
	if err := b.signal(t, id, "w1", "w", nil); err != nil {
		t.Fatal(err)
	}
	nodes := b.finish(t, id, engine.RunSucceeded)
	if nodes["x"].Output != int64(0) {
		t.Errorf("x took %v, want the oldest buffered signal 0", nodes["x"].Output)
	}
	wantCode(t, b.signal(t, id, "late", "x", 1), apperr.Conflict)
}

// A signal step's timeout applies on_timeout: skip lets the run go on,
// fail fails it. The timeout is a day, passed by moving the clock.
func TestSignalTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		run    engine.RunStatus
		node   engine.NodeState
	}{
		{"skip", engine.RunSucceeded, engine.NodeSkipped},
		{"fail", engine.RunFailed, engine.NodeFailed},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.publishYAML(t, `
key: sig-timeout
steps:
  - { ref: s, type: signal, with: { name: s, timeout: 24h, on_timeout: `+tc.policy+` } }
`)
			id := b.start(t, "sig-timeout", nil)
			n := b.waitNode(t, id, "s", engine.NodeWaiting)
			if n.Waiting.Type != engine.WaitSignal || n.Waiting.Name != "s" || n.Waiting.Until.IsZero() {
				t.Fatalf("waiting %+v, want signal s with a timeout", n.Waiting)
			}
			b.shift(t, 24*time.Hour+time.Second)
			if got := b.finish(t, id, tc.run)["s"].State; got != tc.node {
				t.Errorf("node %s, want %s", got, tc.node)
			}
		})
	}
}

func TestSignalPayloadTooLarge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: sig-big
steps:
  - { ref: s, type: signal, with: { name: s } }
`)
	id := b.start(t, "sig-big", nil)
	wantCode(t, b.signal(t, id, "big", "s", strings.Repeat("x", 1<<20)), apperr.TooLarge)
}
