package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/queries"
)

// APIKey is a stored key: everything but its secret.
type APIKey struct {
	TenantID   uuid.UUID
	ID         uuid.UUID
	Name       string
	Prefix     string
	Scopes     []auth.Scope
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	// CreatedBy is the person who made the key in the dashboard; nil for
	// a key made by an operator's command.
	CreatedBy *uuid.UUID
}

// APIKeyCreate generates and stores a key for the tenant, made by an
// operator. The returned secret is the only copy: it is not stored.
func (s *Store) APIKeyCreate(ctx context.Context, tenantID uuid.UUID, name string, scopes []auth.Scope) (APIKey, string, error) {
	return s.apiKeyCreate(ctx, tenantID, name, scopes, uuid.NullUUID{})
}

// APIKeyCreateBy is APIKeyCreate for a key a person makes: the key acts
// as that person toward approvals (see DeciderPrincipal).
func (s *Store) APIKeyCreateBy(ctx context.Context, tenantID uuid.UUID, name string, scopes []auth.Scope, userID uuid.UUID) (APIKey, string, error) {
	return s.apiKeyCreate(ctx, tenantID, name, scopes, uuid.NullUUID{UUID: userID, Valid: true})
}

func (s *Store) apiKeyCreate(ctx context.Context, tenantID uuid.UUID, name string, scopes []auth.Scope, by uuid.NullUUID) (APIKey, string, error) {
	kr, err := s.Keyring(ctx)
	if err != nil {
		return APIKey{}, "", err
	}
	key, err := kr.NewKey()
	if err != nil {
		return APIKey{}, "", err
	}
	names := make([]string, len(scopes))
	for i, sc := range scopes {
		names[i] = string(sc)
	}
	row, err := s.q.APIKeyCreate(ctx, queries.APIKeyCreateParams{
		TenantID: tenantID, ID: uuid.New(), Name: name,
		Prefix: key.Prefix, Hash: key.Hash, Scopes: names, CreatedBy: by,
	})
	if err != nil {
		return APIKey{}, "", fmt.Errorf("create API key: %w", err)
	}
	return apiKeyFromRow(row), key.Secret, nil
}

// Keyring is the deployment's keyring, made from the key secret the
// database holds.
func (s *Store) Keyring(ctx context.Context) (*auth.Keyring, error) {
	secret, err := s.q.APIKeySecret(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the API key secret: %w", err)
	}
	return auth.NewKeyring(secret)
}

// APIKeyLegacyLive reports whether any live key has the old checksum.
func (s *Store) APIKeyLegacyLive(ctx context.Context) (bool, error) {
	live, err := s.q.APIKeyLegacyLive(ctx)
	if err != nil {
		return false, fmt.Errorf("look for legacy API keys: %w", err)
	}
	return live, nil
}

// APIKeyAuthenticate finds the live key with the hash and records its use.
// A revoked or unknown key is Unauthorized, with one message for both.
func (s *Store) APIKeyAuthenticate(ctx context.Context, hash []byte) (APIKey, error) {
	row, err := s.q.APIKeyGetByHash(ctx, hash)
	if err != nil {
		if apperr.Is(notFound(err, "key"), apperr.NotFound) {
			return APIKey{}, apperr.New(apperr.Unauthorized, "invalid or revoked API key")
		}
		return APIKey{}, fmt.Errorf("look up API key: %w", err)
	}
	if row.RevokedAt != nil {
		return APIKey{}, apperr.New(apperr.Unauthorized, "invalid or revoked API key")
	}
	if err := s.q.APIKeyTouch(ctx, queries.APIKeyTouchParams{TenantID: row.TenantID, ID: row.ID}); err != nil {
		return APIKey{}, fmt.Errorf("record API key use: %w", err)
	}
	return apiKeyFromRow(row), nil
}

// APIKeyList lists a tenant's keys, newest first.
func (s *Store) APIKeyList(ctx context.Context, tenantID uuid.UUID) ([]APIKey, error) {
	rows, err := s.q.APIKeyList(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", err)
	}
	out := make([]APIKey, len(rows))
	for i, r := range rows {
		out[i] = apiKeyFromRow(r)
	}
	return out, nil
}

// APIKeyRevoke revokes a tenant's key; revoking twice keeps the first time.
func (s *Store) APIKeyRevoke(ctx context.Context, tenantID, id uuid.UUID) (APIKey, error) {
	row, err := s.q.APIKeyRevoke(ctx, queries.APIKeyRevokeParams{TenantID: tenantID, ID: id})
	if err != nil {
		return APIKey{}, notFound(err, "API key")
	}
	return apiKeyFromRow(row), nil
}

func apiKeyFromRow(r queries.APIKey) APIKey {
	scopes := make([]auth.Scope, len(r.Scopes))
	for i, s := range r.Scopes {
		scopes[i] = auth.Scope(s)
	}
	k := APIKey{
		TenantID: r.TenantID, ID: r.ID, Name: r.Name, Prefix: r.Prefix, Scopes: scopes,
		CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, RevokedAt: r.RevokedAt,
	}
	if r.CreatedBy.Valid {
		k.CreatedBy = &r.CreatedBy.UUID
	}
	return k
}
