package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

// While the database is down, API calls answer 503 unavailable with a
// Retry-After (a client should try again), not 500 internal; readiness
// says 503 as it always did, and liveness still answers.
func TestAPIAnswersUnavailableWhileTheDatabaseIsDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more: every connection is refused
	pool, err := pgxpool.New(context.Background(), "postgres://ductor@"+addr+"/ductor?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := httptest.NewServer(New(Deps{Pool: pool, Store: store.New(pool), API: true, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	b := servertest.Served{Server: srv}
	// The key is never checked: the keyring it is checked with is in the
	// database.
	const key = "dk_0123456789abcdefghijklmnopqrstuv"
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/v1/runs", ""},
		{"POST", "/api/v1/runs", `{"definition": "x"}`},
		{"POST", "/api/v1/events", `{"name": "e"}`},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s while the database is down: %d, Retry-After %q; want 503 with Retry-After",
				c.method, c.path, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	code, body := b.Do(t, "GET", "/api/v1/runs", key, nil)
	if code != http.StatusServiceUnavailable || errorCode(t, body) != apperr.Unavailable {
		t.Errorf("body %d %s, want the unavailable code", code, body)
	}
	if code, _ := b.Do(t, "GET", "/readyz", "", nil); code != http.StatusServiceUnavailable {
		t.Errorf("readyz while the database is down = %d, want 503", code)
	}
	if code, _ := b.Do(t, "GET", "/healthz", "", nil); code != http.StatusOK {
		t.Errorf("healthz while the database is down = %d, want 200", code)
	}
}

// While the database is down, a webhook delivery answers 503 unavailable
// with a Retry-After, as the API does, not 404 (a sender may take that as
// final), and spends no failure budget: it never turns into 429.
func TestHooksAnswerUnavailableWhileTheDatabaseIsDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	pool, err := pgxpool.New(context.Background(), "postgres://ductor@"+addr+"/ductor?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := httptest.NewServer(New(Deps{Pool: pool, Store: store.New(pool), API: true, Secrets: servertest.TestBox(t),
		Logger: slog.New(slog.DiscardHandler), AuthFailureBurst: 1, AuthFailuresPerMinute: 1}))
	t.Cleanup(srv.Close)
	b := servertest.Served{Server: srv}
	for i := range 4 {
		res, err := http.Post(srv.URL+"/hooks/acme/shop", "application/json", strings.NewReader(`{"id": 1}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Fatalf("delivery %d while the database is down = %d, Retry-After %q; want 503 with Retry-After",
				i+1, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	code, body := b.Do(t, "POST", "/hooks/acme/shop", "", strings.NewReader(`{}`))
	if code != http.StatusServiceUnavailable || errorCode(t, body) != apperr.Unavailable {
		t.Errorf("body %d %s, want the unavailable code", code, body)
	}
}
