package store_test

import (
	"context"
	"testing"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

func TestUserLoginIsByEmail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first, err := b.store.UserLogin(b.ctx, store.Identity{Issuer: "i", Subject: "1", Email: " Ann@Example.COM ", Name: "Ann"})
	if err != nil || first.Email != "ann@example.com" || first.LastLoginAt == nil {
		t.Fatalf("first login = %+v, %v", first, err)
	}
	again, err := b.store.UserLogin(b.ctx, store.Identity{Issuer: "i", Subject: "1", Email: "ann@example.com"})
	if err != nil || again.ID != first.ID || again.Name != "Ann" {
		t.Fatalf("second login = %+v, %v (want the same user, name kept)", again, err)
	}
	if _, err := b.store.UserLogin(b.ctx, store.Identity{Email: "not-an-email"}); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("bad email: %v", err)
	}
}

func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u, _ := b.store.UserEnsure(b.ctx, "s@example.com", "")
	token, err := b.store.SessionCreate(b.ctx, u.ID, "id-token")
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.store.SessionGet(b.ctx, token)
	if err != nil || s.User.ID != u.ID || s.CSRFToken == "" || s.IDToken != "id-token" {
		t.Fatalf("session = %+v, %v", s, err)
	}
	if _, err := b.store.DB().Exec(b.ctx, "UPDATE web_session SET expires_at = now() - interval '1 second'"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.SessionGet(b.ctx, token); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("expired session: %v", err)
	}
	if err := b.store.SessionDelete(b.ctx, token); err != nil {
		t.Fatal(err)
	}
}

func TestLoginAttemptIsTakenOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := store.LoginAttempt{State: "s", Nonce: "n", Verifier: "v", ReturnTo: "/x"}
	if err := b.store.LoginAttemptCreate(b.ctx, "tok", a); err != nil {
		t.Fatal(err)
	}
	got, err := b.store.LoginAttemptTake(b.ctx, "tok")
	if err != nil || got != a {
		t.Fatalf("take = %+v, %v", got, err)
	}
	if _, err := b.store.LoginAttemptTake(b.ctx, "tok"); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("second take: %v", err)
	}
}

func TestTheLastOwnerStays(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenant := testdb.Tenant(t, b.store, nil)
	// A tenant without owners may get members of any role.
	if _, err := b.store.MemberSet(b.ctx, tenant.ID, "v@example.com", auth.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.MemberSet(b.ctx, tenant.ID, "o@example.com", auth.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.MemberSet(b.ctx, tenant.ID, "o@example.com", auth.RoleAdmin); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("demoting the last owner: %v", err)
	}
	if err := b.store.MemberRemove(b.ctx, tenant.ID, "o@example.com"); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("removing the last owner: %v", err)
	}
	if _, err := b.store.MemberSet(b.ctx, tenant.ID, "v@example.com", auth.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if err := b.store.MemberRemove(b.ctx, tenant.ID, "o@example.com"); err != nil {
		t.Fatalf("removing one of two owners: %v", err)
	}
	if err := b.store.MemberRemove(b.ctx, tenant.ID, "o@example.com"); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("removing a non-member: %v", err)
	}
}

func TestAuditIsTenantScoped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, other := testdb.Tenant(t, b.store, nil), testdb.Tenant(t, b.store, nil)
	if err := b.store.AuditRecord(context.Background(), a.ID, "cli", "x.y", "t", map[string]any{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	got, err := b.store.AuditList(b.ctx, a.ID, 10)
	if err != nil || len(got) != 1 || got[0].Details["k"] != "v" {
		t.Fatalf("audit = %+v, %v", got, err)
	}
	if none, _ := b.store.AuditList(b.ctx, other.ID, 10); len(none) != 0 {
		t.Fatalf("another tenant sees %+v", none)
	}
}
