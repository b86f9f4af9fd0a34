package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// maxHints bounds each list of editor hints.
const maxHints = 500

// HandlersSeen lists the task handlers the tenant's database knows of,
// by name: those of bridge-SDK tasks waiting for or held by a worker, and
// those the newest published version of each definition names (on a
// task step, or in a scatter's task template).
func (s *Store) HandlersSeen(ctx context.Context, tenantID uuid.UUID) ([]string, error) {
	rows, err := s.db.Query(ctx, handlersSeen, tenantID.String(), maxHints)
	if err != nil {
		return nil, fmt.Errorf("handlers seen: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("handlers seen: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("handlers seen: %w", err)
	}
	return out, nil
}

const handlersSeen = `SELECT h FROM (
  SELECT DISTINCT b.handler AS h FROM bridge_task b WHERE b.tenant_id = $1::uuid
  UNION
  SELECT CASE WHEN s->>'type' = 'task' THEN s->'with'->>'handler' ELSE s->'with'->'do'->'with'->>'handler' END
  FROM definition d
  JOIN LATERAL (SELECT v.manifest FROM definition_version v
                WHERE v.tenant_id = d.tenant_id AND v.key = d.key AND v.unpublished_at IS NULL
                ORDER BY v.version DESC LIMIT 1) v ON true
  CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(v.manifest->'steps') = 'array' THEN v.manifest->'steps' ELSE '[]'::jsonb END) s
  WHERE d.tenant_id = $1::uuid AND (s->>'type' = 'task' OR (s->>'type' = 'scatter' AND s->'with'->'do'->>'type' = 'task'))
) x
WHERE h IS NOT NULL AND h <> ''
ORDER BY h
LIMIT $2`

// DefinitionVersions is a definition's key and name with its published
// versions, newest first.
type DefinitionVersions struct {
	Key      string `json:"key"`
	Name     string `json:"name,omitempty"`
	Versions []int  `json:"versions"`
}

// DefinitionVersionsList lists the tenant's definitions by key, each
// with its published versions.
func (s *Store) DefinitionVersionsList(ctx context.Context, tenantID uuid.UUID) ([]DefinitionVersions, error) {
	rows, err := s.db.Query(ctx, definitionVersions, tenantID.String(), maxHints)
	if err != nil {
		return nil, fmt.Errorf("definitions and versions: %w", err)
	}
	defer rows.Close()
	out := []DefinitionVersions{}
	for rows.Next() {
		var d DefinitionVersions
		var vs []int32
		if err := rows.Scan(&d.Key, &d.Name, &vs); err != nil {
			return nil, fmt.Errorf("definitions and versions: %w", err)
		}
		d.Versions = make([]int, len(vs))
		for i, v := range vs {
			d.Versions[i] = int(v)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("definitions and versions: %w", err)
	}
	return out, nil
}

const definitionVersions = `SELECT d.key, d.name,
  coalesce((SELECT array_agg(v.version ORDER BY v.version DESC) FROM definition_version v
            WHERE v.tenant_id = d.tenant_id AND v.key = d.key AND v.unpublished_at IS NULL), '{}')::int[]
FROM definition d
WHERE d.tenant_id = $1::uuid
ORDER BY d.key
LIMIT $2`
