package cli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/server/servertest"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// receiver is a loopback webhook receiver that keeps the webhook-ids it
// was sent.
type receiver struct {
	mu  sync.Mutex
	ids []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	r.mu.Lock()
	r.ids = append(r.ids, req.Header.Get("webhook-id"))
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

// Every subscription verb against a real server whose coordinator sends
// the deliveries to a loopback receiver.
func TestSubscriptionCommands(t *testing.T) {
	t.Parallel()
	pool, dbURL := testdb.SchemaURL(t)
	s := store.New(pool)
	log := slog.New(slog.DiscardHandler)
	coord := servertest.StartWorkers(t, pool, log, func(c *workers.Config) {
		c.Subscriptions.Allow = servertest.LoopbackAllow
		c.Subscriptions.PollEvery = 20 * time.Millisecond
	})
	ctx, cancel := context.WithCancel(context.Background())
	swept := make(chan struct{})
	go func() { defer close(swept); coord.Sweep(ctx) }() // sends the deliveries
	t.Cleanup(func() { cancel(); <-swept })
	srv := httptest.NewServer(server.New(server.Deps{Pool: pool, Store: s, Logger: log, API: true, Runs: coord.Runs,
		Secrets: servertest.TestBox(t), Subscriptions: coord.Subscriptions}))
	t.Cleanup(srv.Close)
	b := &applyBundle{store: s, tenant: testdb.Tenant(t, s, nil), dir: t.TempDir()}
	_, key := testdb.APIKey(t, s, b.tenant, nil)
	b.vars = map[string]string{"DUCTOR_URL": srv.URL, "DUCTOR_API_KEY": key, "DATABASE_URL": dbURL}
	rcv := &receiver{}
	hook := httptest.NewServer(rcv)
	t.Cleanup(hook.Close)

	sub := b.runJSON(t, "subscription", "create", hook.URL+"/in", "--event", "order.placed", "--event", "order.paid",
		"--filter", "event.total > 0.0", "--description", "shop")
	id, _ := sub["id"].(string)
	if id == "" || !strings.HasPrefix(sub["secret"].(string), "whsec_") || len(sub["events"].([]any)) != 2 || sub["filter_expr"] != "event.total > 0.0" {
		t.Fatalf("create printed %v", sub)
	}
	if got := b.runJSON(t, "subscription", "get", id); got["url"] != hook.URL+"/in" || got["secret"] != nil || got["description"] != "shop" {
		t.Errorf("get printed %v", got)
	}
	if l := b.runJSON(t, "subscription", "list"); len(l["subscriptions"].([]any)) != 1 {
		t.Errorf("list printed %v", l)
	}
	if out, _, err := b.run(t, "subscription", "list", "--output", "table"); err != nil || !strings.Contains(out, hook.URL+"/in") || !strings.Contains(out, "order.placed,order.paid") {
		t.Errorf("list --output table: %v %q", err, out)
	}

	out, _, err := b.run(t, "event", "order.placed", "--data", `{"total": 5.0}`)
	eventID := strings.TrimSpace(out)
	if err != nil || eventID == "" {
		t.Fatalf("event: %v %q", err, out)
	}
	var delivery string
	testwait.Eventually(t, 20*time.Second, "the event is delivered", func() bool {
		d := b.runJSON(t, "subscription", "deliveries", id)
		list, _ := d["deliveries"].([]any)
		if len(list) != 1 {
			return false
		}
		first := list[0].(map[string]any)
		delivery, _ = first["id"].(string)
		return first["status"] == "delivered" && first["event_id"] == eventID
	})
	if out, _, err := b.run(t, "subscription", "deliveries", id, "--output", "table"); err != nil || !strings.Contains(out, "delivered") || !strings.Contains(out, "204") {
		t.Errorf("deliveries --output table: %v %q", err, out)
	}

	if r := b.runJSON(t, "subscription", "redeliver", id, delivery); r["status"] != "pending" {
		t.Errorf("redeliver printed %v", r)
	}
	testwait.Eventually(t, 20*time.Second, "the redelivery reaches the receiver", func() bool { return len(rcv.got()) == 2 })
	if ids := rcv.got(); ids[0] != eventID || ids[1] != eventID {
		t.Errorf("webhook-ids %v, want the event's id %s twice", ids, eventID)
	}

	if r := b.runJSON(t, "subscription", "rotate-secret", id); r["secret"] == nil || r["secret"] == sub["secret"] || r["previous_secret_until"] == nil {
		t.Errorf("rotate-secret printed %v", r)
	}
	if r := b.runJSON(t, "subscription", "enable", id); r["disabled"] != false {
		t.Errorf("enable printed %v", r)
	}
	b.runJSON(t, "subscription", "delete", id)
	if _, _, err := b.run(t, "subscription", "get", id); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("get after delete: %v", err)
	}
	if _, _, err := b.run(t, "subscription", "create", hook.URL); err == nil || !strings.Contains(err.Error(), "--event") {
		t.Errorf("create without --event: %v", err)
	}
}
