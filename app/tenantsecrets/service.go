// Package tenantsecrets is the tenant secret service: values a
// definition references by name and never contains (secret("NAME") in an
// http step, `secrets:` on a task step). Values are sealed at rest with
// package secrets, bound to the tenant and name, and only [Service.Values]
// opens them, for the step about to send them; metadata (name,
// description, version, who and when) is all anything else sees. Every
// change is written to the tenant's audit log in the transaction that
// makes it.
package tenantsecrets

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
)

// MaxValueBytes bounds a secret's value.
const MaxValueBytes = 64 << 10

// MaxDescription bounds a secret's description, in bytes.
const MaxDescription = 1000

// NamePattern is a secret's name, as the definition compiler checks it.
var NamePattern = expr.SecretNamePattern

// NameShape describes NamePattern in messages.
const NameShape = "[A-Za-z_][A-Za-z0-9_]{0,63}"

// Audit actions.
const (
	AuditSet    = "secret.set"
	AuditDelete = "secret.delete"
	AuditRekey  = "secret.rekey"
)

// Config is what the service needs.
type Config struct {
	Store *store.Store
	// Box seals and opens values; nil when the server has no
	// DUCTOR_SECRET_KEY, and then the service is unavailable.
	Box *secrets.Box
}

// Service sets, lists, deletes and resolves tenant secrets.
type Service struct{ cfg Config }

// New builds the service.
func New(cfg Config) *Service { return &Service{cfg: cfg} }

// CheckName refuses a name that is not a secret's.
func CheckName(name string) error {
	if !NamePattern.MatchString(name) {
		return apperr.New(apperr.Invalid, "a secret's name must match %s, not %q", NameShape, name)
	}
	return nil
}

func (s *Service) box() (*secrets.Box, error) {
	if s.cfg.Box == nil {
		return nil, apperr.New(apperr.Unavailable, "secrets need DUCTOR_SECRET_KEY, which seals them")
	}
	return s.cfg.Box, nil
}

// Set stores value under name, creating the secret or rotating it to the
// next version. An empty description keeps the one it had.
func (s *Service) Set(ctx context.Context, tenantID uuid.UUID, actor, name, description string, value []byte) (store.TenantSecret, error) {
	if err := CheckName(name); err != nil {
		return store.TenantSecret{}, err
	}
	switch {
	case len(value) == 0:
		return store.TenantSecret{}, apperr.New(apperr.Invalid, "a secret's value may not be empty")
	case len(value) > MaxValueBytes:
		return store.TenantSecret{}, apperr.New(apperr.TooLarge, "a secret's value is at most %d bytes, not %d", MaxValueBytes, len(value))
	case len(description) > MaxDescription:
		return store.TenantSecret{}, apperr.New(apperr.Unprocessable, "a secret's description is at most %d bytes", MaxDescription)
	}
	box, err := s.box()
	if err != nil {
		return store.TenantSecret{}, err
	}
	sealed := box.Seal(value, store.TenantSecretAAD(tenantID, name))
	var out store.TenantSecret
	err = s.cfg.Store.InTx(ctx, func(tx *store.Store) error {
		if out, err = tx.SecretPut(ctx, tenantID, name, description, sealed, actor); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, tenantID, actor, AuditSet, name, map[string]any{"version": out.Version})
	})
	return out, err
}

// Get returns a secret's metadata.
func (s *Service) Get(ctx context.Context, tenantID uuid.UUID, name string) (store.TenantSecret, error) {
	if err := CheckName(name); err != nil {
		return store.TenantSecret{}, err
	}
	return s.cfg.Store.SecretGet(ctx, tenantID, name)
}

// List lists secrets' metadata by name, after the given one.
func (s *Service) List(ctx context.Context, tenantID uuid.UUID, after string, limit int) ([]store.TenantSecret, error) {
	return s.cfg.Store.SecretList(ctx, tenantID, after, limit)
}

// Delete deletes a secret; steps that reference it then fail with
// secret_not_found.
func (s *Service) Delete(ctx context.Context, tenantID uuid.UUID, actor, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return s.cfg.Store.InTx(ctx, func(tx *store.Store) error {
		found, err := tx.SecretDelete(ctx, tenantID, name)
		if err != nil {
			return err
		}
		if !found {
			return apperr.New(apperr.NotFound, "secret %s not found", name)
		}
		return tx.AuditRecord(ctx, tenantID, actor, AuditDelete, name, nil)
	})
}

// Values opens the named secrets of the tenant for a step about to send
// them, by name; names that do not exist are left out (the step fails
// with secret_not_found naming them). tenantID is the run's tenant: no
// tenant reads another's secrets.
func (s *Service) Values(ctx context.Context, tenantID string, names []string) (map[string]string, error) {
	if len(names) == 0 {
		return map[string]string{}, nil
	}
	tid, err := uuid.Parse(tenantID)
	if err != nil {
		return nil, fmt.Errorf("tenant id %q: %w", tenantID, err)
	}
	box, err := s.box()
	if err != nil {
		return nil, err
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	sealed, err := s.cfg.Store.SecretValues(ctx, tid, names)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(sealed))
	for name, v := range sealed {
		plain, err := box.Open(v, store.TenantSecretAAD(tid, name))
		if err != nil {
			return nil, fmt.Errorf("secret %s does not open: was DUCTOR_SECRET_KEY changed without DUCTOR_SECRET_KEY_PREVIOUS?", name)
		}
		out[name] = string(plain)
	}
	return out, nil
}
