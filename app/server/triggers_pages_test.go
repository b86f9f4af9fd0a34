package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/webhook"
)

// triggersFixture gives the tenant two schedules (sched-a, sched-del) of
// "orders" and two webhooks (hook-a, hook-del).
func triggersFixture(t *testing.T, w webBundle, tenant store.Tenant) {
	t.Helper()
	ctx := context.Background()
	for _, id := range []string{"sched-a", "sched-del"} {
		_, err := w.runs.CreateSchedule(ctx, store.Schedule{
			TenantID: tenant.ID, ID: id, Definition: "orders", Spec: schedule.Spec{Interval: schedule.Duration(time.Hour)},
			Overlap: schedule.OverlapSkip, CatchupWindow: time.Hour,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	box := testBox(t)
	for _, id := range []string{"hook-a", "hook-del"} {
		secret := webhook.NewSecret()
		if _, err := w.store.WebhookCreate(ctx, store.Webhook{TenantID: tenant.ID, ID: id, Event: "shop.order", Scheme: "standard",
			Secret: box.Seal([]byte(secret), store.WebhookAAD(tenant.ID, id)), SecretHint: webhook.Hint(secret)}); err != nil {
			t.Fatal(err)
		}
	}
}

// The dashboard lists, creates, pauses, triggers, inspects and deletes
// schedules, and creates webhooks showing the secret once; a viewer sees
// but cannot change them.
func TestTriggerPages(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug
	if a := f.request(f.alice, "GET", base+"/schedules", nil, nil); a.status != 200 || !strings.Contains(a.body, "sched-a") || !strings.Contains(a.body, "every 1h") {
		t.Fatalf("schedules page = %d", a.status)
	}
	a := f.request(f.alice, "POST", base+"/schedules", url.Values{"id": {"daily"}, "definition": {"orders"}, "cron": {"0 6 * * *"}, "timezone": {"Europe/Paris"}, "input": {"{}"}}, nil)
	if a.status != http.StatusSeeOther {
		t.Fatalf("create = %d %s", a.status, a.body)
	}
	if a := f.request(f.alice, "GET", base+"/schedules/daily", nil, nil); a.status != 200 || !strings.Contains(a.body, "0 6 * * * Europe/Paris") {
		t.Fatalf("the new schedule's page = %d", a.status)
	}
	if a := f.request(f.alice, "POST", base+"/schedules", url.Values{"definition": {"orders"}, "interval": {"1ms"}}, nil); a.status != 422 || !strings.Contains(a.body, "at least 1s") {
		t.Errorf("a 1ms interval = %d", a.status)
	}
	if a := f.request(f.alice, "POST", base+"/schedules/daily/trigger", nil, nil); a.status != 200 || !strings.Contains(a.body, "running, run ") {
		t.Errorf("run now = %d", a.status)
	}
	if a := f.request(f.alice, "POST", base+"/schedules/daily/pause", url.Values{"paused": {"true"}, "note": {"freeze week"}}, nil); a.status != http.StatusSeeOther {
		t.Errorf("pause = %d", a.status)
	}
	a = f.request(f.alice, "GET", base+"/schedules/daily", nil, nil)
	if a.status != 200 || !strings.Contains(a.body, "freeze week") || !strings.Contains(a.body, "Unpause") || !strings.Contains(a.body, "/runs/") {
		t.Errorf("pause = %d", a.status)
	}
	a = f.request(f.alice, "POST", base+"/webhooks", url.Values{"id": {"shop"}, "event": {"order.placed"}, "scheme": {"github"}}, nil)
	if a.status != http.StatusCreated || !strings.Contains(a.body, "whsec_") || !strings.Contains(a.body, "/hooks/"+f.a.Slug+"/shop") {
		t.Errorf("create webhook = %d", a.status)
	}
	if a := f.request(f.alice, "GET", base+"/webhooks", nil, nil); strings.Contains(a.body, "new-secret") {
		t.Errorf("the secret is shown again")
	}
	if a := f.request(f.victor, "POST", base+"/schedules/daily/pause", url.Values{"paused": {"false"}}, nil); a.status != 403 {
		t.Errorf("a viewer unpausing = %d, want 403", a.status)
	}
	if a := f.request(f.victor, "POST", base+"/webhooks/shop/rotate", nil, nil); a.status != 403 {
		t.Errorf("a viewer rotating = %d, want 403", a.status)
	}
	if a := f.request(f.victor, "GET", base+"/schedules/daily", nil, nil); a.status != 200 || strings.Contains(a.body, "trigger-now") || strings.Contains(a.body, "delete-schedule") {
		t.Errorf("a viewer's schedule page = %d, offers run now or delete", a.status)
	}
	if a := f.request(f.victor, "POST", base+"/schedules/daily/delete", nil, nil); a.status != 403 {
		t.Errorf("a viewer deleting = %d, want 403", a.status)
	}
	if a := f.request(f.alice, "POST", base+"/schedules/daily/delete", nil, nil); a.status != http.StatusSeeOther || a.location != base+"/schedules" {
		t.Errorf("delete = %d to %q", a.status, a.location)
	}
	if a := f.request(f.alice, "GET", base+"/schedules/daily", nil, nil); a.status != 404 {
		t.Errorf("the deleted schedule's page = %d, want 404", a.status)
	}
}

// An action whose input no longer fits the republished definition's
// schema shows on the schedule's page as not started, with why.
func TestSchedulePageShowsAnActionThatDidNotStart(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug
	testdb.Definition(t, f.store, f.a.ID, "key: greet\nsteps:\n  - {ref: a, type: transform, with: {expr: 'input'}}\n")
	a := f.request(f.alice, "POST", base+"/schedules", url.Values{"id": {"greet-daily"}, "definition": {"greet"}, "interval": {"24h"}, "input": {`{"n": 1}`}}, nil)
	if a.status != http.StatusSeeOther {
		t.Fatalf("create = %d %s", a.status, a.body)
	}
	testdb.Definition(t, f.store, f.a.ID, "key: greet\ninput_schema: {type: object, required: [name]}\nsteps:\n  - {ref: a, type: transform, with: {expr: 'input'}}\n")
	a = f.request(f.alice, "POST", base+"/schedules/greet-daily/trigger", nil, nil)
	if a.status != 200 || !strings.Contains(a.body, "not_started") || !strings.Contains(a.body, `class="error small action-error"`) ||
		!strings.Contains(a.body, "missing property &#39;name&#39;") {
		t.Errorf("run now = %d, want the action not started with the schema's complaint:\n%s", a.status, a.body)
	}
}
