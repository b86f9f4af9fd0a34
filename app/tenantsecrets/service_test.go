package tenantsecrets_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/tenantsecrets"
	"github.com/ductor/ductor/app/testdb"
)

const (
	oldKey = "an-old-secret-key-of-at-least-32-characters"
	newKey = "a-new-secret-key-of-at-least-32-characters!"
)

func box(t *testing.T, current, previous string) *secrets.Box {
	t.Helper()
	b, err := secrets.NewKeyring(current, previous)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSetListValuesDelete(t *testing.T) {
	ctx := context.Background()
	st := store.New(testdb.Tx(t))
	a, b := testdb.Tenant(t, st, nil), testdb.Tenant(t, st, nil)
	svc := tenantsecrets.New(tenantsecrets.Config{Store: st, Box: box(t, newKey, "")})

	s, err := svc.Set(ctx, a.ID, "key:abc", "STRIPE_KEY", "payments", []byte("sk_live_1"))
	if err != nil || s.Version != 1 || s.CreatedBy != "key:abc" {
		t.Fatalf("set = %+v, %v", s, err)
	}
	if s, err = svc.Set(ctx, a.ID, "user:x@example.com", "STRIPE_KEY", "", []byte("sk_live_2")); err != nil || s.Version != 2 || s.Description != "payments" || s.UpdatedBy != "user:x@example.com" {
		t.Fatalf("rotate = %+v, %v", s, err)
	}
	var sealed []byte
	if err := st.DB().QueryRow(ctx, "SELECT value FROM tenant_secret WHERE tenant_id = $1", a.ID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("sk_live")) {
		t.Fatal("the stored value is not sealed")
	}
	vals, err := svc.Values(ctx, a.ID.String(), []string{"STRIPE_KEY", "MISSING"})
	if err != nil || len(vals) != 1 || vals["STRIPE_KEY"] != "sk_live_2" {
		t.Fatalf("values = %v, %v", vals, err)
	}
	if vals, _ := svc.Values(ctx, b.ID.String(), []string{"STRIPE_KEY"}); len(vals) != 0 {
		t.Fatalf("another tenant read the secret: %v", vals)
	}
	if got, _ := svc.Get(ctx, a.ID, "STRIPE_KEY"); got.LastUsedAt == nil {
		t.Errorf("last used at is not recorded")
	}
	if list, _ := svc.List(ctx, a.ID, "", 10); len(list) != 1 || list[0].Name != "STRIPE_KEY" {
		t.Errorf("list = %+v", list)
	}
	for _, bad := range []struct {
		name, value string
		code        apperr.Code
	}{{"1BAD", "v", apperr.Invalid}, {"has-dash", "v", apperr.Invalid}, {strings.Repeat("A", 65), "v", apperr.Invalid},
		{"EMPTY", "", apperr.Invalid}, {"BIG", strings.Repeat("v", tenantsecrets.MaxValueBytes+1), apperr.TooLarge}} {
		if _, err := svc.Set(ctx, a.ID, "cli", bad.name, "", []byte(bad.value)); !apperr.Is(err, bad.code) {
			t.Errorf("set %.10q: %v, want %s", bad.name, err, bad.code)
		}
	}
	if err := svc.Delete(ctx, a.ID, "cli", "STRIPE_KEY"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, a.ID, "cli", "STRIPE_KEY"); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("delete again: %v", err)
	}
	audit, _ := st.AuditList(ctx, a.ID, 10)
	var actions []string
	for _, e := range audit {
		actions = append(actions, e.Action+" "+e.Target)
	}
	if got := strings.Join(actions, ", "); got != "secret.delete STRIPE_KEY, secret.set STRIPE_KEY, secret.set STRIPE_KEY" {
		t.Errorf("audit = %s", got)
	}
	none := tenantsecrets.New(tenantsecrets.Config{Store: st})
	if _, err := none.Set(ctx, a.ID, "cli", "X", "", []byte("v")); !apperr.Is(err, apperr.Unavailable) {
		t.Errorf("without a key: %v", err)
	}
}

func TestRekey(t *testing.T) {
	ctx := context.Background()
	st := store.New(testdb.Tx(t))
	a := testdb.Tenant(t, st, nil)
	before := tenantsecrets.New(tenantsecrets.Config{Store: st, Box: box(t, oldKey, "")})
	if _, err := before.Set(ctx, a.ID, "cli", "TOKEN", "", []byte("t0ken")); err != nil {
		t.Fatal(err)
	}
	oldBox := box(t, oldKey, "")
	if _, err := st.WebhookCreate(ctx, store.Webhook{TenantID: a.ID, ID: "gh", Event: "push", Scheme: "standard",
		Secret: oldBox.Seal([]byte("whsec_1"), store.WebhookAAD(a.ID, "gh")), SecretHint: "whsec"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.WebhookRotate(ctx, a.ID, "gh", oldBox.Seal([]byte("whsec_2"), store.WebhookAAD(a.ID, "gh")), "whsec"); err != nil {
		t.Fatal(err)
	}

	ring := tenantsecrets.New(tenantsecrets.Config{Store: st, Box: box(t, newKey, oldKey)})
	if v, err := ring.Values(ctx, a.ID.String(), []string{"TOKEN"}); err != nil || v["TOKEN"] != "t0ken" {
		t.Fatalf("under the previous key: %v, %v", v, err)
	}
	got, err := ring.Rekey(ctx)
	if err != nil || got.Secrets != 1 || got.Webhooks != 1 {
		t.Fatalf("rekey = %+v, %v", got, err)
	}
	if again, err := ring.Rekey(ctx); err != nil || again.Secrets+again.Webhooks != 0 || again.Current != 2 {
		t.Errorf("rekey again = %+v, %v", again, err)
	}

	after := box(t, newKey, "")
	if v, err := tenantsecrets.New(tenantsecrets.Config{Store: st, Box: after}).Values(ctx, a.ID.String(), []string{"TOKEN"}); err != nil || v["TOKEN"] != "t0ken" {
		t.Fatalf("without the previous key: %v, %v", v, err)
	}
	w, err := st.WebhookGet(ctx, a.ID, "gh")
	if err != nil {
		t.Fatal(err)
	}
	for sealed, want := range map[string]string{string(w.Secret): "whsec_2", string(w.PreviousSecret): "whsec_1"} {
		if plain, err := after.Open([]byte(sealed), store.WebhookAAD(a.ID, "gh")); err != nil || string(plain) != want {
			t.Errorf("webhook secret after rekey: %q, %v; want %q", plain, err, want)
		}
	}
	if _, err := tenantsecrets.New(tenantsecrets.Config{Store: st, Box: box(t, strings.Repeat("z", 32), "")}).Rekey(ctx); err == nil {
		t.Errorf("a rekey under an unrelated key succeeded")
	}
}
