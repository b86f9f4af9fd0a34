package tenantsecrets

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/definition"
)

// MaxUseVersions bounds the definition versions Uses reads.
const MaxUseVersions = 1000

// Use is a published definition version that references a secret.
type Use struct {
	Key     string `json:"key"`
	Version int    `json:"version"`
}

// Uses returns, for each of names, the tenant's published definition
// versions that reference it (an http step's secret("NAME") or auth
// shorthand, a task step's secrets), by key and newest version first;
// a name nothing references maps to an empty list. It reads the
// compiled manifests, at most MaxUseVersions of them.
func (s *Service) Uses(ctx context.Context, tenantID uuid.UUID, names []string) (map[string][]Use, error) {
	out := make(map[string][]Use, len(names))
	for _, n := range names {
		out[n] = []Use{}
	}
	if len(names) == 0 {
		return out, nil
	}
	cands, err := s.cfg.Store.SecretUseCandidates(ctx, tenantID, names, MaxUseVersions)
	if err != nil {
		return nil, err
	}
	for _, c := range cands {
		var m definition.Manifest
		if err := json.Unmarshal(c.Manifest, &m); err != nil {
			return nil, fmt.Errorf("definition %s version %d: %w", c.Key, c.Version, err)
		}
		for _, n := range m.SecretNames() {
			if list, ok := out[n]; ok {
				out[n] = append(list, Use{Key: c.Key, Version: c.Version})
			}
		}
	}
	return out, nil
}
