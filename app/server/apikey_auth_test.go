package server

import (
	"context"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

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
	tenant := testdb.Tenant(t, b.Store, nil)
	secret := legacyKey("dk_" + "Legacy0123456789abcdefghijklmnopqr")
	_, err := b.Pool.Exec(context.Background(), `INSERT INTO api_key (tenant_id, id, name, prefix, hash, scopes, legacy_checksum)
		VALUES ($1, $2, 'old', $3, $4, '{admin}', true)`, tenant.ID, uuid.New(), auth.PrefixOf(secret), auth.HashKey(secret))
	if err != nil {
		t.Fatal(err)
	}
	if code, body := b.Do(t, "GET", "/api/v1/whoami", secret, nil); code != 200 {
		t.Fatalf("legacy key = %d %s, want 200", code, body)
	}
	if code, _ := b.Do(t, "GET", "/api/v1/whoami", legacyKey("dk_"+"Forged0123456789abcdefghijklmnopqr"), nil); code != 401 {
		t.Fatalf("forged legacy key = %d, want 401", code)
	}
}

// authStatus sends the Authorization header from the client and returns
// the status and Retry-After.
func authStatus(t *testing.T, client *http.Client, url, authorization string, headers map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", authorization)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Retry-After")
}

// Failed authentications are counted per client address and what failed:
// past its budget a forged key, or one well-formed key that is unknown or
// revoked, gets 429 with Retry-After, while from the same address every
// other tenant's good key, and another well-formed key, are served as if
// nothing had happened.
func TestAFloodOfBadKeysLocksNoOtherKeyOut(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	s := store.New(pool)
	srv := httptest.NewServer(New(Deps{Pool: pool, Store: s, API: true, AuthFailureBurst: 3, AuthFailuresPerMinute: 6}))
	t.Cleanup(srv.Close)
	tenantA := testdb.Tenant(t, s, nil)
	_, goodA := testdb.APIKey(t, s, tenantA, nil)
	_, goodB := testdb.APIKey(t, s, testdb.Tenant(t, s, nil), nil)
	revoked, revokedSecret := testdb.APIKey(t, s, tenantA, nil)
	if _, err := s.APIKeyRevoke(context.Background(), tenantA.ID, revoked.ID); err != nil {
		t.Fatal(err)
	}
	kr, err := s.Keyring(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	unknown, _ := kr.NewKey() // well formed, never stored
	other, _ := kr.NewKey()
	forged := goodA[:len(goodA)-1] + "0" // a wrong tag
	if forged == goodA {
		forged = goodA[:len(goodA)-1] + "1"
	}
	url := srv.URL + "/api/v1/whoami"
	for i := range 8 {
		for name, k := range map[string]string{"forged": forged, "unknown": unknown.Secret, "revoked": revokedSecret} {
			want := 401
			if i >= 3 {
				want = 429
			}
			code, retry := authStatus(t, http.DefaultClient, url, "Bearer "+k, nil)
			if secs, _ := strconv.Atoi(retry); code != want || want == 429 && (secs < 1 || secs > 10) {
				t.Fatalf("%s key, failure %d = %d Retry-After %q, want %d", name, i+1, code, retry, want)
			}
		}
		for name, k := range map[string]string{"tenant A's good key": goodA, "tenant B's good key": goodB} {
			if code, _ := authStatus(t, http.DefaultClient, url, "Bearer "+k, nil); code != 200 {
				t.Fatalf("%s during the flood = %d, want 200", name, code)
			}
		}
	}
	if code, _ := authStatus(t, http.DefaultClient, url, "Bearer "+other.Secret, nil); code != 401 {
		t.Errorf("another well-formed unknown key = %d, want 401: its budget is its own", code)
	}
}

// The Bearer scheme is case-insensitive (RFC 7235).
func TestBearerSchemeInAnyCase(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := testdb.APIKey(t, b.Store, testdb.Tenant(t, b.Store, nil), nil)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		if code, _ := authStatus(t, http.DefaultClient, b.Server.URL+"/api/v1/whoami", scheme+" "+key, nil); code != 200 {
			t.Errorf("%s KEY = %d, want 200", scheme, code)
		}
	}
	for _, h := range []string{"Basic " + key, "Bearer", "Bearer ", key, "Bearerdk_x"} {
		if code, _ := authStatus(t, http.DefaultClient, b.Server.URL+"/api/v1/whoami", h, nil); code != 401 {
			t.Errorf("Authorization %q = %d, want 401", h, code)
		}
	}
}

// Behind trusted proxies the client is the rightmost X-Forwarded-For hop
// that is not one of them (or X-Real-IP): two clients behind the same
// proxy have budgets of their own. A peer that is not trusted has its
// forwarding headers ignored.
func TestTrustedProxiesNameTheClient(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	s := store.New(pool)
	proxy := netip.MustParsePrefix("127.0.0.2/32")
	srv := httptest.NewServer(New(Deps{Pool: pool, Store: s, API: true, AuthFailureBurst: 2, AuthFailuresPerMinute: 6, TrustedProxies: []netip.Prefix{proxy}}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/api/v1/whoami"
	viaProxy, direct := servertest.ClientFrom("127.0.0.2"), servertest.ClientFrom("127.0.0.3")
	spend := func(c *http.Client, h map[string]string) {
		t.Helper()
		for i := range 2 {
			if code, _ := authStatus(t, c, url, "Bearer dk_nope", h); code != 401 {
				t.Fatalf("failure %d from %v = %d, want 401", i+1, h, code)
			}
		}
		if code, _ := authStatus(t, c, url, "Bearer dk_nope", h); code != 429 {
			t.Fatalf("third failure from %v = %d, want 429", h, code)
		}
	}
	spend(viaProxy, map[string]string{"X-Forwarded-For": "198.51.100.1, 127.0.0.2"})
	for name, h := range map[string]map[string]string{
		"another client behind the proxy":       {"X-Forwarded-For": "198.51.100.2"},
		"a client naming the first on the left": {"X-Forwarded-For": "198.51.100.1, 203.0.113.9"},
		"X-Real-IP":                             {"X-Real-Ip": "198.51.100.3"},
		"the proxy itself":                      nil,
	} {
		if code, _ := authStatus(t, viaProxy, url, "Bearer dk_nope", h); code != 401 {
			t.Errorf("%s = %d, want 401 (a budget of its own)", name, code)
		}
	}
	if code, _ := authStatus(t, viaProxy, url, "Bearer dk_nope", map[string]string{"X-Forwarded-For": "203.0.113.7, 198.51.100.1"}); code != 429 {
		t.Errorf("the first client again, whatever it forwards on the left = %d, want 429", code)
	}
	spend(direct, map[string]string{"X-Forwarded-For": "198.51.100.4"})
	if code, _ := authStatus(t, direct, url, "Bearer dk_nope", map[string]string{"X-Forwarded-For": "198.51.100.5"}); code != 429 {
		t.Errorf("an untrusted peer forwarding another address = %d, want 429: its headers are ignored", code)
	}
}
