package shell

import (
	"context"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// version finds the version of a definition a new run starts (0: the
// newest still published), its manifest from the cache by hash when it is
// there: reading and decoding a manifest costs more than the rest of a
// trigger.
func (c *Writer) Version(ctx context.Context, s *store.Store, tenantID uuid.UUID, key string, Version int) (store.DefinitionVersion, error) {
	v, err := s.DefinitionVersionRef(ctx, tenantID, key, Version)
	if err != nil {
		return v, err
	}
	if m, ok := c.manifests.Load(v.ManifestHash); ok {
		v.Manifest = m.(*definition.Manifest)
		return v, nil
	}
	return s.DefinitionVersionGet(ctx, v.TenantID, v.Key, v.Version)
}

// lineage places a run among its relatives.
type lineage struct {
	parent *uuid.UUID
	root   uuid.UUID
	depth  int
	link   *engine.ParentLink
	from   *uuid.UUID // ContinueAsNew predecessor
}

// newRun is a pending run of version v with the engine's view of it.
func newRun(v store.DefinitionVersion, id uuid.UUID, l lineage, input any, subject string, context, attrs map[string]any) store.NewRun {
	parent := ""
	if l.parent != nil {
		parent = l.parent.String()
	}
	return store.NewRun{
		TenantID: v.TenantID, ID: id, DefinitionKey: v.Key, DefinitionVersion: v.Version,
		ManifestHash: v.ManifestHash, Subject: subject, SearchAttributes: attrs,
		ParentRunID: l.parent, RootRunID: l.root, Depth: l.depth, ContinuedFromRunID: l.from,
		State: engine.Run{ID: id.String(), Status: engine.RunPending, Input: input, Parent: l.link, Meta: map[string]any{
			"id": id.String(), "key": v.Key, "version": v.Version, "subject": subject,
			"context": orEmpty(context), "search_attributes": orEmpty(attrs),
			"parent_run_id": parent, "root_run_id": l.root.String(), "depth": l.depth,
		}},
	}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
