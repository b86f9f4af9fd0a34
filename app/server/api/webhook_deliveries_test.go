package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// A webhook's delivery log keeps each result: a good delivery with the
// event it made and the run that started, then a forged one refused with
// why; the forged one does not hide the good one or its run, and a flood
// of refused results never pushes the accepted ones out of the log, which
// keeps the last store.WebhookDeliveryLog of each kind.
func TestWebhookDeliveryLogKeepsTheGoodOnesPastForgedOnes(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ctx := context.Background()
	testdb.Definition(t, b.store, b.tenantA.ID, "key: on-order\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\ntriggers:\n  - {event: order.placed}\n")
	_, hook := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "shop", "event": "order.placed"}`)
	secret, _ := hook["secret"].(string)
	url := b.srv.URL + "/hooks/" + b.tenantA.Slug + "/shop"
	now, err := b.store.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"id": "o-1"}`
	code, out := deliver(t, url, body, signed(secret, "msg_1", now, body))
	if code != http.StatusAccepted {
		t.Fatalf("good delivery = %d %s", code, out)
	}
	event := eventID(t, out)
	started, err := b.store.RunList(ctx, b.tenantA.ID, store.RunFilter{Definition: "on-order", Limit: 10})
	if err != nil || len(started) != 1 {
		t.Fatalf("runs = %+v, %v; want the one the delivery started", started, err)
	}
	forged := signed("whsec_"+strings.Repeat("A", 43)+"=", "msg_2", now, body)
	if code, out := deliver(t, url, body, forged); code != http.StatusUnauthorized {
		t.Fatalf("forged delivery = %d %s, want 401", code, out)
	}

	doc := loadOpenAPI(t)
	answers := newAnswerSchemas(t, doc)
	list := func(query string) []map[string]any {
		t.Helper()
		code, ct, got := b.rawCall(t, "GET", "/api/v1/webhooks/shop/deliveries"+query, b.keyA, "", "")
		answers.check(t, "GET /api/v1/webhooks/{id}/deliveries", code, ct, got)
		if code != http.StatusOK {
			t.Fatalf("deliveries%s = %d %v", query, code, got)
		}
		var out []map[string]any
		for _, d := range got.(map[string]any)["deliveries"].([]any) {
			out = append(out, d.(map[string]any))
		}
		return out
	}
	isGood := func(d map[string]any) bool {
		runs, _ := d["run_ids"].([]any)
		return d["result"] == "accepted" && d["outcome"] == "accepted" && d["status"] == 202.0 && d["event_id"] == event &&
			len(runs) == 1 && runs[0] == started[0].ID.String()
	}
	ds := list("")
	if len(ds) != 2 {
		t.Fatalf("deliveries = %v, want the forged one and the good one", ds)
	}
	if f := ds[0]; f["result"] != "refused" || f["outcome"] != "bad_signature" || f["reason"] != "bad_signature" || f["status"] != 401.0 || f["event_id"] != nil {
		t.Errorf("newest delivery = %v, want the forged one refused for its signature", f)
	}
	if !isGood(ds[1]) {
		t.Errorf("older delivery = %v, want the good one with event %s and run %s", ds[1], event, started[0].ID)
	}
	if ds[0]["seq"].(float64) <= ds[1]["seq"].(float64) {
		t.Errorf("seq does not order the log newest first: %v", ds)
	}
	if ds := list("?result=accepted"); len(ds) != 1 || !isGood(ds[0]) {
		t.Errorf("accepted deliveries = %v, want the good one", ds)
	}

	// Past the bound, refused results push out only older refused ones.
	for range store.WebhookDeliveryLog + 5 {
		if err := b.store.WebhookDelivered(ctx, b.tenantA.ID, "shop", store.Delivery{Outcome: "bad_signature", Refused: true, Reason: "bad_signature", Status: 401}); err != nil {
			t.Fatal(err)
		}
	}
	ds = list("?limit=500")
	if len(ds) != store.WebhookDeliveryLog+1 || !isGood(ds[len(ds)-1]) {
		t.Fatalf("after a flood: %d deliveries, the oldest %v; want %d refused and the good one", len(ds), ds[len(ds)-1], store.WebhookDeliveryLog)
	}
	if code, got := b.call(t, "GET", "/api/v1/webhooks/shop/deliveries", b.keyB, ""); code != http.StatusNotFound {
		t.Errorf("another tenant's key = %d %v, want 404", code, got)
	}
}
