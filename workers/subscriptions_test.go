package workers_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// delivery is one request a test receiver got.
type delivery struct {
	at     time.Time
	header http.Header
	body   []byte
}

// receiver is a loopback webhook receiver answering each request with
// the next of its statuses (200 once they run out).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []delivery
	statuses []int
	hang     chan struct{} // when set, requests wait for it to close
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{at: time.Now(), header: req.Header.Clone(), body: body})
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		hang := r.hang
		r.mu.Unlock()
		if hang != nil {
			select {
			case <-hang:
			case <-req.Context().Done():
			}
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte("status " + http.StatusText(status)))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func (r *receiver) waitFor(t *testing.T, n int, within time.Duration) []delivery {
	t.Helper()
	if !testwait.Until(context.Background(), within, func() bool { return len(r.deliveries()) >= n }) {
		t.Fatalf("receiver got %d deliveries in %s, want %d", len(r.deliveries()), within, n)
	}
	return r.deliveries()
}

// verifyStandard checks a delivery's signature the way the Standard
// Webhooks specification describes it, independently of Ductor's code:
// HMAC-SHA256 keyed with the base64-decoded secret after whsec_, over
// "id.timestamp.body", base64, any of the space-separated v1 signatures.
func verifyStandard(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	m.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func testBox(t *testing.T) *secrets.Box {
	box, err := secrets.NewBox(strings.Repeat("k", 32))
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// withSubscriptions sets fast subscription settings for tests.
func withSubscriptions(t *testing.T, change func(*subscriptions.Config)) func(*workers.Config) {
	box := testBox(t)
	return func(c *workers.Config) {
		c.Subscriptions = subscriptions.Config{
			Secrets: box, Allow: loopback, Backoff: 200 * time.Millisecond, PollEvery: 20 * time.Millisecond, Timeout: 2 * time.Second,
		}
		if change != nil {
			change(&c.Subscriptions)
		}
	}
}

func (b testBundle) subscribe(t *testing.T, url string, events ...string) subscriptions.Created {
	t.Helper()
	c, err := b.coord.Subscriptions.Create(b.ctx, b.tenant.ID, subscriptions.Input{URL: url, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A failing run's ductor.run.failed reaches a subscription on a loopback
// receiver, signed so that an independent verifier accepts it.
func TestSubscriptionReceivesRunFailed(t *testing.T) {
	t.Parallel()
	b := setupWith(t, withSubscriptions(t, nil))
	rcv := newReceiver(t)
	sub := b.subscribe(t, rcv.URL, "ductor.run.failed")
	if !strings.HasPrefix(sub.Secret, "whsec_") {
		t.Fatalf("secret %q", sub.Secret)
	}
	testdb.Definition(t, b.store, b.tenant.ID, failingDoc("flaky"))
	id := b.start(t, "flaky", nil)
	b.waitTerminal(t, id)
	got := rcv.waitFor(t, 1, 30*time.Second)
	d := got[0]
	if !verifyStandard(sub.Secret, d.header, d.body) {
		t.Errorf("signature %q does not verify", d.header.Get("webhook-signature"))
	}
	if !strings.Contains(string(d.body), `"type":"ductor.run.failed"`) || !strings.Contains(string(d.body), id.String()) {
		t.Errorf("body %s", d.body)
	}
	var eventID string
	if err := b.pool.QueryRow(b.ctx, `SELECT id::text FROM event WHERE tenant_id = $1 AND name = 'ductor.run.failed'`, b.tenant.ID).Scan(&eventID); err != nil {
		t.Fatal(err)
	}
	if d.header.Get("webhook-id") != eventID {
		t.Errorf("webhook-id %q, want the event's id %s", d.header.Get("webhook-id"), eventID)
	}
}

// A receiver answering 500 twice then 200 gets three attempts with
// growing delays, all in the delivery log.
func TestSubscriptionRetriesWithGrowingDelays(t *testing.T) {
	t.Parallel()
	b := setupWith(t, withSubscriptions(t, nil))
	rcv := newReceiver(t, 500, 500, 200)
	sub := b.subscribe(t, rcv.URL, "order.created")
	if _, _, err := b.coord.Runs.Events.Publish(b.ctx, store.Event{TenantID: b.tenant.ID, Name: "order.created", Data: map[string]any{"n": 1.0}}); err != nil {
		t.Fatal(err)
	}
	got := rcv.waitFor(t, 3, 30*time.Second)
	first, second := got[1].at.Sub(got[0].at), got[2].at.Sub(got[1].at)
	if first < 150*time.Millisecond || second <= first {
		t.Errorf("delays %s then %s: want at least 150ms, growing", first, second)
	}
	for _, d := range got {
		if d.header.Get("webhook-id") != got[0].header.Get("webhook-id") {
			t.Errorf("webhook-id changed between attempts")
		}
	}
	var ds []subscriptions.Delivery
	if !testwait.Until(b.ctx, 10*time.Second, func() bool {
		var err error
		ds, err = b.coord.Subscriptions.Deliveries(b.ctx, b.tenant.ID, sub.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(ds) == 1 && ds[0].Status == "delivered"
	}) {
		t.Fatalf("deliveries = %+v", ds)
	}
	a := ds[0].Attempts
	if len(a) != 3 || a[0].StatusCode != 500 || a[1].StatusCode != 500 || a[2].StatusCode != 200 || a[2].ResponseExcerpt != "status OK" {
		t.Errorf("attempts = %+v", a)
	}
	// A manual redelivery sends it once more, with the same webhook-id.
	if err := b.coord.Subscriptions.Redeliver(b.ctx, b.tenant.ID, sub.ID, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	again := rcv.waitFor(t, 4, 10*time.Second)
	if again[3].header.Get("webhook-id") != got[0].header.Get("webhook-id") || !verifyStandard(sub.Secret, again[3].header, again[3].body) {
		t.Errorf("redelivery headers %v", again[3].header)
	}
}

// A receiver that hangs does not delay another subscription's deliveries
// beyond a small bound.
func TestHangingReceiverDelaysNoOneElse(t *testing.T) {
	t.Parallel()
	b := setupWith(t, withSubscriptions(t, func(c *subscriptions.Config) { c.Timeout = 20 * time.Second }))
	slow, fast := newReceiver(t), newReceiver(t)
	slow.hang = make(chan struct{})
	t.Cleanup(func() { close(slow.hang) })
	b.subscribe(t, slow.URL, "order.created")
	b.subscribe(t, fast.URL, "order.created")
	start := time.Now()
	for i := range 5 {
		if _, _, err := b.coord.Runs.Events.Publish(b.ctx, store.Event{TenantID: b.tenant.ID, Name: "order.created", Data: map[string]any{"i": float64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	fast.waitFor(t, 5, 5*time.Second)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the fast receiver's deliveries took %s behind a hanging one", took)
	}
	if n := len(slow.deliveries()); n != 1 {
		t.Errorf("the hanging receiver got %d requests at once, want 1", n)
	}
}

// A delivery whose sender died mid-send (its claim left to run out) is
// sent by another process, with the event's webhook-id; so is a system
// event committed by a process that died before dispatching it.
func TestDeliverySurvivesACrashedProcess(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	ctx := context.Background()
	box := testBox(t)
	cfg := subscriptions.Config{Secrets: box, Allow: loopback, Backoff: 200 * time.Millisecond, PollEvery: 20 * time.Millisecond, Timeout: time.Second}
	// The first process publishes and claims, then is gone.
	dead, err := workers.New(workers.Config{Pool: pool, Subscriptions: cfg})
	if err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t)
	sub, err := dead.Subscriptions.Create(ctx, tenant.ID, subscriptions.Input{URL: rcv.URL, Events: []string{"order.created", "ductor.run.failed"}})
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := dead.Runs.Events.Publish(ctx, store.Event{TenantID: tenant.ID, Name: "order.created", Data: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if ds, err := s.SubscriptionDeliveriesClaim(ctx, 10, 10, 500*time.Millisecond); err != nil || len(ds) != 1 {
		t.Fatalf("claim = %v, %v", ds, err)
	}
	// A transition it committed stored its system event, not dispatched.
	sysID := uuid.New()
	if _, err := s.SystemEventAdd(ctx, tenant.ID, sysID, "ductor.run.failed", map[string]any{"run_id": "r"}); err != nil {
		t.Fatal(err)
	}
	dead.Close()
	// The next process finds both.
	b := testBundle{ctx: ctx, pool: pool, store: s, tenant: tenant}
	b.coord = startWith(t, pool, roles{steps: true, config: func(c *workers.Config) { c.Subscriptions = cfg }})
	got := rcv.waitFor(t, 2, 30*time.Second)
	ids := map[string]bool{}
	for _, d := range got {
		ids[d.header.Get("webhook-id")] = true
		if !verifyStandard(sub.Secret, d.header, d.body) {
			t.Errorf("signature of %s does not verify", d.body)
		}
	}
	if !ids[e.ID.String()] || !ids[sysID.String()] {
		t.Errorf("webhook-ids %v, want %s and %s", ids, e.ID, sysID)
	}
}

// A subscription whose deliveries keep running out of time is disabled
// after DisableAfter of them in a row, with a ductor.subscription.disabled
// event; the SSRF guard refuses a receiver on loopback that
// DUCTOR_HTTP_ALLOW does not list, and the log says so.
func TestFailingSubscriptionIsDisabled(t *testing.T) {
	t.Parallel()
	b := setupWith(t, withSubscriptions(t, func(c *subscriptions.Config) {
		c.Allow, c.MaxAge, c.DisableAfter, c.Backoff = nil, 300*time.Millisecond, 2, 100*time.Millisecond
	}))
	rcv := newReceiver(t)
	sub := b.subscribe(t, rcv.URL, "order.created")
	for i := range 2 {
		if _, _, err := b.coord.Runs.Events.Publish(b.ctx, store.Event{TenantID: b.tenant.ID, Name: "order.created", Data: map[string]any{"i": float64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if !testwait.Until(b.ctx, 30*time.Second, func() bool {
		s, err := b.coord.Subscriptions.Get(b.ctx, b.tenant.ID, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s.DisabledAt != nil
	}) {
		t.Fatal("the subscription is still enabled")
	}
	if n := len(rcv.deliveries()); n != 0 {
		t.Errorf("the guard let %d deliveries through to loopback", n)
	}
	ds, err := b.coord.Subscriptions.Deliveries(b.ctx, b.tenant.ID, sub.ID, 10)
	if err != nil || len(ds) != 2 {
		t.Fatalf("deliveries = %v, %v", ds, err)
	}
	for _, d := range ds {
		if d.Status != "failed" || len(d.Attempts) == 0 || !strings.Contains(d.Attempts[0].Error, "refusing to connect") {
			t.Errorf("delivery %s: %+v", d.Status, d.Attempts)
		}
	}
	var n int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM event WHERE tenant_id = $1 AND name = 'ductor.subscription.disabled' AND data->>'subscription_id' = $2`,
		b.tenant.ID, sub.ID.String()).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d ductor.subscription.disabled events, %v", n, err)
	}
}

// One tenant's hanging receivers hold at most PerTenant senders: another
// tenant's deliveries go out at once.
func TestOneTenantsHangingReceiversDelayNoOtherTenant(t *testing.T) {
	t.Parallel()
	b := setupWith(t, withSubscriptions(t, func(c *subscriptions.Config) { c.Timeout, c.Senders, c.PerTenant = 20*time.Second, 3, 1 }))
	var slow []*receiver
	for range 3 {
		r := newReceiver(t)
		r.hang = make(chan struct{})
		t.Cleanup(func() { close(r.hang) })
		b.subscribe(t, r.URL, "order.created")
		slow = append(slow, r)
	}
	other := testdb.Tenant(t, b.store, nil)
	fast := newReceiver(t)
	if _, err := b.coord.Subscriptions.Create(b.ctx, other.ID, subscriptions.Input{URL: fast.URL, Events: []string{"order.created"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.coord.Runs.Events.Publish(b.ctx, store.Event{TenantID: b.tenant.ID, Name: "order.created", Data: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if !testwait.Until(b.ctx, 5*time.Second, func() bool { return len(slow[0].deliveries())+len(slow[1].deliveries())+len(slow[2].deliveries()) > 0 }) {
		t.Fatal("no slow receiver was called")
	}
	start := time.Now()
	if _, _, err := b.coord.Runs.Events.Publish(b.ctx, store.Event{TenantID: other.ID, Name: "order.created", Data: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	fast.waitFor(t, 1, 5*time.Second)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the other tenant's delivery took %s", took)
	}
	if n := len(slow[0].deliveries()) + len(slow[1].deliveries()) + len(slow[2].deliveries()); n != 1 {
		t.Errorf("the hanging tenant has %d requests in flight, want 1 (PerTenant)", n)
	}
}
