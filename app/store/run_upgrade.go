package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/queries"
)

// RunUpgradeSetVersion moves a run to version (its manifest hash) with
// its new engine state, guarded by the record_version it was read at:
// ErrConflict when that moved on.
func (s *Store) RunUpgradeSetVersion(ctx context.Context, r Run, version int, hash string, st engine.Run) error {
	state, err := encodeState(st)
	if err != nil {
		return err
	}
	n, err := s.q.RunUpgradeSetVersion(ctx, queries.RunUpgradeSetVersionParams{
		TenantID: r.TenantID, ID: r.ID, RecordVersion: r.RecordVersion,
		DefinitionVersion: int32(version), ManifestHash: hash, State: state, TransitionCount: st.TransitionCount,
	})
	if err != nil {
		return err
	}
	if n != 1 {
		return ErrConflict
	}
	return nil
}

// RunUpgradeDropNodes deletes a run's nodes of the steps named, and
// their scatter children.
func (s *Store) RunUpgradeDropNodes(ctx context.Context, tenantID, runID uuid.UUID, nodes []string) error {
	if len(nodes) == 0 {
		return nil
	}
	return s.q.RunUpgradeDropNodes(ctx, queries.RunUpgradeDropNodesParams{TenantID: tenantID, RunID: runID, Nodes: nodes})
}

// BatchUpgrade is the target of an upgrade batch.
type BatchUpgrade struct {
	Version       int  `json:"version"`
	CancelRemoved bool `json:"cancel_removed,omitempty"`
}
