package server

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// Each API key has its own bucket: a key over its limit gets 429 in the
// JSON error shape with Retry-After, and another key is not held back.
func TestAPIRateLimitPerKey(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	s := store.New(pool)
	srv := httptest.NewServer(New(Deps{Pool: pool, Store: s, API: true, APIRate: 0.5})) // bursts of 1
	t.Cleanup(srv.Close)
	b := servertest.Served{Server: srv, Store: s, Pool: pool}
	tenant := testdb.Tenant(t, s, nil)
	_, first := testdb.APIKey(t, s, tenant, nil)
	_, second := testdb.APIKey(t, s, tenant, nil)

	if code, body := b.Do(t, "GET", "/api/v1/whoami", first, nil); code != 200 {
		t.Fatalf("first call = %d %s", code, body)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+first)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second call in the same second = %d, want 429", res.StatusCode)
	}
	if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 2 {
		t.Errorf("Retry-After = %q, want 1 or 2 seconds", res.Header.Get("Retry-After"))
	}
	code, body := b.Do(t, "GET", "/api/v1/whoami", first, nil)
	if code != 429 || errorCode(t, body) != apperr.RateLimited {
		t.Errorf("over the limit: %d %s, want 429 rate_limited", code, body)
	}
	if code, body := b.Do(t, "GET", "/api/v1/whoami", second, nil); code != 200 {
		t.Errorf("another key = %d %s, want 200: limits are per key", code, body)
	}
	if code, _ := b.Do(t, "GET", "/api/v1/whoami", "", nil); code != 401 {
		t.Errorf("no key = %d, want 401 before any limit", code)
	}
}
