package testdb

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
)

// TenantOpts customises Tenant; nil fields take defaults.
type TenantOpts struct {
	Slug *string
	Tier *store.Tier
}

// Tenant creates a tenant with a unique slug.
func Tenant(tb testing.TB, s *store.Store, opts *TenantOpts) store.Tenant {
	tb.Helper()
	if opts == nil {
		opts = &TenantOpts{}
	}
	slug := "t-" + randomHex(5)
	if opts.Slug != nil {
		slug = *opts.Slug
	}
	tier := store.TierStandard
	if opts.Tier != nil {
		tier = *opts.Tier
	}
	t, err := s.TenantCreate(context.Background(), slug, "", tier)
	if err != nil {
		tb.Fatalf("factory tenant: %v", err)
	}
	return t
}

// APIKeyOpts customises APIKey; nil fields take defaults.
type APIKeyOpts struct {
	Name   *string
	Scopes []auth.Scope
}

// APIKey creates a key for the tenant and returns it with its secret.
func APIKey(tb testing.TB, s *store.Store, tenant store.Tenant, opts *APIKeyOpts) (store.APIKey, string) {
	tb.Helper()
	if opts == nil {
		opts = &APIKeyOpts{}
	}
	name := "test key"
	if opts.Name != nil {
		name = *opts.Name
	}
	scopes := opts.Scopes
	if scopes == nil {
		scopes = []auth.Scope{auth.ScopeAdmin}
	}
	k, secret, err := s.APIKeyCreate(context.Background(), tenant.ID, name, scopes)
	if err != nil {
		tb.Fatalf("factory API key: %v", err)
	}
	return k, secret
}

// Ptr returns a pointer to v, for option structs.
func Ptr[T any](v T) *T { return &v }

// Definition compiles a YAML definition and publishes it as the next
// version of its key for the tenant.
func Definition(tb testing.TB, s *store.Store, tenantID uuid.UUID, yaml string) store.DefinitionVersion {
	tb.Helper()
	c, err := definition.Compile([]byte(yaml), definition.FormatYAML)
	if err != nil {
		tb.Fatalf("factory definition: %v", err)
	}
	// Every definition a test publishes is one an editor would accept.
	if err := definition.ValidateSchema([]byte(yaml), definition.FormatYAML); err != nil {
		tb.Fatalf("factory definition: the JSON Schema refuses what the compiler accepts: %v", err)
	}
	v, _, err := s.DefinitionPublish(context.Background(), tenantID, store.Publication{
		Manifest: c.Manifest, ManifestHash: c.Hash, Source: yaml, SourceFormat: "yaml",
	})
	if err != nil {
		tb.Fatalf("factory definition: %v", err)
	}
	return v
}
