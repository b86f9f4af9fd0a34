package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/store"
)

func TestRetentionChangeIsForOwnersAndAudited(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	ctx := context.Background()
	page := f.request(f.alice, "GET", "/t/"+f.a.Slug+"/settings", nil, nil)
	if !strings.Contains(page.Body, `id="retention">30d<`) {
		t.Errorf("settings page does not show the default retention of 30 days:\n%s", page.Body)
	}
	path := "/t/" + f.a.Slug + "/settings/retention"
	if a := f.request(f.victor, "POST", path, url.Values{"retention": {"1d"}}, nil); a.Status != http.StatusForbidden {
		t.Errorf("viewer changing the retention = %d, want 403", a.Status)
	}
	if a := f.request(f.alice, "POST", path, url.Values{"retention": {"soon"}}, nil); a.Status != http.StatusBadRequest {
		t.Errorf("retention soon = %d, want 400", a.Status)
	}
	if a := f.request(f.alice, "POST", path, url.Values{"retention": {"7d"}}, nil); a.Status != http.StatusSeeOther {
		t.Fatalf("owner changing the retention = %d", a.Status)
	}
	tenant, _ := f.Store.TenantGetByID(ctx, f.a.ID)
	audit := f.request(f.alice, "GET", "/t/"+f.a.Slug+"/settings/audit", nil, nil)
	if tenant.Retention != 7*24*time.Hour || !strings.Contains(audit.Body, "tenant.retention") {
		t.Fatalf("retention %s; audit page %d: %s", tenant.Retention, audit.Status, audit.Body)
	}
	if a := f.request(f.alice, "POST", path, url.Values{"retention": {"0"}}, nil); a.Status != http.StatusSeeOther {
		t.Fatalf("owner keeping runs forever = %d", a.Status)
	}
	if tenant, _ = f.Store.TenantGetByID(ctx, f.a.ID); tenant.Retention != 0 {
		t.Errorf("retention %s after 0, want forever", tenant.Retention)
	}
}

func TestParseRetention(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"0": 0, "forever": 0, "720h": 720 * time.Hour, "30d": 30 * 24 * time.Hour, "3s": 3 * time.Second} {
		if got, err := store.ParseRetention(in); err != nil || got != want {
			t.Errorf("ParseRetention(%q) = %s, %v; want %s", in, got, err, want)
		}
		if want > 0 {
			if back, _ := store.ParseRetention(store.FormatRetention(want)); back != want {
				t.Errorf("FormatRetention(%s) does not read back", want)
			}
		}
	}
	for _, bad := range []string{"", "-1h", "1.5s", "500ms", "xd", "soon"} {
		if _, err := store.ParseRetention(bad); err == nil {
			t.Errorf("ParseRetention(%q) accepted", bad)
		}
	}
}
