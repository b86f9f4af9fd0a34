// Package server is Ductor's HTTP front, assembled: it builds the Echo
// instance, its process-wide middleware (metrics, request ids, security
// headers, logging, panic recovery, NUL refusal), health and metrics, and
// mounts the two sides of what it serves:
//
//   - package api: the JSON API under /api/v1 (runs, definitions,
//     schedules, webhooks and their deliveries on /hooks, tasks for bridge
//     workers, waiting runs' signals, events, approvals and cases, batches,
//     whoami) and its OpenAPI document;
//   - package pages: the dashboard (home, login, the runs list and the run
//     inspector, the editor, the inbox, schedules, webhooks and batches,
//     settings).
//
// Both import package httpx, the pieces they share (errors mapped to HTTP
// statuses in exactly one place, binding and query parameters, API-key
// auth and rate limits, sessions, CSRF and flashes, tenant access, the
// writes both sides make, the cursor pager in httpx/paging), and never
// each other. Each side takes a Deps of only what it uses, which New
// cuts from this package's Deps. Handlers are small maker functions that
// take only what they use.
//
// Every route is registered in a routes*.go file, and only there:
// routes.go has the process-wide ones and mounts the sides,
// api/routes_api.go the API's, pages/routes_pages.go the dashboard's
// (routes_test.go enforces it across all of them). The API's tests, in
// package api_test, share api/harness_test.go; the dashboard's, in
// package pages_test, share pages/harness_test.go; the fixtures both use
// are package servertest. The tests here are the assembly's.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/ductor/ductor/app/server/api"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/server/pages"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/login"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/app/usage"
)

// Deps is what the server needs from the rest of the process.
type Deps struct {
	Pool     *pgxpool.Pool
	Store    *store.Store
	Logger   *slog.Logger
	Registry *prometheus.Registry
	// Runs starts runs and delivers controls to them.
	Runs *runs.Service
	// Subscriptions are the outbound webhook subscriptions; nil in
	// servers that do not offer them (their routes answer 503).
	Subscriptions *subscriptions.Service
	// Usage reads tenants' metered use and quotas (one over Pool when
	// nil).
	Usage *usage.Service
	// ValidateInput checks trigger input against a definition's schema.
	ValidateInput runs.InputValidator
	// API and Web choose which halves of the server are mounted.
	API, Web bool
	// Login is the OIDC provider people sign in with; nil when none is
	// configured.
	Login *login.Provider
	// DevLogin offers the clearly marked dev login: only `ductor dev` on a
	// loopback address without OIDC settings sets it.
	DevLogin bool
	// BaseURL is the dashboard's public URL (DUCTOR_BASE_URL); cookies are
	// Secure when it is https.
	BaseURL string
	// Secrets seals webhook secrets (from DUCTOR_SECRET_KEY); nil when
	// none is configured, and then webhooks answer 503.
	Secrets *secrets.Box
	// APIRate is how many requests a second each API key may make, in
	// bursts of twice as many (DUCTOR_API_RATE); 0 means no limit.
	APIRate float64
	// AuthFailuresPerMinute and AuthFailureBurst bound failed
	// authentications (API keys, webhook deliveries) per client address
	// and what failed (0: the defaults, 20 a minute in bursts of 20);
	// past them that failure gets 429.
	AuthFailuresPerMinute float64
	AuthFailureBurst      int
	// WebhookRefusedEvery is how often, at most, one webhook's refused
	// deliveries are reported by a ductor.webhook.refused event (0: once
	// a minute).
	WebhookRefusedEvery time.Duration
	// TrustedProxies are the peers whose X-Forwarded-For and X-Real-IP
	// name the client (DUCTOR_TRUSTED_PROXIES); none by default.
	TrustedProxies []netip.Prefix
	// LiveStreamFor bounds one live stream of the inspector (0: five
	// minutes); the browser opens the next.
	LiveStreamFor time.Duration
	// stopping is closed when the server starts shutting down: long polls
	// answer at once instead of holding the shutdown up.
	stopping chan struct{}
}

// apiDeps is what of d the API's handlers take.
func (d Deps) apiDeps() api.Deps {
	return api.Deps{
		Store: d.Store, Runs: d.Runs, ValidateInput: d.ValidateInput, Logger: d.Logger, Secrets: d.Secrets,
		BaseURL: d.BaseURL, TrustedProxies: d.TrustedProxies, AuthFailuresPerMinute: d.AuthFailuresPerMinute,
		AuthFailureBurst: d.AuthFailureBurst, WebhookRefusedEvery: d.WebhookRefusedEvery, Stopping: d.stopping, Subscriptions: d.Subscriptions, Usage: d.Usage,
	}
}

// pagesDeps is what of d the dashboard's handlers take.
func (d Deps) pagesDeps() pages.Deps {
	return pages.Deps{
		Store: d.Store, Runs: d.Runs, ValidateInput: d.ValidateInput, Login: d.Login, DevLogin: d.DevLogin,
		BaseURL: d.BaseURL, Secrets: d.Secrets, LiveStreamFor: d.LiveStreamFor, Stopping: d.stopping,
		Subscriptions: d.Subscriptions, Usage: d.Usage,
	}
}

// Server is an http.Handler with graceful start and stop.
type Server struct {
	echo     *echo.Echo
	log      *slog.Logger
	stopping chan struct{}
	stopOnce sync.Once
}

// New builds the server and its routes.
func New(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Registry == nil {
		d.Registry = prometheus.NewRegistry()
	}
	if d.Usage == nil {
		d.Usage = usage.New(usage.Config{Pool: d.Pool, Logger: d.Logger})
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = httpx.ErrorHandler(d.Logger, pages.ErrorPage)
	e.JSONSerializer = httpx.JSONSerializer{}
	d.stopping = make(chan struct{})
	s := &Server{echo: e, log: d.Logger, stopping: d.stopping}
	routes(e, d)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

// Serve answers on ln until ctx ends, then shuts down gracefully, giving
// in-flight requests up to ten seconds to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.stopOnce.Do(func() { close(s.stopping) })
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// NewInputValidator returns the check that trigger input matches a
// definition's input_schema (see httpx.NewInputValidator).
func NewInputValidator() runs.InputValidator { return httpx.NewInputValidator() }

// Routes lists every route the server serves.
func (s *Server) Routes() []*echo.Route { return s.echo.Routes() }
