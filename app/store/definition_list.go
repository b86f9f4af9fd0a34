package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/queries"
)

// Definition is a tenant's definition by key: its name, its draft and where
// its versions stand.
type Definition struct {
	TenantID uuid.UUID
	Key      string
	Name     string
	// Draft is nil when none was ever saved.
	Draft *Draft
	// LatestVersion is the highest version number ever published.
	LatestVersion int
	// PublishedVersion is the newest version still published, the one a
	// run started by key uses; 0 when none is.
	PublishedVersion int
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Draft is a definition's work in progress, saved as authored.
type Draft struct {
	Source string // empty in DefinitionList
	Format string // json or yaml
	// Hash is the draft's manifest hash when it was saved.
	Hash    string
	SavedAt time.Time
}

// VersionSummary is a version without its manifest and source.
type VersionSummary struct {
	Version       int
	ManifestHash  string
	SourceFormat  string
	PublishedAt   time.Time
	UnpublishedAt *time.Time
}

// DefinitionGet returns one of the tenant's definitions with its draft.
func (s *Store) DefinitionGet(ctx context.Context, tenantID uuid.UUID, key string) (Definition, error) {
	r, err := s.q.DefinitionGet(ctx, queries.DefinitionGetParams{TenantID: tenantID, Key: key})
	if err != nil {
		return Definition{}, notFound(err, fmt.Sprintf("definition %s", key))
	}
	return Definition{
		TenantID: r.TenantID, Key: r.Key, Name: r.Name,
		Draft:         draftFromColumns(r.Draft, r.DraftFormat, r.DraftHash, r.DraftSavedAt),
		LatestVersion: int(r.LatestVersion), PublishedVersion: int(r.PublishedVersion),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}, nil
}

// DefinitionList returns up to max of the tenant's definitions with keys
// after after, by key. Their drafts carry no source.
func (s *Store) DefinitionList(ctx context.Context, tenantID uuid.UUID, after string, max int) ([]Definition, error) {
	return s.DefinitionListMatching(ctx, tenantID, "", after, max)
}

// DefinitionListMatching is DefinitionList of the definitions whose key
// or name contains q, ignoring case ("": all).
func (s *Store) DefinitionListMatching(ctx context.Context, tenantID uuid.UUID, q, after string, max int) ([]Definition, error) {
	rows, err := s.q.DefinitionList(ctx, queries.DefinitionListParams{TenantID: tenantID, After: after, Q: q, Max: int32(max)})
	if err != nil {
		return nil, fmt.Errorf("list definitions: %w", err)
	}
	out := make([]Definition, len(rows))
	for i, r := range rows {
		out[i] = Definition{
			TenantID: r.TenantID, Key: r.Key, Name: r.Name,
			LatestVersion: int(r.LatestVersion), PublishedVersion: int(r.PublishedVersion),
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		}
		if r.HasDraft {
			out[i].Draft = draftFromColumns(pgtype.Text{Valid: true}, r.DraftFormat, r.DraftHash, r.DraftSavedAt)
		}
	}
	return out, nil
}

// DefinitionVersionList returns a definition's versions, newest first.
func (s *Store) DefinitionVersionList(ctx context.Context, tenantID uuid.UUID, key string) ([]VersionSummary, error) {
	rows, err := s.q.DefinitionVersionList(ctx, queries.DefinitionVersionListParams{TenantID: tenantID, Key: key})
	if err != nil {
		return nil, fmt.Errorf("list versions of %s: %w", key, err)
	}
	out := make([]VersionSummary, len(rows))
	for i, r := range rows {
		out[i] = VersionSummary{
			Version: int(r.Version), ManifestHash: r.ManifestHash, SourceFormat: r.SourceFormat,
			PublishedAt: r.PublishedAt, UnpublishedAt: r.UnpublishedAt,
		}
	}
	return out, nil
}

// DefinitionDraftSave saves the draft of the tenant's definition key,
// creating the definition on first save, and names it name.
func (s *Store) DefinitionDraftSave(ctx context.Context, tenantID uuid.UUID, key, name string, d Draft) (Draft, error) {
	r, err := s.q.DefinitionDraftSave(ctx, queries.DefinitionDraftSaveParams{
		TenantID: tenantID, Key: key, Name: name,
		Draft:       pgtype.Text{String: d.Source, Valid: true},
		DraftFormat: pgtype.Text{String: d.Format, Valid: true},
		DraftHash:   pgtype.Text{String: d.Hash, Valid: true},
	})
	if err != nil {
		return Draft{}, fmt.Errorf("save draft of %s: %w", key, err)
	}
	return *draftFromColumns(r.Draft, r.DraftFormat, r.DraftHash, r.DraftSavedAt), nil
}

func draftFromColumns(source, format, hash pgtype.Text, savedAt *time.Time) *Draft {
	if !source.Valid {
		return nil
	}
	d := &Draft{Source: source.String, Format: format.String, Hash: hash.String}
	if savedAt != nil {
		d.SavedAt = *savedAt
	}
	return d
}
