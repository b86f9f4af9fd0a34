package views

import (
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// A running node whose attempt waits for a pool slot shows as held, not
// running; without the wait, or in another state, its own state shows.
func TestHeldStateNamesAStepWaitingForASlot(t *testing.T) {
	slot := &store.PoolWait{Key: "db", Limit: 2}
	running := &engine.Node{State: engine.NodeRunning}
	for _, c := range []struct {
		n    *engine.Node
		slot *store.PoolWait
		want string
	}{
		{running, slot, "held"},
		{running, nil, "running"},
		{&engine.Node{State: engine.NodeSucceeded}, slot, "succeeded"},
		{nil, slot, "pending"},
	} {
		if got := heldState(c.n, c.slot); got != c.want {
			t.Errorf("heldState(%v, %v) = %q, want %q", c.n, c.slot, got, c.want)
		}
	}
}
