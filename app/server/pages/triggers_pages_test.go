package pages_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/server/servertest"

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
		_, err := w.runs.Schedules.Create(ctx, store.Schedule{
			TenantID: tenant.ID, ID: id, Definition: "orders", Spec: schedule.Spec{Interval: schedule.Duration(time.Hour)},
			Overlap: schedule.OverlapSkip, CatchupWindow: time.Hour,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	box := servertest.TestBox(t)
	for _, id := range []string{"hook-a", "hook-del"} {
		secret := webhook.NewSecret()
		if _, err := w.Store.WebhookCreate(ctx, store.Webhook{TenantID: tenant.ID, ID: id, Event: "shop.order", Scheme: "standard",
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
	if a := f.request(f.alice, "GET", base+"/schedules", nil, nil); a.Status != 200 || !strings.Contains(a.Body, "sched-a") || !strings.Contains(a.Body, "every 1h") {
		t.Fatalf("schedules page = %d", a.Status)
	}
	a := f.request(f.alice, "POST", base+"/schedules", url.Values{"id": {"daily"}, "definition": {"orders"}, "cron": {"0 6 * * *"}, "timezone": {"Europe/Paris"}, "input": {"{}"}}, nil)
	if a.Status != http.StatusSeeOther {
		t.Fatalf("create = %d %s", a.Status, a.Body)
	}
	if a := f.request(f.alice, "GET", base+"/schedules/daily", nil, nil); a.Status != 200 || !strings.Contains(a.Body, "0 6 * * * Europe/Paris") || !strings.Contains(a.Body, `id="schedule-definition" href="`+base+`/definitions/orders/edit"`) {
		t.Fatalf("the new schedule's page = %d", a.Status)
	}
	if a := f.request(f.alice, "POST", base+"/schedules", url.Values{"definition": {"orders"}, "interval": {"1ms"}}, nil); a.Status != 422 || !strings.Contains(a.Body, "at least 1s") {
		t.Errorf("a 1ms interval = %d", a.Status)
	}
	if a := f.request(f.alice, "POST", base+"/schedules/daily/trigger", nil, nil); a.Status != http.StatusSeeOther {
		t.Errorf("run now = %d, want a redirect", a.Status)
	} else if page := f.request(f.alice, "GET", a.Location, nil, nil); !strings.Contains(page.Body, "running, run ") {
		t.Errorf("after run now the schedule does not say what it did")
	}
	if a := f.request(f.alice, "POST", base+"/schedules/daily/pause", url.Values{"paused": {"true"}, "note": {"freeze week"}}, nil); a.Status != http.StatusSeeOther {
		t.Errorf("pause = %d", a.Status)
	}
	a = f.request(f.alice, "GET", base+"/schedules/daily", nil, nil)
	if a.Status != 200 || !strings.Contains(a.Body, "freeze week") || !strings.Contains(a.Body, "Unpause") || !strings.Contains(a.Body, "/runs/") {
		t.Errorf("pause = %d", a.Status)
	}
	a = f.request(f.alice, "POST", base+"/webhooks", url.Values{"id": {"shop"}, "event": {"order.placed"}, "scheme": {"github"}}, nil)
	if a.Status != http.StatusSeeOther {
		t.Errorf("create webhook = %d, want a redirect", a.Status)
	}
	if page := f.request(f.alice, "GET", a.Location, nil, nil); !strings.Contains(page.Body, "whsec_") || !strings.Contains(page.Body, "/hooks/"+f.a.Slug+"/shop") {
		t.Errorf("after creating a webhook its secret is not shown")
	}
	if page := f.request(f.alice, "GET", a.Location, nil, nil); strings.Contains(page.Body, "whsec_") || !strings.Contains(page.Body, `id="secret-shown"`) {
		t.Errorf("reloading shows the webhook's secret again")
	}
	if a := f.request(f.alice, "GET", base+"/webhooks", nil, nil); strings.Contains(a.Body, "new-secret") {
		t.Errorf("the secret is shown again")
	}
	if a := f.request(f.victor, "POST", base+"/schedules/daily/pause", url.Values{"paused": {"false"}}, nil); a.Status != 403 {
		t.Errorf("a viewer unpausing = %d, want 403", a.Status)
	}
	if a := f.request(f.victor, "POST", base+"/webhooks/shop/rotate", nil, nil); a.Status != 403 {
		t.Errorf("a viewer rotating = %d, want 403", a.Status)
	}
	if a := f.request(f.victor, "GET", base+"/schedules/daily", nil, nil); a.Status != 200 || strings.Contains(a.Body, "trigger-now") || strings.Contains(a.Body, "delete-schedule") {
		t.Errorf("a viewer's schedule page = %d, offers run now or delete", a.Status)
	}
	if a := f.request(f.victor, "POST", base+"/schedules/daily/delete", nil, nil); a.Status != 403 {
		t.Errorf("a viewer deleting = %d, want 403", a.Status)
	}
	if a := f.request(f.alice, "POST", base+"/schedules/daily/delete", nil, nil); a.Status != http.StatusSeeOther || a.Location != base+"/schedules" {
		t.Errorf("delete = %d to %q", a.Status, a.Location)
	}
	if a := f.request(f.alice, "GET", base+"/schedules/daily", nil, nil); a.Status != 404 {
		t.Errorf("the deleted schedule's page = %d, want 404", a.Status)
	}
}

// An action whose input no longer fits the republished definition's
// schema shows on the schedule's page as not started, with why.
func TestSchedulePageShowsAnActionThatDidNotStart(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug
	testdb.Definition(t, f.Store, f.a.ID, "key: greet\nsteps:\n  - {ref: a, type: transform, with: {expr: 'input'}}\n")
	a := f.request(f.alice, "POST", base+"/schedules", url.Values{"id": {"greet-daily"}, "definition": {"greet"}, "interval": {"24h"}, "input": {`{"n": 1}`}}, nil)
	if a.Status != http.StatusSeeOther {
		t.Fatalf("create = %d %s", a.Status, a.Body)
	}
	testdb.Definition(t, f.Store, f.a.ID, "key: greet\ninput_schema: {type: object, required: [name]}\nsteps:\n  - {ref: a, type: transform, with: {expr: 'input'}}\n")
	a = f.request(f.alice, "POST", base+"/schedules/greet-daily/trigger", nil, nil)
	if a.Status != http.StatusSeeOther {
		t.Fatalf("run now = %d, want a redirect to the schedule (post/redirect/get)", a.Status)
	}
	a = f.request(f.alice, "GET", a.Location, nil, nil)
	if a.Status != 200 || !strings.Contains(a.Body, "not_started") || !strings.Contains(a.Body, `class="error small action-error"`) ||
		!strings.Contains(a.Body, "missing property &#39;name&#39;") {
		t.Errorf("run now = %d, want the action not started with the schema's complaint:\n%s", a.Status, a.Body)
	}
}

// An event trigger's runs started and its last error (a filter that
// failed on an event, which started nothing) show in the definition's
// API answer and on its page.
func TestEventTriggerErrorsAreShown(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	ctx := context.Background()
	testdb.Definition(t, f.Store, f.a.ID, "key: on-total\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\ntriggers:\n  - {event: order.totaled, filter_expr: 'event.total > 0.0'}\n")
	for _, data := range []any{map[string]any{"count": 3}, map[string]any{"total": 12.5}} {
		if _, _, err := f.runs.Events.Publish(ctx, store.Event{TenantID: f.a.ID, Name: "order.totaled", Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	_, secret := testdb.APIKey(t, f.Store, f.a, nil)
	req, _ := http.NewRequest("GET", f.Server.URL+"/api/v1/definitions/on-total", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	a := servertest.Answer{Status: res.StatusCode, Body: string(raw)}
	var got struct {
		EventTriggers []struct {
			Event     string `json:"event"`
			LastError string `json:"last_error"`
			Started   int    `json:"started"`
		} `json:"event_triggers"`
	}
	if err := json.Unmarshal([]byte(a.Body), &got); a.Status != 200 || err != nil || len(got.EventTriggers) != 1 {
		t.Fatalf("GET the definition = %d %s", a.Status, a.Body)
	}
	if tr := got.EventTriggers[0]; tr.Started != 1 || !strings.Contains(tr.LastError, "total") {
		t.Errorf("event trigger = %+v, want 1 run started and the failed filter's error", tr)
	}
	page := f.request(f.alice, "GET", "/t/"+f.a.Slug+"/definitions/on-total/edit", nil, nil)
	if page.Status != 200 || !strings.Contains(page.Body, `id="event-triggers"`) || !strings.Contains(page.Body, "order.totaled") || !strings.Contains(page.Body, "no such key") {
		t.Errorf("the definition page = %d, want its event trigger with the last error", page.Status)
	}
}
