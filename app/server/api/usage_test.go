package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// A tenant at its monthly run quota gets 429 quota_exceeded, naming the
// quota, its use and its limit, with Retry-After the start of next month;
// usage and whoami show the quota exceeded; another tenant is unaffected.
func TestUsageQuotaOverTheAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publish(t, noopManifest("one", "a"))
	one := int64(1)
	if err := b.runs.Usage.SetTenant(context.Background(), b.tenantA.ID, store.QuotaChange{MonthlyRuns: &one}); err != nil {
		t.Fatal(err)
	}
	code, body := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "one"}`)
	if code != 201 {
		t.Fatalf("first start %d %v", code, body)
	}
	b.waitStatus(t, body["id"].(string))
	req, _ := http.NewRequest("POST", b.srv.URL+"/api/v1/runs", strings.NewReader(`{"definition": "one"}`))
	req.Header.Set("Authorization", "Bearer "+b.keyA)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
	next := store.MonthStart(time.Now()).AddDate(0, 1, 0)
	if res.StatusCode != 429 || secs <= 0 || time.Duration(secs)*time.Second > time.Until(next)+time.Minute {
		t.Fatalf("second start: %d, Retry-After %q, want 429 until %s", res.StatusCode, res.Header.Get("Retry-After"), next)
	}
	code, body = b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "one"}`)
	e, _ := body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	if code != 429 || e["code"] != "quota_exceeded" || d["quota"] != "monthly_runs" || d["used"] != 1.0 || d["limit"] != 1.0 {
		t.Fatalf("refusal %d %v", code, body)
	}

	code, body = b.call(t, "GET", "/api/v1/usage?group_by=definition", b.keyA, "")
	total, _ := body["total"].(map[string]any)
	defs, _ := body["definitions"].([]any)
	if code != 200 || total["runs_started"] != 1.0 || total["runs_succeeded"] != 1.0 || total["steps"] != 1.0 || len(defs) != 1 {
		t.Fatalf("usage %d %v", code, body)
	}
	code, body = b.call(t, "GET", "/api/v1/whoami", b.keyA, "")
	quota, _ := body["quota"].(map[string]any)
	quotas, _ := quota["quotas"].([]any)
	runs, _ := quotas[1].(map[string]any)
	if code != 200 || runs["quota"] != "monthly_runs" || runs["state"] != "exceeded" {
		t.Fatalf("whoami %d %v", code, body)
	}
	if code, body = b.call(t, "GET", "/api/v1/usage", b.keyB, ""); code != 200 || body["total"].(map[string]any)["runs_started"] != 0.0 {
		t.Fatalf("another tenant's usage %d %v", code, body)
	}
	if code, _ = b.call(t, "GET", "/api/v1/usage?group_by=week", b.keyA, ""); code != 400 {
		t.Errorf("group_by=week: %d, want 400", code)
	}
	if code, _ = b.call(t, "GET", "/api/v1/usage?limit=5", b.keyA, ""); code != 422 {
		t.Errorf("an unknown parameter: %d, want 422", code)
	}
	_, reader := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Scopes: []auth.Scope{auth.ScopeRunsRead}})
	if code, _ = b.call(t, "GET", "/api/v1/usage", reader, ""); code != 403 {
		t.Errorf("usage without usage:read: %d, want 403", code)
	}
}
