package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/server/servertest"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// refusedEvents are the tenant's ductor.webhook.refused events, oldest
// first.
func refusedEvents(t *testing.T, b *apiBundle, tenant uuid.UUID) []map[string]any {
	t.Helper()
	rows, err := b.pool.Query(context.Background(),
		`SELECT data FROM event WHERE tenant_id = $1 AND name = 'ductor.webhook.refused' ORDER BY created_at, id`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A flood of forged deliveries, split between two servers on one
// database, is reported by at most one ductor.webhook.refused event per
// webhook per window between them; the next refusal after the window is
// reported with the count of those suppressed, so that the events
// account for every refusal; another tenant's webhook is reported on its
// own, at once, and sees none of the first tenant's events.
func TestRefusedDeliveriesAreReportedAtMostOncePerWindow(t *testing.T) {
	t.Parallel()
	const window = 2 * time.Second
	var deps *server.Deps
	b := setupAPI(t, func(d *server.Deps) {
		d.AuthFailureBurst, d.AuthFailuresPerMinute, d.WebhookRefusedEvery = 5, 6, window
		deps = d
	})
	second := httptest.NewServer(server.New(*deps))
	t.Cleanup(second.Close)
	servers := []string{b.srv.URL, second.URL}

	_, hook := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "shop", "event": "order.placed"}`)
	if _, ok := hook["secret"].(string); !ok {
		t.Fatalf("create webhook = %v", hook)
	}
	tenantB := testdb.Tenant(t, b.store, nil)
	_, keyB := testdb.APIKey(t, b.store, tenantB, nil)
	if code, _ := b.call(t, "POST", "/api/v1/webhooks", keyB, `{"id": "shop", "event": "order.placed"}`); code != 201 {
		t.Fatalf("create tenant B's webhook = %d", code)
	}
	now, err := b.store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	body := `{"id": "o-1"}`
	forged := signed("whsec_"+strings.Repeat("A", 43)+"=", "msg_forged", now, body)
	path := "/hooks/" + b.tenantA.Slug + "/shop"

	// 1000 forged deliveries from eight addresses (one sending them
	// unsigned), half to each server.
	const flood = 1000
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := servertest.ClientFrom("127.0.1." + string(rune('1'+w)))
			headers := forged
			if w == 7 {
				headers = nil // unsigned: past its budget, refused before the webhook is read
			}
			for i := range flood / 8 {
				if code, _ := post(t, c, servers[i%2]+path, body, headers); code != 401 && code != 429 {
					t.Errorf("forged delivery = %d, want 401 or 429", code)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sent := flood

	events := refusedEvents(t, b, b.tenantA.ID)
	bound := 1 + int(elapsed/window)
	if len(events) == 0 || len(events) > bound {
		t.Fatalf("%d forged deliveries in %v made %d refused events, want 1 to %d", flood, elapsed, len(events), bound)
	}
	first := events[0]
	if first["webhook_id"] != "shop" || first["event"] != "order.placed" || first["remote_addr"] == "" ||
		first["at"] == "" || (first["reason"] != "bad_signature" && first["reason"] != "rate_limited") {
		t.Errorf("first refused event = %v", first)
	}

	// Tenant B's webhook is reported at once, within A's window.
	code, _ := post(t, servertest.ClientFrom("127.0.2.1"), b.srv.URL+"/hooks/"+tenantB.Slug+"/shop", body, forged)
	if code != 401 {
		t.Fatalf("forged delivery to tenant B = %d, want 401", code)
	}
	if got := refusedEvents(t, b, tenantB.ID); len(got) != 1 || got[0]["suppressed"] != 0.0 || got[0]["reason"] != "bad_signature" {
		t.Errorf("tenant B's refused events = %v, want one, nothing suppressed", got)
	}

	// After the window, a refusal on each server is reported with the
	// refusals suppressed, until every refusal is accounted for.
	for _, srv := range servers {
		n := len(refusedEvents(t, b, b.tenantA.ID))
		testwait.Eventually(t, 3*window, "a refusal after the window is reported", func() bool {
			post(t, servertest.ClientFrom("127.0.3.1"), srv+path, body, forged)
			sent++
			return len(refusedEvents(t, b, b.tenantA.ID)) > n
		})
	}
	events = refusedEvents(t, b, b.tenantA.ID)
	var accounted int
	for _, e := range events {
		n, _ := e["suppressed"].(float64)
		accounted += 1 + int(n)
	}
	if last := events[len(events)-1]; last["suppressed"] == 0.0 {
		t.Errorf("the last refused event suppressed nothing: %v", last)
	}
	if accounted != sent {
		t.Errorf("%d refused events account for %d refusals, want %d", len(events), accounted, sent)
	}
	for _, e := range refusedEvents(t, b, tenantB.ID) {
		if e["webhook_id"] != "shop" {
			t.Errorf("tenant B sees %v", e)
		}
	}
	var rows int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM event WHERE tenant_id = $1 AND name = 'ductor.webhook.refused'`, tenantB.ID).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("tenant B has %d refused events (%v), want 1", rows, err)
	}
}
