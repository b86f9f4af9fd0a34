package httpx

import (
	"context"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// WorkerWaits are the running nodes' tasks that no worker has claimed,
// by node, for their current attempt only.
func WorkerWaits(ctx context.Context, s *store.Store, run store.Run, nodes []*engine.Node) (map[string]*store.WorkerWait, error) {
	waits, err := s.BridgeTasksUnclaimed(ctx, run.TenantID, run.ID, running(nodes))
	if err != nil {
		return nil, err
	}
	out := map[string]*store.WorkerWait{}
	for _, n := range nodes {
		if w, ok := waits[n.ID]; ok && n.State == engine.NodeRunning && w.Generation == n.Generation && w.Attempt == n.Attempt {
			out[n.ID] = &w
		}
	}
	return out, nil
}

// SlotWaits are the running nodes' attempts that their steps'
// concurrency pools hold back, by node, for their current attempt only.
func SlotWaits(ctx context.Context, s *store.Store, run store.Run, nodes []*engine.Node) (map[string]*store.PoolWait, error) {
	out := map[string]*store.PoolWait{}
	if run.Status.Terminal() {
		return out, nil
	}
	waits, err := s.PoolWaits(ctx, run.TenantID, run.ID)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if w, ok := waits[n.ID]; ok && n.State == engine.NodeRunning && w.Generation == n.Generation && w.Attempt == n.Attempt {
			out[n.ID] = &w
		}
	}
	return out, nil
}

// FlowWait says what a run flow control holds back waits for; nil for
// any other run.
func FlowWait(ctx context.Context, s *store.Store, run store.Run) (*store.FlowWait, error) {
	if run.Status != engine.RunPending || !run.State.Held {
		return nil, nil
	}
	w, found, err := s.FlowWaitOf(ctx, run.TenantID, run.ID)
	if err != nil || !found {
		return nil, err
	}
	return &w, nil
}

// running lists the ids of the running nodes: those that may wait for a
// worker.
func running(nodes []*engine.Node) []string {
	ids := []string{}
	for _, n := range nodes {
		if n.State == engine.NodeRunning {
			ids = append(ids, n.ID)
		}
	}
	return ids
}
