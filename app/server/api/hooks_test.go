package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/webhook"
)

// post sends a delivery with the client and returns the status and the
// Retry-After header.
func post(t *testing.T, client *http.Client, url, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, res.Header.Get("Retry-After")
}

// hookRowVersion is the transaction that last wrote the webhook's row.
func hookRowVersion(t *testing.T, b *apiBundle, id string) string {
	t.Helper()
	var xmin string
	err := b.pool.QueryRow(context.Background(), `SELECT xmin::text FROM webhook WHERE tenant_id = $1 AND id = $2`, b.tenantA.ID, id).Scan(&xmin)
	if err != nil {
		t.Fatal(err)
	}
	return xmin
}

// Forged deliveries write nothing past the first, are limited per client
// address and webhook (429 with Retry-After), and a sender with the
// secret keeps being served while a flood of forgeries goes on.
func TestForgedWebhookDeliveriesAreCheapAndLimited(t *testing.T) {
	t.Parallel()
	b := setupAPI(t, func(d *server.Deps) { d.AuthFailureBurst, d.AuthFailuresPerMinute = 4, 6 })
	testdb.Definition(t, b.store, b.tenantA.ID, "key: on-hook\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\ntriggers:\n  - {event: order.placed}\n")
	_, hook := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "shop", "event": "order.placed"}`)
	secret := hook["secret"].(string)
	url := b.srv.URL + "/hooks/" + b.tenantA.Slug + "/shop"
	now, err := b.store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	body := `{"id": "o-1"}`
	forged := signed("whsec_"+strings.Repeat("A", 43)+"=", "msg_forged", now, body)

	// Four forgers, four failures each: the first is written, no other.
	if code, _ := post(t, servertest.ClientFrom("127.0.0.2"), url, body, forged); code != 401 {
		t.Fatalf("first forged delivery = %d, want 401", code)
	}
	after := hookRowVersion(t, b, "shop")
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		c := servertest.ClientFrom(ip)
		for i := 0; i < 4; i++ {
			if ip == "127.0.0.2" && i == 0 {
				continue // sent above
			}
			if code, _ := post(t, c, url, body, forged); code != 401 {
				t.Fatalf("forged delivery %d from %s = %d, want 401", i, ip, code)
			}
		}
		code, retry := post(t, c, url, body, forged)
		if secs, _ := strconv.Atoi(retry); code != 429 || secs < 1 || secs > 10 {
			t.Fatalf("fifth forged delivery from %s = %d Retry-After %q, want 429 and about 10 s", ip, code, retry)
		}
	}
	if got := hookRowVersion(t, b, "shop"); got != after {
		t.Errorf("forged deliveries after the first wrote the webhook's row (xmin %s, then %s)", after, got)
	}
	// An unknown webhook spends the budget too.
	if code, _ := post(t, servertest.ClientFrom("127.0.0.6"), b.srv.URL+"/hooks/"+b.tenantA.Slug+"/nope", body, forged); code != 404 {
		t.Errorf("unknown webhook = %d, want 404", code)
	}

	// The flood goes on from the limited addresses while the sender
	// delivers from its own.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
		wg.Add(1)
		go func(c *http.Client) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if code, _ := post(t, c, url, body, forged); code != 429 {
					t.Errorf("flood delivery = %d, want 429", code)
					return
				}
			}
		}(servertest.ClientFrom(ip))
	}
	sender := servertest.ClientFrom("127.0.0.1")
	for i := range 10 {
		d := fmt.Sprintf(`{"id": "o-%d"}`, i)
		if code, _ := post(t, sender, url, d, signed(secret, fmt.Sprintf("msg_%d", i), now, d)); code != 202 {
			t.Errorf("signed delivery %d under the flood = %d, want 202", i, code)
		}
	}
	close(stop)
	wg.Wait()
	_, got := b.call(t, "GET", "/api/v1/webhooks/shop", b.keyA, "")
	last, _ := got["last_delivery"].(map[string]any)
	if last["outcome"] != "accepted" || got["deliveries"] != 26.0 {
		t.Errorf("webhook = %v, want the last delivery accepted and 16 failures + 10 deliveries counted", got)
	}
}

// A flood of failed deliveries from one address (forged and unsigned ones
// to a webhook, ones to webhooks that do not exist) turns none of the
// correctly signed deliveries from the same address into 429, to that
// webhook or another tenant's, the first ones included; the flood itself
// gets 429 once its budget is spent.
func TestSignedDeliveriesSurviveAFloodFromTheirAddress(t *testing.T) {
	t.Parallel()
	b := setupAPI(t, func(d *server.Deps) { d.AuthFailureBurst, d.AuthFailuresPerMinute = 3, 6 })
	testdb.Definition(t, b.store, b.tenantA.ID, "key: on-flood\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\ntriggers:\n  - {event: order.flood}\n")
	_, hook := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "shop", "event": "order.flood"}`)
	secretA := hook["secret"].(string)
	_, hook = b.call(t, "POST", "/api/v1/webhooks", b.keyB, `{"id": "shop", "event": "order.flood"}`)
	secretB := hook["secret"].(string)
	_, pathB, _ := strings.Cut(hook["url"].(string), "/hooks/")
	urlA, urlB := b.srv.URL+"/hooks/"+b.tenantA.Slug+"/shop", b.srv.URL+"/hooks/"+pathB
	now, err := b.store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := servertest.ClientFrom("127.0.0.1")
	body := `{"id": "o-0"}`
	forged := signed("whsec_"+strings.Repeat("A", 43)+"=", "msg_forged", now, body)
	// The address spends its budget of unknown webhooks before either
	// webhook has had a delivery: a webhook that exists is still served.
	for i, want := range []int{404, 404, 404, 429} {
		if code, _ := post(t, c, b.srv.URL+"/hooks/"+b.tenantA.Slug+fmt.Sprintf("/made-up-%d", i), body, forged); code != want {
			t.Fatalf("delivery %d to an unknown webhook = %d, want %d", i+1, code, want)
		}
	}
	// Paths no webhook can have (bytes the database refuses) are as unknown.
	for _, path := range []string{"%FF%FE/shop", b.tenantA.Slug + "/%00", b.tenantA.Slug + "/" + strings.Repeat("x", 200)} {
		if code, _ := post(t, servertest.ClientFrom("127.0.0.9"), b.srv.URL+"/hooks/"+path, body, forged); code != 404 {
			t.Errorf("delivery to /hooks/%s = %d, want 404", path, code)
		}
	}
	spent := 0 // failures at urlA, whose budget forged and unsigned share
	for i := range 6 {
		for name, h := range map[string]map[string]string{"forged": forged, "unsigned": nil} {
			want := 401
			if spent++; spent > 3 {
				want = 429
			}
			if code, _ := post(t, c, urlA, body, h); code != want {
				t.Fatalf("%s delivery (failure %d) = %d, want %d", name, spent, code, want)
			}
		}
		if code, _ := post(t, c, b.srv.URL+"/hooks/"+b.tenantA.Slug+fmt.Sprintf("/nope-%d", i), body, forged); code != 429 {
			t.Fatalf("delivery %d to an unknown webhook past the budget = %d, want 429", i+1, code)
		}
		for name, h := range map[string]struct{ url, secret string }{"tenant A's": {urlA, secretA}, "tenant B's": {urlB, secretB}} {
			d := fmt.Sprintf(`{"id": "o-%d"}`, i+1)
			if code, _ := post(t, c, h.url, d, signed(h.secret, fmt.Sprintf("msg_%d", i), now, d)); code != 202 {
				t.Fatalf("%s signed delivery %d during the flood = %d, want 202", name, i+1, code)
			}
		}
	}
}

// A delivery with no signature is refused before its body is read, and
// counted: a body of any size, sent without a length, gets 401, not 413,
// and 429 once the budget is spent. A body that says it is too large is
// counted as well.
func TestOversizedUnsignedDeliveriesAreCounted(t *testing.T) {
	t.Parallel()
	b := setupAPI(t, func(d *server.Deps) { d.AuthFailureBurst, d.AuthFailuresPerMinute = 2, 6 })
	b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "big", "event": "order.big"}`)
	url := b.srv.URL + "/hooks/" + b.tenantA.Slug + "/big"
	send := func(c *http.Client, headers map[string]string, length int64) int {
		t.Helper()
		big := io.LimitReader(neverEnding('x'), httpx.MaxBodyBytes+1<<20)
		req, _ := http.NewRequest("POST", url, io.NopCloser(big)) // no length: chunked
		req.ContentLength = length
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	unsigned := servertest.ClientFrom("127.0.0.2")
	for i, want := range []int{401, 401, 429, 429} {
		if code := send(unsigned, nil, -1); code != want {
			t.Fatalf("oversized unsigned delivery %d = %d, want %d", i+1, code, want)
		}
	}
	said := servertest.ClientFrom("127.0.0.3")
	now, _ := b.store.Now(context.Background())
	for i, want := range []int{413, 413, 429} {
		if code := send(said, signed("whsec_x", "msg_big", now, ""), httpx.MaxBodyBytes+1<<20); code != want {
			t.Fatalf("delivery %d saying it is too large = %d, want %d", i+1, code, want)
		}
	}
	_, got := b.call(t, "GET", "/api/v1/webhooks/big", b.keyA, "")
	if last, _ := got["last_delivery"].(map[string]any); last["outcome"] != "bad_signature" && last["outcome"] != "too_large" {
		t.Errorf("last delivery = %v, want the refusals recorded", got["last_delivery"])
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// GitHub signs only the body, with no timestamp, and X-GitHub-Delivery is
// not signed: a captured delivery sent again under a new delivery id is a
// duplicate of the first (200, the same event), not a new event.
func TestGitHubDeliveryReplayedUnderANewIDIsADuplicate(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	testdb.Definition(t, b.store, b.tenantA.ID, "key: on-push\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\ntriggers:\n  - {event: github.push}\n")
	_, hook := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "gh", "event": "github.push", "scheme": "github"}`)
	secret := hook["secret"].(string)
	url := b.srv.URL + "/hooks/" + b.tenantA.Slug + "/gh"
	body := `{"ref": "refs/heads/main", "after": "abc"}`
	sig := webhook.SignGitHub(secret, []byte(body))
	code, first := deliver(t, url, body, map[string]string{"X-Hub-Signature-256": sig, "X-GitHub-Delivery": "d-1"})
	if code != 202 {
		t.Fatalf("GitHub delivery = %d %s", code, first)
	}
	for _, id := range []string{"d-1", "d-2", ""} {
		code, out := deliver(t, url, body, map[string]string{"X-Hub-Signature-256": sig, "X-GitHub-Delivery": id})
		if code != 200 || !strings.Contains(out, `"duplicate":true`) || eventID(t, out) != eventID(t, first) {
			t.Errorf("the delivery again under X-GitHub-Delivery %q = %d %s, want 200, a duplicate of %s", id, code, out, first)
		}
	}
	next := `{"ref": "refs/heads/main", "after": "def"}`
	if code, out := deliver(t, url, next, map[string]string{"X-Hub-Signature-256": webhook.SignGitHub(secret, []byte(next)), "X-GitHub-Delivery": "d-3"}); code != 202 {
		t.Errorf("another body = %d %s, want 202", code, out)
	}
	runs, err := b.store.RunList(context.Background(), b.tenantA.ID, store.RunFilter{Definition: "on-push", Limit: 10})
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs = %d, %v; want one a body", len(runs), err)
	}
}

func eventID(t *testing.T, out string) string {
	t.Helper()
	var v struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.EventID == "" {
		t.Fatalf("answer %s has no event_id: %v", out, err)
	}
	return v.EventID
}
