package workers_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testwait"
)

// nodes returns the run's step nodes by id.
func (b testBundle) nodes(t *testing.T, id uuid.UUID) map[string]*engine.Node {
	t.Helper()
	ns, err := b.store.RunNodesSteps(b.ctx, b.tenant.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*engine.Node{}
	for _, n := range ns {
		out[n.ID] = n
	}
	return out
}

// waitNode polls until the node reaches state or the deadline passes.
func (b testBundle) waitNode(t *testing.T, id uuid.UUID, node string, state engine.NodeState) *engine.Node {
	t.Helper()
	var n *engine.Node
	if !testwait.Until(b.ctx, 30*time.Second, func() bool {
		n = b.nodes(t, id)[node]
		return n != nil && n.State == state
	}) {
		t.Fatalf("run %s node %s never became %s: %+v", id, node, state, b.nodes(t, id)[node])
	}
	return n
}

// waitRunStatus polls until the run has status.
func (b testBundle) waitRunStatus(t *testing.T, id uuid.UUID, status engine.RunStatus) store.Run {
	t.Helper()
	return b.waitRun(t, id, "become "+string(status), func(r store.Run) bool { return r.Status == status })
}

// shift moves the schema's database clock forward by d.
func (b testBundle) shift(t *testing.T, d time.Duration) {
	t.Helper()
	if err := b.store.ClockShift(b.ctx, d); err != nil {
		t.Fatal(err)
	}
}

// finish waits for the run to end with status and returns its nodes.
func (b testBundle) finish(t *testing.T, id uuid.UUID, status engine.RunStatus) map[string]*engine.Node {
	t.Helper()
	run := b.waitTerminal(t, id)
	if run.Status != status {
		t.Fatalf("run %s ended %s (error %+v), want %s", id, run.Status, run.State.Error, status)
	}
	return b.nodes(t, id)
}

// wantWaited checks the run's history: each node went to waiting with
// the waiting type as detail.
func (b testBundle) wantWaited(t *testing.T, id uuid.UUID, want map[string]string) {
	t.Helper()
	history, err := b.store.RunHistory(b.ctx, b.tenant.ID, id, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tr := range history {
		if tr.To == string(engine.NodeWaiting) && tr.Node != "" {
			got[tr.Node] = tr.Detail
		}
	}
	for node, typ := range want {
		if got[node] != typ {
			t.Errorf("history: node %s waited as %q, want %q", node, got[node], typ)
		}
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
