package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// DefinitionVersion is one published, immutable version of a definition.
type DefinitionVersion struct {
	TenantID      uuid.UUID
	Key           string
	Version       int
	Manifest      *definition.Manifest
	ManifestHash  string
	Source        string
	SourceFormat  string
	PublishedAt   time.Time
	UnpublishedAt *time.Time
}

// Publication is what DefinitionPublish stores.
type Publication struct {
	Manifest     *definition.Manifest
	ManifestHash string
	Source       string
	SourceFormat string // json or yaml
	// Actor, when set, is recorded in the audit log for a new version.
	Actor string
}

// Audit actions on definitions.
const (
	AuditDefinitionPublish   = "definition.publish"
	AuditDefinitionUnpublish = "definition.unpublish"
)

// DefinitionPublish stores a new version, numbered after the latest, unless
// the latest version has the same manifest hash: then it returns that
// version and created is false.
func (s *Store) DefinitionPublish(ctx context.Context, tenantID uuid.UUID, p Publication) (v DefinitionVersion, created bool, err error) {
	err = s.InTx(ctx, func(tx *Store) error {
		v, created, err = tx.definitionPublish(ctx, tenantID, p)
		return err
	})
	return v, created, err
}

func (s *Store) definitionPublish(ctx context.Context, tenantID uuid.UUID, p Publication) (DefinitionVersion, bool, error) {
	key := p.Manifest.Key
	if _, err := s.q.DefinitionEnsure(ctx, queries.DefinitionEnsureParams{TenantID: tenantID, Key: key, Name: p.Manifest.Name}); err != nil {
		return DefinitionVersion{}, false, fmt.Errorf("save definition %s: %w", key, err)
	}
	def, err := s.q.DefinitionGetForUpdate(ctx, queries.DefinitionGetForUpdateParams{TenantID: tenantID, Key: key})
	if err != nil {
		return DefinitionVersion{}, false, fmt.Errorf("lock definition %s: %w", key, err)
	}
	if def.LatestVersion > 0 {
		latest, err := s.DefinitionVersionGet(ctx, tenantID, key, int(def.LatestVersion))
		if err != nil {
			return DefinitionVersion{}, false, err
		}
		if latest.ManifestHash == p.ManifestHash && latest.UnpublishedAt == nil {
			return latest, false, nil
		}
	}
	manifest, err := jsonvalue.Marshal(p.Manifest)
	if err != nil {
		return DefinitionVersion{}, false, fmt.Errorf("encode manifest: %w", err)
	}
	row, err := s.q.DefinitionVersionCreate(ctx, queries.DefinitionVersionCreateParams{
		TenantID: tenantID, Key: key, Version: def.LatestVersion + 1, Manifest: manifest,
		ManifestHash: p.ManifestHash, Source: p.Source, SourceFormat: p.SourceFormat,
	})
	if err != nil {
		return DefinitionVersion{}, false, fmt.Errorf("store version: %w", err)
	}
	if err := s.q.DefinitionSetLatestVersion(ctx, queries.DefinitionSetLatestVersionParams{
		TenantID: tenantID, Key: key, LatestVersion: row.Version,
	}); err != nil {
		return DefinitionVersion{}, false, fmt.Errorf("bump latest version: %w", err)
	}
	if err := s.triggersSync(ctx, tenantID, key, p.Manifest); err != nil {
		return DefinitionVersion{}, false, err
	}
	if p.Actor != "" {
		details := map[string]any{"version": row.Version, "manifest_hash": row.ManifestHash}
		if err := s.AuditRecord(ctx, tenantID, p.Actor, AuditDefinitionPublish, key, details); err != nil {
			return DefinitionVersion{}, false, err
		}
	}
	v, err := versionFromRow(row)
	return v, true, err
}

// DefinitionVersionGet returns one version of a tenant's definition.
func (s *Store) DefinitionVersionGet(ctx context.Context, tenantID uuid.UUID, key string, version int) (DefinitionVersion, error) {
	row, err := s.q.DefinitionVersionGet(ctx, queries.DefinitionVersionGetParams{TenantID: tenantID, Key: key, Version: int32(version)})
	if err != nil {
		return DefinitionVersion{}, notFound(err, fmt.Sprintf("definition %s version %d", key, version))
	}
	return versionFromRow(row)
}

// DefinitionVersionRef returns a version's identity and manifest hash,
// without its manifest or source; version 0 means the newest version still
// published.
func (s *Store) DefinitionVersionRef(ctx context.Context, tenantID uuid.UUID, key string, version int) (DefinitionVersion, error) {
	row, err := s.q.DefinitionVersionRef(ctx, queries.DefinitionVersionRefParams{TenantID: tenantID, Key: key, Version: int32(version)})
	if err != nil {
		if version > 0 {
			return DefinitionVersion{}, notFound(err, fmt.Sprintf("definition %s version %d", key, version))
		}
		return DefinitionVersion{}, notFound(err, fmt.Sprintf("published definition %s", key))
	}
	return DefinitionVersion{TenantID: row.TenantID, Key: row.Key, Version: int(row.Version), ManifestHash: row.ManifestHash}, nil
}

// DefinitionVersionUnpublish unpublishes a version: runs on it keep going,
// new runs by key start the newest version still published. Unpublishing
// it again changes nothing and returns changed false; actor, when set, is
// recorded in the audit log for a change.
func (s *Store) DefinitionVersionUnpublish(ctx context.Context, tenantID uuid.UUID, key string, version int, actor string) (v DefinitionVersion, changed bool, err error) {
	err = s.InTx(ctx, func(tx *Store) error {
		v, changed, err = tx.definitionVersionUnpublish(ctx, tenantID, key, version, actor)
		return err
	})
	return v, changed, err
}

func (s *Store) definitionVersionUnpublish(ctx context.Context, tenantID uuid.UUID, key string, version int, actor string) (DefinitionVersion, bool, error) {
	row, err := s.q.DefinitionVersionUnpublish(ctx, queries.DefinitionVersionUnpublishParams{TenantID: tenantID, Key: key, Version: int32(version)})
	if errors.Is(err, pgx.ErrNoRows) {
		v, err := s.DefinitionVersionGet(ctx, tenantID, key, version)
		return v, false, err
	}
	if err != nil {
		return DefinitionVersion{}, false, fmt.Errorf("unpublish %s v%d: %w", key, version, err)
	}
	if err := s.triggersResync(ctx, tenantID, key); err != nil {
		return DefinitionVersion{}, false, err
	}
	if actor != "" {
		if err := s.AuditRecord(ctx, tenantID, actor, AuditDefinitionUnpublish, key, map[string]any{"version": version}); err != nil {
			return DefinitionVersion{}, false, err
		}
	}
	v, err := versionFromRow(row)
	return v, true, err
}

func versionFromRow(r queries.DefinitionVersion) (DefinitionVersion, error) {
	var m definition.Manifest
	if err := jsonvalue.Unmarshal(r.Manifest, &m); err != nil {
		return DefinitionVersion{}, fmt.Errorf("decode manifest of %s v%d: %w", r.Key, r.Version, err)
	}
	return DefinitionVersion{
		TenantID: r.TenantID, Key: r.Key, Version: int(r.Version), Manifest: &m,
		ManifestHash: r.ManifestHash, Source: r.Source, SourceFormat: r.SourceFormat,
		PublishedAt: r.PublishedAt, UnpublishedAt: r.UnpublishedAt,
	}, nil
}
