package pages_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/server/servertest"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// The subscriptions pages: an owner creates one and sees its secret
// once; an event's delivery shows in its log with its attempt (refused
// here by the SSRF guard, which lists no loopback); a viewer sees the
// pages and cannot change anything.
func TestSubscriptionPages(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	log := slog.New(slog.DiscardHandler)
	coord := servertest.StartWorkers(t, pool, log, nil)
	sendCtx, stopSending := context.WithCancel(context.Background())
	sent := make(chan struct{})
	go func() { defer close(sent); coord.Subscriptions.Run(sendCtx) }()
	t.Cleanup(func() { stopSending(); <-sent })
	s := store.New(pool)
	srv := httptest.NewServer(server.New(server.Deps{
		Pool: pool, Store: s, Logger: log, API: true, Web: true, Runs: coord.Runs, ValidateInput: httpx.NewInputValidator(),
		Secrets: servertest.TestBox(t), Subscriptions: coord.Subscriptions,
	}))
	t.Cleanup(srv.Close)
	tenant := testdb.Tenant(t, s, nil)
	base := srv.URL + "/t/" + tenant.Slug
	ctx := context.Background()
	owner, viewer := servertest.NewBrowserClient(t), servertest.NewBrowserClient(t)
	csrf := map[*servertest.Browser]string{}
	for br, m := range map[*servertest.Browser]struct {
		email string
		role  auth.Role
	}{owner: {"olga@t.example", auth.RoleOwner}, viewer: {"vera@t.example", auth.RoleViewer}} {
		if _, err := s.MemberSet(ctx, tenant.ID, m.email, m.role); err != nil {
			t.Fatal(err)
		}
		csrf[br] = servertest.SignInTo(t, s, srv.URL, br, m.email)
	}
	post := func(br *servertest.Browser, path string, form url.Values) servertest.Answer {
		body := url.Values{"csrf": {csrf[br]}}
		for k, v := range form {
			body[k] = v
		}
		return br.Post(base+path, body, nil)
	}
	a := post(owner, "/subscriptions", url.Values{"url": {"http://127.0.0.1:9/hook"}, "events": {"order.created, ductor.run.failed"}, "description": {"pager"}})
	if a.Status != http.StatusSeeOther {
		t.Fatalf("create = %d %.300s", a.Status, a.Body)
	}
	if page := owner.Get(srv.URL + a.Location); !strings.Contains(page.Body, "whsec_") || !strings.Contains(page.Body, "http://127.0.0.1:9/hook") {
		t.Errorf("after creating, the secret is not shown: %.300s", page.Body)
	}
	if page := owner.Get(srv.URL + a.Location); strings.Contains(page.Body, "whsec_") || !strings.Contains(page.Body, `id="secret-shown"`) {
		t.Errorf("reloading shows the secret again")
	}
	if a := post(owner, "/subscriptions", url.Values{"url": {"ftp://x"}, "events": {"a"}}); a.Status != http.StatusBadRequest || !strings.Contains(a.Body, "http or https") {
		t.Errorf("a bad URL = %d", a.Status)
	}
	subs, err := coord.Subscriptions.List(ctx, tenant.ID, [16]byte{}, 10)
	if err != nil || len(subs) != 1 {
		t.Fatalf("subscriptions = %v, %v", subs, err)
	}
	sub := "/subscriptions/" + subs[0].ID.String()
	if _, _, err := coord.Runs.Events.Publish(ctx, store.Event{TenantID: tenant.ID, Name: "order.created", Data: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if !testwait.Until(ctx, 20*time.Second, func() bool {
		return strings.Contains(viewer.Get(base+sub).Body, "refusing to connect")
	}) {
		t.Fatalf("the delivery log does not show the refused attempt: %.600s", viewer.Get(base+sub).Body)
	}
	if page := viewer.Get(base + sub); page.Status != 200 || !strings.Contains(page.Body, "order.created") || strings.Contains(page.Body, "Rotate secret") {
		t.Errorf("a viewer's subscription page = %d (offers to rotate: %v)", page.Status, strings.Contains(page.Body, "Rotate secret"))
	}
	if a := post(viewer, sub+"/rotate", nil); a.Status != http.StatusForbidden {
		t.Errorf("a viewer rotating = %d, want 403", a.Status)
	}
	if a := post(owner, sub+"/rotate", nil); a.Status != http.StatusSeeOther {
		t.Errorf("rotate = %d", a.Status)
	}
	if a := post(owner, sub+"/delete", nil); a.Status != http.StatusSeeOther {
		t.Errorf("delete = %d", a.Status)
	}
	if page := owner.Get(base + sub); page.Status != http.StatusNotFound {
		t.Errorf("the deleted subscription's page = %d, want 404", page.Status)
	}
}

// subscriptionsFixture gives the tenant a subscription with a delivery
// and another subscription to delete.
func subscriptionsFixture(t *testing.T, w webBundle, tenant store.Tenant) (sub, del, delivery uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	a, err := w.subs.Create(ctx, tenant.ID, subscriptions.Input{URL: "https://a.example/hook", Events: []string{"order.created"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.subs.Create(ctx, tenant.ID, subscriptions.Input{URL: "https://a.example/other", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := w.runs.Events.Publish(ctx, store.Event{TenantID: tenant.ID, Name: "order.created", Data: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := w.subs.Deliveries(ctx, tenant.ID, a.ID, 10)
	if err != nil || len(ds) != 1 || ds[0].EventID != e.ID {
		t.Fatalf("deliveries = %v, %v", ds, err)
	}
	// It was tried once and ran out, so it can be sent again.
	claimed, err := w.Store.SubscriptionDeliveriesClaim(ctx, 10, 10, time.Minute)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d deliveries, %v", len(claimed), err)
	}
	for _, c := range claimed {
		if _, err := w.Store.SubscriptionDeliveryFinish(ctx, store.SubscriptionOutcome{Status: "failed", Attempt: store.SubscriptionAttempt{
			TenantID: tenant.ID, DeliveryID: c.ID, Attempt: c.Attempts, StatusCode: 500,
		}}); err != nil {
			t.Fatal(err)
		}
	}
	return a.ID, b.ID, ds[0].ID
}
