package server

import (
	"context"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// legacyKey completes a 37-character body with the CRC-32 checksum keys
// carried before they had a tag.
func legacyKey(body string) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	n := crc32.ChecksumIEEE([]byte(body))
	sum := make([]byte, 6)
	for i := 5; i >= 0; i-- {
		sum[i] = alphabet[n%62]
		n /= 62
	}
	return body + string(sum)
}

// A key made before keys had a tag keeps working.
func TestLegacyKeyStillAuthenticates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenant := testdb.Tenant(t, b.store, nil)
	secret := legacyKey("dk_" + "Legacy0123456789abcdefghijklmnopqr")
	_, err := b.pool.Exec(context.Background(), `INSERT INTO api_key (tenant_id, id, name, prefix, hash, scopes, legacy_checksum)
		VALUES ($1, $2, 'old', $3, $4, '{admin}', true)`, tenant.ID, uuid.New(), auth.PrefixOf(secret), auth.HashKey(secret))
	if err != nil {
		t.Fatal(err)
	}
	if code, body := b.do(t, "GET", "/api/v1/whoami", secret, nil); code != 200 {
		t.Fatalf("legacy key = %d %s, want 200", code, body)
	}
	if code, _ := b.do(t, "GET", "/api/v1/whoami", legacyKey("dk_"+"Forged0123456789abcdefghijklmnopqr"), nil); code != 401 {
		t.Fatalf("forged legacy key = %d, want 401", code)
	}
}

// Failed authentications are limited per client address: past the budget
// the address gets 429 with Retry-After, even with a good key, and the
// limit does not spend a key's own budget.
func TestFailedAuthenticationsAreRateLimited(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	s := store.New(pool)
	srv := httptest.NewServer(New(Deps{Pool: pool, Store: s, API: true, AuthFailureBurst: 3, AuthFailuresPerMinute: 6}))
	t.Cleanup(srv.Close)
	b := testBundle{srv: srv, store: s, pool: pool}
	_, good := testdb.APIKey(t, s, testdb.Tenant(t, s, nil), nil)
	kr, err := s.Keyring(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	unknown, _ := kr.NewKey() // well formed, never stored
	for i, k := range []string{"dk_nope", unknown.Secret, good + "x"} {
		if code, body := b.do(t, "GET", "/api/v1/whoami", k, nil); code != 401 {
			t.Fatalf("failure %d = %d %s, want 401", i, code, body)
		}
	}
	for _, k := range []string{unknown.Secret, good} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+k)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
		if res.StatusCode != http.StatusTooManyRequests || secs < 1 || secs > 10 {
			t.Fatalf("after 3 failures: %d with Retry-After %q, want 429 and about 10 s", res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
}

func TestClientAddr(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"203.0.113.7:5000":           "203.0.113.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[::ffff:203.0.113.7]:1":     "203.0.113.7",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", "198.51.100.1")
		if got := clientAddr(r); got != want {
			t.Errorf("clientAddr(%s) = %s, want %s", remote, got, want)
		}
	}
}
