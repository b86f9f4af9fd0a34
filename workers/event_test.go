package workers_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testwait"
)

func (b testBundle) event(t *testing.T, name string, data any) uuid.UUID {
	t.Helper()
	e, _, err := b.coord.Runs.Events.Publish(b.ctx, store.Event{TenantID: b.tenant.ID, Name: name, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// An event step takes the first matching event of its name; each of two
// waiting runs consumes the same event once.
func TestEventStepMatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: ev
steps:
  - { ref: paid, type: event, with: { name: paid, match_expr: 'event.order == input.order' } }
`)
	one, two := b.start(t, "ev", map[string]any{"order": 1}), b.start(t, "ev", map[string]any{"order": 1})
	other := b.start(t, "ev", map[string]any{"order": 2})
	for _, id := range []uuid.UUID{one, two, other} {
		if n := b.waitNode(t, id, "paid", engine.NodeWaiting); n.Waiting.Type != engine.WaitEvent || n.Waiting.Name != "paid" {
			t.Fatalf("waiting %+v", n.Waiting)
		}
	}
	b.event(t, "unpaid", map[string]any{"order": 1})
	ev := b.event(t, "paid", map[string]any{"order": 1})
	for _, id := range []uuid.UUID{one, two} {
		if out := b.finish(t, id, engine.RunSucceeded)["paid"].Output; out.(map[string]any)["order"] != int64(1) {
			t.Errorf("output %v", out)
		}
		uses, err := b.store.EventUses(b.ctx, b.tenant.ID, id)
		if err != nil || !slices.Equal(uses["paid"], []uuid.UUID{ev}) {
			t.Errorf("uses %v %v, want the event once", uses, err)
		}
	}
	if run, _ := b.store.RunGet(b.ctx, b.tenant.ID, other); run.Status != engine.RunWaiting {
		t.Errorf("run of another order is %s", run.Status)
	}
	b.event(t, "paid", map[string]any{"order": 2})
	b.finish(t, other, engine.RunSucceeded)
}

func TestEventStepTimeoutSkips(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: ev
steps:
  - { ref: paid, type: event, with: { name: paid, timeout: 24h, on_timeout: skip } }
`)
	id := b.start(t, "ev", nil)
	b.waitNode(t, id, "paid", engine.NodeWaiting)
	b.shift(t, 24*time.Hour+time.Second)
	if n := b.finish(t, id, engine.RunSucceeded)["paid"]; n.State != engine.NodeSkipped {
		t.Errorf("node %s, want skipped", n.State)
	}
}

// Each event_set policy, without a timeout (the set completes) and with
// one (the timeout decides).
func TestEventSetPolicies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, with string
		send       []string
		timeout    bool
		status     engine.RunStatus
		got        []string
	}{
		{"all_required", "policy: all_required", []string{"a", "b", "a", "c"}, false, engine.RunSucceeded, []string{"a", "b", "c"}},
		{"any", "policy: any", []string{"b"}, false, engine.RunSucceeded, []string{"b"}},
		{"quorum", "policy: quorum, n: 2", []string{"a", "a", "c"}, false, engine.RunSucceeded, []string{"a", "c"}},
		{"count", "policy: count, n: 2", []string{"c", "b"}, false, engine.RunSucceeded, []string{"b", "c"}},
		{"until_timeout", "policy: until_timeout, timeout: 1h", []string{"a", "c"}, true, engine.RunSucceeded, []string{"a", "c"}},
		{"all_required timeout fail", "policy: all_required, timeout: 1h", []string{"a"}, true, engine.RunFailed, nil},
		{"all_required timeout partial", "policy: all_required, timeout: 1h, on_timeout: succeed_partial", []string{"a"}, true, engine.RunSucceeded, []string{"a"}},
		{"quorum timeout fail", "policy: quorum, n: 3, timeout: 1h", []string{"a", "b"}, true, engine.RunFailed, nil},
		{"any timeout partial", "policy: any, timeout: 1h, on_timeout: succeed_partial", nil, true, engine.RunSucceeded, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.publishYAML(t, `
key: set
steps:
  - { ref: acks, type: event_set, with: { events: [ { name: a }, { name: b, match_expr: 'event.ok' }, { name: c } ], `+tc.with+` } }
`)
			id := b.start(t, "set", nil)
			if n := b.waitNode(t, id, "acks", engine.NodeWaiting); n.Waiting.Type != engine.WaitEventSet {
				t.Fatalf("waiting %+v", n.Waiting)
			}
			b.event(t, "b", map[string]any{"ok": false})
			for _, name := range tc.send {
				b.event(t, name, map[string]any{"ok": true, "from": name})
			}
			if tc.timeout {
				b.waitEventsDrained(t, id)
				b.shift(t, time.Hour+time.Second)
			}
			n := b.finish(t, id, tc.status)["acks"]
			if tc.got == nil {
				return
			}
			out, _ := n.Output.(map[string]any)
			if got := slices.Sorted(maps.Keys(out)); !slices.Equal(got, tc.got) {
				t.Errorf("received %v, want %v", got, tc.got)
			}
		})
	}
}

// waitEventsDrained waits until the run's tick has drained every input.
func (b testBundle) waitEventsDrained(t *testing.T, id uuid.UUID) {
	t.Helper()
	var n int
	if !testwait.Until(b.ctx, 30*time.Second, func() bool {
		err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM run_input WHERE run_id = $1 AND consumed_at IS NULL`, id).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	}) {
		var kind, payload string
		_ = b.pool.QueryRow(b.ctx, `SELECT kind, payload::text FROM run_input WHERE run_id = $1 AND consumed_at IS NULL`, id).Scan(&kind, &payload)
		t.Fatalf("%d inputs still pending: %s %s", n, kind, payload)
	}
}

func TestDigestByWindowAndByCount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: window
steps:
  - { ref: batch, type: digest, with: { name: line, window: 1h } }
`)
	b.publishYAML(t, `
key: count
steps:
  - { ref: batch, type: digest, with: { name: line, match_expr: 'event.n > 0', window: 24h, max_items: 3 } }
`)
	window, count := b.start(t, "window", nil), b.start(t, "count", nil)
	for _, id := range []uuid.UUID{window, count} {
		if n := b.waitNode(t, id, "batch", engine.NodeWaiting); n.Waiting.Type != engine.WaitDigest {
			t.Fatalf("waiting %+v", n.Waiting)
		}
	}
	for _, n := range []float64{0, 1, 2, 3, 4} {
		b.event(t, "line", map[string]any{"n": n})
	}
	items := b.finish(t, count, engine.RunSucceeded)["batch"].Output.(map[string]any)["items"].([]any)
	if len(items) != 3 || items[0].(map[string]any)["n"] != 1.0 || items[2].(map[string]any)["n"] != 3.0 {
		t.Errorf("count digest released %v, want items 1..3", items)
	}
	b.waitEventsDrained(t, window)
	if run, _ := b.store.RunGet(b.ctx, b.tenant.ID, window); run.Status != engine.RunWaiting {
		t.Fatalf("window digest is %s before its window ends", run.Status)
	}
	b.shift(t, time.Hour+time.Second)
	items = b.finish(t, window, engine.RunSucceeded)["batch"].Output.(map[string]any)["items"].([]any)
	if len(items) != 5 {
		t.Errorf("window digest released %d items, want 5", len(items))
	}
}
