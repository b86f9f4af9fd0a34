package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

func TestKeysFromTheDashboardWorkOnTheAPI(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug + "/settings/keys"
	a := f.request(f.alice, "POST", base, url.Values{"name": {"ci"}, "scope": {"runs:read"}}, nil)
	if a.Status != http.StatusSeeOther || !strings.HasPrefix(a.Location, base+"?created=") {
		t.Fatalf("create key = %d to %q, want a redirect to the list", a.Status, a.Location)
	}
	shown := f.request(f.alice, "GET", a.Location, nil, nil)
	secret := regexp.MustCompile(`<code id="new-key">(dk_\w+)</code>`).FindStringSubmatch(shown.Body)
	if shown.Status != http.StatusOK || secret == nil {
		t.Fatalf("after creating a key = %d, no secret shown: %s", shown.Status, shown.Body)
	}
	// Reloading shows the secret no more and creates nothing.
	again := f.request(f.alice, "GET", a.Location, nil, nil)
	if strings.Contains(again.Body, secret[1]) || !strings.Contains(again.Body, `id="key-shown"`) {
		t.Errorf("reloading after creating a key shows its secret again or says nothing")
	}
	if keys, _ := f.Store.APIKeyList(context.Background(), f.a.ID); len(keys) != 2 {
		t.Errorf("%d keys after one creation and a reload, want 2", len(keys))
	}
	if code, body := f.Do(t, "GET", "/api/v1/whoami", secret[1], nil); code != 200 || !strings.Contains(string(body), f.a.ID.String()) {
		t.Fatalf("whoami with the new key = %d %s", code, body)
	}
	if list := f.request(f.alice, "GET", base, nil, nil); strings.Contains(list.Body, secret[1]) {
		t.Fatalf("the key list shows the secret again")
	}
	if a := f.request(f.alice, "POST", base, url.Values{"name": {"none"}}, nil); a.Status != http.StatusBadRequest || !strings.Contains(a.Body, "at least one scope") {
		t.Errorf("key without scopes = %d", a.Status)
	}
}

func TestMemberChangesKeepAnOwnerAndAreAudited(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug + "/settings/members"
	steps := []struct {
		path   string
		form   url.Values
		status int
	}{
		{"/role", url.Values{"email": {alice}, "role": {"admin"}}, http.StatusConflict},        // the last owner
		{"/remove", url.Values{"email": {alice}}, http.StatusConflict},                         // the last owner
		{"", url.Values{"email": {"Carol@C.example"}, "role": {"admin"}}, http.StatusSeeOther}, // before her first login
		{"", url.Values{"email": {"carol@c.example"}, "role": {"viewer"}}, http.StatusConflict},
		{"/role", url.Values{"email": {victor}, "role": {"operator"}}, http.StatusSeeOther},
		{"/role", url.Values{"email": {"nobody@x.example"}, "role": {"viewer"}}, http.StatusNotFound},
		{"/remove", url.Values{"email": {walt}}, http.StatusSeeOther},
		{"/role", url.Values{"email": {victor}, "role": {"root"}}, http.StatusBadRequest},
	}
	for _, s := range steps {
		if a := f.request(f.alice, "POST", base+s.path, s.form, nil); a.Status != s.status {
			t.Errorf("POST members%s %v = %d, want %d", s.path, s.form, a.Status, s.status)
		}
	}
	// Carol, an admin now, may not make herself or anyone an owner.
	carol := servertest.NewBrowserClient(t)
	f.csrf[carol] = f.signIn(t, carol, "carol@c.example")
	if a := f.request(carol, "POST", base+"/role", url.Values{"email": {victor}, "role": {"owner"}}, nil); a.Status != http.StatusForbidden {
		t.Errorf("admin granting owner = %d, want 403", a.Status)
	}
	if a := f.request(carol, "POST", base+"/remove", url.Values{"email": {alice}}, nil); a.Status != http.StatusForbidden {
		t.Errorf("admin removing an owner = %d, want 403", a.Status)
	}
	entries, err := f.Store.AuditList(context.Background(), f.a.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Action+" "+e.Target+" by "+e.Actor)
	}
	want := []string{
		"member.remove walt@a.example by user:alice@a.example",
		"member.role victor@a.example by user:alice@a.example",
		"member.add carol@c.example by user:alice@a.example",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTierChangeIsForOwnersAndAudited(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	ctx := context.Background()
	if _, err := f.Store.MemberSet(ctx, f.a.ID, walt, auth.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	waltB := servertest.NewBrowserClient(t)
	f.csrf[waltB] = f.signIn(t, waltB, walt)
	path := "/t/" + f.a.Slug + "/settings/tier"
	if a := f.request(waltB, "POST", path, url.Values{"tier": {"bulk"}}, nil); a.Status != http.StatusForbidden {
		t.Errorf("admin changing the tier = %d, want 403", a.Status)
	}
	if a := f.request(f.alice, "POST", path, url.Values{"tier": {"gold"}}, nil); a.Status != http.StatusBadRequest {
		t.Errorf("unknown tier = %d, want 400", a.Status)
	}
	if a := f.request(f.alice, "POST", path, url.Values{"tier": {"bulk"}}, nil); a.Status != http.StatusSeeOther {
		t.Fatalf("owner changing the tier = %d", a.Status)
	}
	tenant, _ := f.Store.TenantGetByID(ctx, f.a.ID)
	audit := f.request(f.alice, "GET", "/t/"+f.a.Slug+"/settings/audit", nil, nil)
	if tenant.Tier != "bulk" || !strings.Contains(audit.Body, "tenant.tier") {
		t.Fatalf("tier %s; audit page %d: %s", tenant.Tier, audit.Status, audit.Body)
	}
	if a := f.request(f.victor, "GET", "/t/"+f.a.Slug+"/settings/audit", nil, nil); a.Status != http.StatusForbidden {
		t.Errorf("viewer reading the audit log = %d, want 403", a.Status)
	}
}

// An owner moves the tenant among tiers, but never to one that lifts a
// quota of its current tier's: that is an operator's to give.
func TestTierChangeCannotRaiseQuotas(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	ctx := context.Background()
	steps := func(n int64) store.QuotaChange { return store.QuotaChange{MonthlySteps: &n} }
	for name, n := range map[store.Tier]int64{"free": 10, "pro": 1000, "hobby": 5} {
		if _, err := f.Store.TierEnsure(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
		if err := f.Store.UsageTierQuotaSet(ctx, name, steps(n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Store.TenantSetTier(ctx, f.a.ID, "free"); err != nil {
		t.Fatal(err)
	}
	page := f.request(f.alice, "GET", "/t/"+f.a.Slug+"/settings", nil, nil)
	if !strings.Contains(page.Body, `value="hobby"`) || strings.Contains(page.Body, `value="pro"`) || strings.Contains(page.Body, `value="standard"`) {
		t.Errorf("the tier picker should offer hobby, not pro or the unlimited standard:\n%s", page.Body)
	}
	path := "/t/" + f.a.Slug + "/settings/tier"
	for _, up := range []string{"pro", "standard"} {
		if a := f.request(f.alice, "POST", path, url.Values{"tier": {up}}, nil); a.Status != http.StatusForbidden || !strings.Contains(a.Body, "monthly_steps") {
			t.Errorf("owner raising the quota through tier %s = %d: %s", up, a.Status, a.Body)
		}
	}
	if tenant, _ := f.Store.TenantGetByID(ctx, f.a.ID); tenant.Tier != "free" {
		t.Fatalf("a refused move left the tenant on %s", tenant.Tier)
	}
	if a := f.request(f.alice, "POST", path, url.Values{"tier": {"hobby"}}, nil); a.Status != http.StatusSeeOther {
		t.Fatalf("owner moving to a smaller tier = %d: %s", a.Status, a.Body)
	}
	if tenant, _ := f.Store.TenantGetByID(ctx, f.a.ID); tenant.Tier != "hobby" || tenant.QueueClass != store.TierStandard {
		t.Errorf("tenant on %s (%s), want hobby in the standard class", tenant.Tier, tenant.QueueClass)
	}
}
