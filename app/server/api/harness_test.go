// The API's test harness: apiBundle is the whole server (server.New)
// with running workers and two tenants with a key each, called as a
// client would, with JSON. setupTasks adds what a serving process runs
// beside it for bridge workers.

package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// apiBundle is a server with running workers and two tenants, each with
// an admin key.
type apiBundle struct {
	srv        *httptest.Server
	store      *store.Store
	tenantA    store.Tenant
	keyA, keyB string
	echoRoutes []string
	runs       *workers.Runtime
	pool       *pgxpool.Pool
}

func setupAPI(t *testing.T, opts ...func(*server.Deps)) *apiBundle {
	t.Helper()
	return setupAPIConfig(t, nil, opts...)
}

// setupAPIConfig is setupAPI with changes to the runtime's Config.
func setupAPIConfig(t *testing.T, config func(*workers.Config), opts ...func(*server.Deps)) *apiBundle {
	t.Helper()
	pool := testdb.Schema(t)
	log := slog.New(slog.DiscardHandler)
	coord := servertest.StartWorkers(t, pool, log, config)
	s := store.New(pool)
	reg := prometheus.NewRegistry()
	reg.MustRegister(coord.Collectors()...)
	d := server.Deps{Pool: pool, Store: s, Logger: log, Registry: reg, API: true, Runs: coord.Runs, ValidateInput: httpx.NewInputValidator(), Secrets: servertest.TestBox(t),
		Subscriptions: coord.Subscriptions}
	for _, o := range opts {
		o(&d)
	}
	app := server.New(d)
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	b := &apiBundle{srv: srv, store: s, runs: coord, pool: pool}
	b.tenantA = testdb.Tenant(t, s, nil)
	_, b.keyA = testdb.APIKey(t, s, b.tenantA, nil)
	_, b.keyB = testdb.APIKey(t, s, testdb.Tenant(t, s, nil), nil)
	for _, r := range app.Routes() {
		if strings.HasPrefix(r.Path, "/api/v1/") && !strings.HasSuffix(r.Path, "*") {
			b.echoRoutes = append(b.echoRoutes, r.Method+" "+r.Path)
		}
	}
	return b
}

// setupTasks is setupAPI with what a serving process runs beside it: the
// task notification listener and the sweep that reports lost attempts.
func setupTasks(t *testing.T) *apiBundle {
	t.Helper()
	return setupTasksConfig(t, nil)
}

// setupTasksConfig is setupTasks with changes to the runtime's Config.
func setupTasksConfig(t *testing.T, config func(*workers.Config)) *apiBundle {
	t.Helper()
	b := setupAPIConfig(t, config)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { b.runs.Runs.Tasks.Listen(ctx); done <- struct{}{} }()
	go func() { b.runs.Sweep(ctx); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done })
	return b
}

func (b *apiBundle) publish(t *testing.T, m *definition.Manifest) {
	t.Helper()
	raw, _ := json.Marshal(m)
	sum := sha256.Sum256(raw)
	_, _, err := b.store.DefinitionPublish(context.Background(), b.tenantA.ID, store.Publication{
		Manifest: m, ManifestHash: hex.EncodeToString(sum[:]), Source: string(raw), SourceFormat: "json",
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (b *apiBundle) call(t *testing.T, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	return b.callWith(t, method, path, key, body, nil)
}

// callWith is call with more request headers.
func (b *apiBundle) callWith(t *testing.T, method, path, key, body string, headers map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, b.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: body %s is not a JSON object", method, path, raw)
		}
	}
	return res.StatusCode, out
}

func noopManifest(key string, refs ...string) *definition.Manifest {
	m := &definition.Manifest{Key: key, Entrypoints: refs[:1]}
	for i, ref := range refs {
		m.Steps = append(m.Steps, definition.Step{Ref: ref, Type: definition.TypeTask, With: map[string]any{"handler": "builtin.noop"},
			Join: definition.JoinAll, OnError: definition.OnErrorFail, Retry: definition.RetryPolicy{MaxAttempts: 1}, TimeoutMS: 60000})
		m.Order = append(m.Order, ref)
		if i > 0 {
			m.Edges = append(m.Edges, definition.Edge{From: refs[i-1], To: ref, On: definition.OutcomeSuccess})
		}
	}
	return m
}

// waitStatus polls the run through the API until it is terminal.
func (b *apiBundle) waitStatus(t *testing.T, id string) map[string]any {
	t.Helper()
	return testwait.Value(t, 20*time.Second, "run "+id+" ends", func() (map[string]any, bool) {
		_, run := b.call(t, "GET", "/api/v1/runs/"+id, b.keyA, "")
		return run, endedStatus(run["status"])
	})
}

// endedStatus reports whether a run's status, as the API gives it, is
// terminal.
func endedStatus(status any) bool {
	switch status {
	case "succeeded", "failed", "cancelled", "timed_out", "terminated":
		return true
	}
	return false
}
