package sdk_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/sdk"
)

// The new operations send the method, path, query and body the API
// documents, and decode its answers.
func TestUpgradesSecretsSubscriptionsAndUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	plan := `{"run_id": "r1", "from_version": 1, "to_version": 2, "dry_run": true, "applied": false,
		"plan": {"nodes": [{"ref": "pay", "outcome": "changed", "changes": ["with.expr"]}], "reruns": [{"ref": "pay", "type": "task", "fires_again": true}],
		"summary": {"kept": 2, "changed": 1}}}`
	f, c := fakeClient(t, nil,
		fakeAnswer{status: 200, body: plan},
		fakeAnswer{status: 202, body: `{"status": "accepted", "upgrade": ` + strings.Replace(plan, `"dry_run": true`, `"dry_run": false`, 1) + `}`},
		fakeAnswer{status: 201, body: `{"name": "CHAT_TOKEN", "description": "chat", "version": 1, "last_used_at": null}`},
		fakeAnswer{status: 200, body: `{"secrets": [{"name": "A", "version": 3}], "next_cursor": "n"}`},
		fakeAnswer{status: 200, body: `{"from": "2026-12-01", "to": "2027-01-01", "group_by": "definition", "total": {"steps": 3},
			"definitions": [{"definition": "orders", "steps": 3}], "quota": {"tier": "standard", "quotas": [{"quota": "monthly_steps", "used": 3, "limit": 100, "state": "ok"}]}}`},
		fakeAnswer{status: 201, body: `{"id": "s1", "url": "https://h/x", "events": ["*"], "secret": "whsec_x"}`},
		fakeAnswer{status: 200, body: `{"deliveries": [{"id": "d1", "status": "failed", "attempts": [{"attempt": 1, "status": 500, "latency_ms": 12}]}]}`},
		fakeAnswer{status: 202, body: `{"id": "d1", "status": "pending"}`},
	)
	up, err := c.UpgradeRun(ctx, "r1", sdk.UpgradeRun{Version: 2, DryRun: true})
	if err != nil || up.ToVersion != 2 || !up.DryRun || up.Plan.Nodes[0].Outcome != "changed" || up.Plan.Summary.Kept != 2 {
		t.Fatalf("UpgradeRun: %+v, %v", up, err)
	}
	re, err := c.RetryRun(ctx, "r1", sdk.RetryRun{Node: "pay", Version: 2})
	if err != nil || !re.Accepted || re.DryRun || !re.Plan.Reruns[0].FiresAgain {
		t.Fatalf("RetryRun: %+v, %v", re, err)
	}
	tn := c.Tenant()
	s, err := tn.PutSecret(ctx, "CHAT_TOKEN", "xoxb", "chat")
	if err != nil || !s.Created || s.Version != 1 || s.LastUsedAt != nil {
		t.Fatalf("PutSecret: %+v, %v", s, err)
	}
	page, err := tn.ListSecrets(ctx, sdk.Page{Limit: 10, Cursor: "c"})
	if err != nil || page.Secrets[0].Version != 3 || page.NextCursor != "n" {
		t.Fatalf("ListSecrets: %+v, %v", page, err)
	}
	u, err := tn.Usage(ctx, sdk.UsageQuery{From: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), GroupBy: "definition"})
	if err != nil || u.Total.Steps != 3 || u.Definitions[0].Definition != "orders" || u.Definitions[0].Steps != 3 || u.Quota.Quotas[0].Limit != 100 {
		t.Fatalf("Usage: %+v, %v", u, err)
	}
	sub, err := tn.CreateSubscription(ctx, sdk.SubscriptionRequest{URL: "https://h/x", Events: []string{"*"}})
	if err != nil || sub.Secret != "whsec_x" {
		t.Fatalf("CreateSubscription: %+v, %v", sub, err)
	}
	ds, err := tn.SubscriptionDeliveries(ctx, "s1", 5)
	if err != nil || ds[0].Attempts[0].Status != 500 {
		t.Fatalf("SubscriptionDeliveries: %+v, %v", ds, err)
	}
	if err := tn.Redeliver(ctx, "s1", "d1"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"POST /api/v1/runs/r1/upgrade?dry_run=true",
		"POST /api/v1/runs/r1/retry",
		"PUT /api/v1/secrets/CHAT_TOKEN",
		"GET /api/v1/secrets?cursor=c&limit=10",
		"GET /api/v1/usage?from=2026-12-01&group_by=definition&to=2027-01-01",
		"POST /api/v1/subscriptions",
		"GET /api/v1/subscriptions/s1/deliveries?limit=5",
		"POST /api/v1/subscriptions/s1/deliveries/d1/redeliver",
	}
	for i, r := range f.seen() {
		if got := r.Method + " " + r.URL.RequestURI(); got != want[i] {
			t.Errorf("request %d: %s, want %s", i, got, want[i])
		}
	}
}

// The bodies carry the documented fields only.
func TestUpgradeAndSecretBodies(t *testing.T) {
	t.Parallel()
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(raw))
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	c, err := sdk.New(srv.URL, "dk_test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _ = c.UpgradeRun(ctx, "r", sdk.UpgradeRun{Version: 3, DryRun: true})
	_, _ = c.RetryRun(ctx, "r", sdk.RetryRun{Node: "pay"})
	_, _ = c.Tenant().PutSecret(ctx, "A", "v", "")
	want := []string{`{"version":3}`, `{"node":"pay"}`, `{"value":"v"}`}
	if strings.Join(bodies, " ") != strings.Join(want, " ") {
		t.Errorf("bodies %v, want %v", bodies, want)
	}
}

// GetSecret reads where the secret is used.
func TestGetSecretReadsItsUses(t *testing.T) {
	t.Parallel()
	f, c := fakeClient(t, nil, fakeAnswer{status: 200, body: `{"name": "CHAT_TOKEN", "version": 2, "last_used_at": null,
		"used_by": [{"key": "notify", "version": 3}, {"key": "notify", "version": 1}]}`})
	s, err := c.Tenant().GetSecret(context.Background(), "CHAT_TOKEN")
	if err != nil || len(s.UsedBy) != 2 || s.UsedBy[0] != (sdk.SecretUse{Key: "notify", Version: 3}) {
		t.Fatalf("GetSecret: %+v, %v", s, err)
	}
	if r := f.seen()[0]; r.Method+" "+r.URL.RequestURI() != "GET /api/v1/secrets/CHAT_TOKEN" {
		t.Errorf("request: %s %s", r.Method, r.URL.RequestURI())
	}
}
