package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

type testBundle struct {
	ctx   context.Context
	store *store.Store
}

func setup(t *testing.T) testBundle {
	t.Helper()
	return testBundle{ctx: context.Background(), store: store.New(testdb.Tx(t))}
}

func TestTenantCreate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenant, err := b.store.TenantCreate(b.ctx, "acme", "", store.TierBulk)
	if err != nil {
		t.Fatal(err)
	}
	if tenant.Slug != "acme" || tenant.Name != "acme" || tenant.Tier != store.TierBulk || tenant.ID == uuid.Nil {
		t.Fatalf("tenant = %+v", tenant)
	}
	got, err := b.store.TenantGetBySlug(b.ctx, "acme")
	if err != nil || got.ID != tenant.ID {
		t.Fatalf("get by slug = %+v, %v", got, err)
	}
	if _, err := b.store.TenantCreate(b.ctx, "acme", "", store.TierStandard); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("duplicate slug: %v, want Conflict", err)
	}
}

func TestTenantCreateValidates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.store.TenantCreate(b.ctx, "Bad Slug", "", store.TierStandard); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("bad slug: %v", err)
	}
	if _, err := b.store.TenantCreate(b.ctx, "ok", "", store.Tier("gold")); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("bad tier: %v", err)
	}
	if _, err := b.store.TenantGetBySlug(b.ctx, "missing"); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("missing tenant: %v", err)
	}
}

func TestTenantSetTier(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenant := testdb.Tenant(t, b.store, nil)
	got, err := b.store.TenantSetTier(b.ctx, tenant.ID, store.TierInteractive)
	if err != nil || got.Tier != store.TierInteractive {
		t.Fatalf("set tier = %+v, %v", got, err)
	}
}

func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenant := testdb.Tenant(t, b.store, nil)
	key, secret := testdb.APIKey(t, b.store, tenant, &testdb.APIKeyOpts{Scopes: []auth.Scope{auth.ScopeRunsRead}})
	if key.Prefix != auth.PrefixOf(secret) || key.LastUsedAt != nil {
		t.Fatalf("new key = %+v", key)
	}
	hash, err := checkKey(b.store, b.ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.store.APIKeyAuthenticate(b.ctx, hash)
	if err != nil || got.ID != key.ID || got.TenantID != tenant.ID {
		t.Fatalf("authenticate = %+v, %v", got, err)
	}
	list, err := b.store.APIKeyList(b.ctx, tenant.ID)
	if err != nil || len(list) != 1 || list[0].LastUsedAt == nil {
		t.Fatalf("list after use = %+v, %v (want last use recorded)", list, err)
	}
	if _, err := b.store.APIKeyRevoke(b.ctx, tenant.ID, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.APIKeyAuthenticate(b.ctx, hash); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("revoked key: %v, want Unauthorized", err)
	}
}

func TestAPIKeyUnknownIsUnauthorized(t *testing.T) {
	t.Parallel()
	b := setup(t)
	kr, err := b.store.Keyring(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kr.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.APIKeyAuthenticate(b.ctx, k.Hash); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("unknown key: %v, want Unauthorized", err)
	}
}

func TestAPIKeysAreTenantScoped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := testdb.Tenant(t, b.store, nil)
	other := testdb.Tenant(t, b.store, nil)
	key, _ := testdb.APIKey(t, b.store, a, nil)
	if list, _ := b.store.APIKeyList(b.ctx, other.ID); len(list) != 0 {
		t.Fatalf("tenant B lists tenant A's keys: %+v", list)
	}
	if _, err := b.store.APIKeyRevoke(b.ctx, other.ID, key.ID); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("tenant B revoking A's key: %v, want NotFound", err)
	}
}

// checkKey checks a key with the deployment's keyring and returns its hash.
func checkKey(s *store.Store, ctx context.Context, secret string) ([]byte, error) {
	kr, err := s.Keyring(ctx)
	if err != nil {
		return nil, err
	}
	p, err := kr.Check(secret)
	return p.Hash, err
}
