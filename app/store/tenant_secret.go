package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/queries"
)

// TenantSecret is a tenant secret's metadata; its value stays sealed in
// the table and is only read by SecretValues.
type TenantSecret struct {
	TenantID    uuid.UUID
	Name        string
	Description string
	Version     int
	CreatedAt   time.Time
	CreatedBy   string
	UpdatedAt   time.Time
	UpdatedBy   string
	LastUsedAt  *time.Time
}

// SealedSecret is one stored secret's sealed value, for re-sealing.
type SealedSecret struct {
	TenantID uuid.UUID
	Name     string
	Value    []byte
}

// TenantSecretAAD binds a tenant secret's sealed value to its tenant and
// name (the additional data it is sealed with).
func TenantSecretAAD(tenantID uuid.UUID, name string) string {
	return "tenant_secret/" + tenantID.String() + "/" + name
}

// SecretPut sets a secret's sealed value, creating it or replacing it at
// the next version; an empty description keeps the one it had.
func (s *Store) SecretPut(ctx context.Context, tenantID uuid.UUID, name, description string, sealed []byte, actor string) (TenantSecret, error) {
	row, err := s.q.TenantSecretPut(ctx, queries.TenantSecretPutParams{
		TenantID: tenantID, Name: name, Description: description, Value: sealed, Actor: actor,
	})
	if err != nil {
		return TenantSecret{}, fmt.Errorf("store secret: %w", err)
	}
	return tenantSecretFromRow(queries.TenantSecretGetRow(row)), nil
}

// SecretGet returns a secret's metadata.
func (s *Store) SecretGet(ctx context.Context, tenantID uuid.UUID, name string) (TenantSecret, error) {
	row, err := s.q.TenantSecretGet(ctx, queries.TenantSecretGetParams{TenantID: tenantID, Name: name})
	if err != nil {
		return TenantSecret{}, notFound(err, "secret "+name)
	}
	return tenantSecretFromRow(row), nil
}

// SecretList lists a tenant's secrets by name, after the given one.
func (s *Store) SecretList(ctx context.Context, tenantID uuid.UUID, after string, limit int) ([]TenantSecret, error) {
	rows, err := s.q.TenantSecretList(ctx, queries.TenantSecretListParams{TenantID: tenantID, After: after, Max: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	out := make([]TenantSecret, len(rows))
	for i, r := range rows {
		out[i] = tenantSecretFromRow(queries.TenantSecretGetRow(r))
	}
	return out, nil
}

// SecretDelete deletes a secret, reporting whether it existed.
func (s *Store) SecretDelete(ctx context.Context, tenantID uuid.UUID, name string) (bool, error) {
	n, err := s.q.TenantSecretDelete(ctx, queries.TenantSecretDeleteParams{TenantID: tenantID, Name: name})
	if err != nil {
		return false, fmt.Errorf("delete secret: %w", err)
	}
	return n > 0, nil
}

// SecretValues returns the sealed values of the named secrets that exist,
// by name, and records that they were used.
func (s *Store) SecretValues(ctx context.Context, tenantID uuid.UUID, names []string) (map[string][]byte, error) {
	rows, err := s.q.TenantSecretValues(ctx, queries.TenantSecretValuesParams{TenantID: tenantID, Names: names})
	if err != nil {
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	out := make(map[string][]byte, len(rows))
	for _, r := range rows {
		out[r.Name] = r.Value
	}
	return out, nil
}

// SecretSealedPage returns up to limit stored secrets of every tenant
// after (afterTenant, afterName), in that order.
func (s *Store) SecretSealedPage(ctx context.Context, afterTenant uuid.UUID, afterName string, limit int) ([]SealedSecret, error) {
	rows, err := s.q.TenantSecretSealedPage(ctx, queries.TenantSecretSealedPageParams{AfterTenant: afterTenant, AfterName: afterName, Max: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("page secrets: %w", err)
	}
	out := make([]SealedSecret, len(rows))
	for i, r := range rows {
		out[i] = SealedSecret{TenantID: r.TenantID, Name: r.Name, Value: r.Value}
	}
	return out, nil
}

// SecretReseal replaces a sealed value by another sealing of the same
// value, unless the stored one is no longer old; it reports whether it
// replaced it.
func (s *Store) SecretReseal(ctx context.Context, tenantID uuid.UUID, name string, old, sealed []byte) (bool, error) {
	n, err := s.q.TenantSecretReseal(ctx, queries.TenantSecretResealParams{TenantID: tenantID, Name: name, OldValue: old, Value: sealed})
	if err != nil {
		return false, fmt.Errorf("reseal secret: %w", err)
	}
	return n > 0, nil
}

// SecretUseCandidate is a published definition version whose manifest
// mentions a secret's name somewhere, for the caller to check precisely.
type SecretUseCandidate struct {
	Key      string
	Version  int
	Manifest []byte
}

// SecretUseCandidates returns up to limit of the tenant's published
// definition versions whose manifest mentions one of the names, by key
// and newest version first.
func (s *Store) SecretUseCandidates(ctx context.Context, tenantID uuid.UUID, names []string, limit int) ([]SecretUseCandidate, error) {
	rows, err := s.q.TenantSecretUseCandidates(ctx, queries.TenantSecretUseCandidatesParams{TenantID: tenantID, Names: names, Max: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("find secret uses: %w", err)
	}
	out := make([]SecretUseCandidate, len(rows))
	for i, r := range rows {
		out[i] = SecretUseCandidate{Key: r.Key, Version: int(r.Version), Manifest: r.Manifest}
	}
	return out, nil
}

func tenantSecretFromRow(r queries.TenantSecretGetRow) TenantSecret {
	return TenantSecret{
		TenantID: r.TenantID, Name: r.Name, Description: r.Description, Version: int(r.Version),
		CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy, LastUsedAt: r.LastUsedAt,
	}
}

// SealedWebhook is one webhook's sealed secrets, for re-sealing.
type SealedWebhook struct {
	TenantID       uuid.UUID
	ID             string
	Secret         []byte
	PreviousSecret []byte // nil when none
}

// RekeyWebhookPage returns up to limit webhooks' sealed secrets of every
// tenant after (afterTenant, afterID), in that order.
func (s *Store) RekeyWebhookPage(ctx context.Context, afterTenant uuid.UUID, afterID string, limit int) ([]SealedWebhook, error) {
	rows, err := s.q.RekeyWebhookPage(ctx, queries.RekeyWebhookPageParams{AfterTenant: afterTenant, AfterID: afterID, Max: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("page webhooks: %w", err)
	}
	out := make([]SealedWebhook, len(rows))
	for i, r := range rows {
		out[i] = SealedWebhook(r)
	}
	return out, nil
}

// RekeyWebhookReseal replaces a webhook's sealed secrets by new sealings
// of the same secrets, unless they are no longer old; it reports whether
// it replaced them.
func (s *Store) RekeyWebhookReseal(ctx context.Context, old, resealed SealedWebhook) (bool, error) {
	n, err := s.q.RekeyWebhookReseal(ctx, queries.RekeyWebhookResealParams{
		TenantID: old.TenantID, ID: old.ID, OldSecret: old.Secret, OldPreviousSecret: old.PreviousSecret,
		Secret: resealed.Secret, PreviousSecret: resealed.PreviousSecret,
	})
	if err != nil {
		return false, fmt.Errorf("reseal webhook: %w", err)
	}
	return n > 0, nil
}
