package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/server/api"
	"github.com/ductor/ductor/app/server/httpx"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

func setup(t *testing.T) servertest.Served {
	t.Helper()
	pool := testdb.Schema(t)
	s := store.New(pool)
	srv := httptest.NewServer(New(Deps{Pool: pool, Store: s, API: true, Web: true}))
	t.Cleanup(srv.Close)
	return servertest.Served{Server: srv, Store: s, Pool: pool}
}

func errorCode(t *testing.T, body []byte) apperr.Code {
	t.Helper()
	var e httpx.ErrorBody
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("body %s is not the JSON error shape: %v", body, err)
	}
	return e.Error.Code
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if code, _ := b.Do(t, "GET", "/healthz", "", nil); code != 200 {
		t.Errorf("healthz = %d", code)
	}
	if code, body := b.Do(t, "GET", "/readyz", "", nil); code != 200 {
		t.Errorf("readyz = %d %s", code, body)
	}
	if _, err := b.Pool.Exec(context.Background(), "DELETE FROM ductor_migration"); err != nil {
		t.Fatal(err)
	}
	code, body := b.Do(t, "GET", "/readyz", "", nil)
	if code != 503 || errorCode(t, body) != apperr.Unavailable {
		t.Errorf("readyz with pending migrations = %d %s, want 503", code, body)
	}
}

func TestAPIKeyAuthentication(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenant := testdb.Tenant(t, b.Store, nil)
	key, secret := testdb.APIKey(t, b.Store, tenant, nil)

	code, body := b.Do(t, "GET", "/api/v1/whoami", secret, nil)
	if code != 200 {
		t.Fatalf("whoami = %d %s", code, body)
	}
	var who api.WhoamiResponse
	if err := json.Unmarshal(body, &who); err != nil || who.TenantID != tenant.ID.String() || who.KeyID != key.ID.String() {
		t.Fatalf("whoami = %s (%v)", body, err)
	}
	typo := byte('x')
	if secret[20] == typo {
		typo = 'y'
	}
	for name, k := range map[string]string{"none": "", "malformed": "dk_nope", "typo": secret[:20] + string(typo) + secret[21:]} {
		code, body := b.Do(t, "GET", "/api/v1/whoami", k, nil)
		if code != 401 || errorCode(t, body) != apperr.Unauthorized {
			t.Errorf("%s key: %d %s, want 401", name, code, body)
		}
	}
	if _, err := b.Store.APIKeyRevoke(context.Background(), tenant.ID, key.ID); err != nil {
		t.Fatal(err)
	}
	if code, _ := b.Do(t, "GET", "/api/v1/whoami", secret, nil); code != 401 {
		t.Errorf("revoked key: %d, want 401", code)
	}
}

// A malformed or forged key is refused before any database query: the
// server below has its pool closed once it has loaded the keyring (and
// learnt that no legacy key is live), so any query would fail with a 500
// instead of a 401.
func TestMalformedKeyNeedsNoDatabase(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	srv := httptest.NewServer(New(Deps{Pool: pool, Store: store.New(pool), API: true}))
	t.Cleanup(srv.Close)
	b := servertest.Served{Server: srv}
	forgedLegacy := legacyKey("dk_" + strings.Repeat("Forge", 6) + "dkey")
	if code, body := b.Do(t, "GET", "/api/v1/whoami", forgedLegacy, nil); code != 401 {
		t.Fatalf("forged legacy key = %d %s, want 401", code, body)
	}
	pool.Close()
	other, _ := auth.NewKeyring([]byte("not this deployment's secret"))
	forged, _ := other.NewKey()
	for name, k := range map[string]string{
		"malformed":     "dk_0000000000000000000000000000000000000000",
		"forged tag":    forged.Secret,
		"forged legacy": legacyKey("dk_" + strings.Repeat("Other", 6) + "dkey"),
	} {
		if code, body := b.Do(t, "GET", "/api/v1/whoami", k, nil); code != 401 {
			t.Errorf("%s key with no database = %d %s, want 401", name, code, body)
		}
	}
}

func TestErrorsUseTheJSONShape(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, secret := testdb.APIKey(t, b.Store, testdb.Tenant(t, b.Store, nil), nil)
	code, body := b.Do(t, "GET", "/api/v1/no-such-thing", secret, nil)
	if code != 404 || errorCode(t, body) != apperr.NotFound {
		t.Errorf("unknown route = %d %s", code, body)
	}
	big := bytes.Repeat([]byte("x"), httpx.MaxBodyBytes+1)
	code, body = b.Do(t, "POST", "/api/v1/whoami", secret, bytes.NewReader(big))
	if code != 413 || errorCode(t, body) != apperr.TooLarge {
		t.Errorf("oversized body = %d %s, want 413", code, body)
	}
}

func TestStaticAssetsAreHashedAndCached(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, page := b.Do(t, "GET", "/", "", nil)
	i := bytes.Index(page, []byte("/static/css/app."))
	if i < 0 {
		t.Fatalf("home page links no hashed stylesheet: %s", page)
	}
	href := string(page[i : i+bytes.IndexByte(page[i:], '"')])
	res, err := http.Get(b.Server.URL + href)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("GET %s = %d, Cache-Control %q", href, res.StatusCode, res.Header.Get("Cache-Control"))
	}
}
