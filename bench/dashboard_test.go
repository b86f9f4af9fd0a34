package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	dashserver "github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/workers"
)

// The dashboard at scale: pages are served by the real server on seeded
// data (rows written straight into the tables, as a long-lived tenant's
// would be, then vacuumed and analyzed) and timed from request to the
// last byte, the median of a few loads.
const pageLoads = 5

// dashboard is a server on a seeded schema with a signed-in owner.
type dashboard struct {
	srv    *httptest.Server
	pool   *pgxpool.Pool
	store  *store.Store
	tenant store.Tenant
	cookie *http.Cookie
}

func newDashboard(b *testing.B) *dashboard {
	b.Helper()
	ctx := context.Background()
	pool := schema(b)
	s := store.New(pool)
	coord, err := workers.New(workers.Config{Pool: pool, Logger: logger()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(coord.Close)
	srv := httptest.NewServer(dashserver.New(dashserver.Deps{Pool: pool, Store: s, Web: true, Runs: coord.Runs, Logger: slog.New(slog.DiscardHandler)}))
	b.Cleanup(srv.Close)
	tenant, err := s.TenantCreate(ctx, "dash-"+randomHex(4), "", store.TierStandard)
	if err != nil {
		b.Fatal(err)
	}
	u, err := s.UserEnsure(ctx, "owner@bench.example", "")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.MemberSet(ctx, tenant.ID, u.Email, auth.RoleOwner); err != nil {
		b.Fatal(err)
	}
	token, err := s.SessionCreate(ctx, u.ID, "")
	if err != nil {
		b.Fatal(err)
	}
	return &dashboard{srv: srv, pool: pool, store: s, tenant: tenant, cookie: &http.Cookie{Name: "ductor_session", Value: token}}
}

// page loads a tenant page pageLoads times: the median time, the body
// size and the last body.
func (d *dashboard) page(b *testing.B, path string) (time.Duration, int, string) {
	b.Helper()
	var times []time.Duration
	var body []byte
	for range pageLoads {
		req, _ := http.NewRequest("GET", d.srv.URL+"/t/"+d.tenant.Slug+path, nil)
		req.AddCookie(d.cookie)
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err = io.ReadAll(res.Body)
		res.Body.Close()
		times = append(times, time.Since(start))
		if err != nil || res.StatusCode != http.StatusOK {
			b.Fatalf("GET %s = %d: %.300s", path, res.StatusCode, body)
		}
	}
	slices.Sort(times)
	return times[len(times)/2], len(body), string(body)
}

func (d *dashboard) exec(b *testing.B, sql string, args ...any) {
	b.Helper()
	if _, err := d.pool.Exec(context.Background(), sql, args...); err != nil {
		b.Fatalf("%.80s…: %v", sql, err)
	}
}

// seedRuns writes n runs of the tenant over 30 days: ten definitions,
// every status, subjects order-N, a region attribute.
func (d *dashboard) seedRuns(b *testing.B, n int) {
	b.Helper()
	d.exec(b, `INSERT INTO run (tenant_id, id, definition_key, definition_version, manifest_hash, status, subject,
		search_attributes, root_run_id, state, input, created_at, finished_at)
	SELECT $1, g.id, 'def-' || (i % 10), 1, 'h', g.status, 'order-' || i,
		jsonb_build_object('region', (ARRAY['eu', 'us', 'ap'])[1 + i % 3], 'n', i), g.id,
		jsonb_build_object('id', g.id, 'status', g.status, 'transition_count', 4), 'null'::jsonb,
		now() - make_interval(secs => (30 * 86400.0) * i / $2),
		CASE WHEN g.status IN ('running', 'waiting') THEN NULL ELSE now() - make_interval(secs => (30 * 86400.0) * i / $2 - 2) END
	FROM generate_series(1, $2) AS i,
	LATERAL (SELECT gen_random_uuid() AS id,
		(ARRAY['succeeded', 'succeeded', 'succeeded', 'succeeded', 'failed', 'cancelled', 'running', 'waiting'])[1 + i % 8] AS status) AS g`,
		d.tenant.ID, n)
	for i := range 10 {
		key := fmt.Sprintf("def-%d", i)
		if _, err := d.store.DefinitionDraftSave(context.Background(), d.tenant.ID, key, "", store.Draft{Source: "key: " + key + "\nsteps: []\n", Format: "yaml"}); err != nil {
			b.Fatal(err)
		}
	}
	d.exec(b, "VACUUM ANALYZE run")
}

// BenchmarkRunsList serves the runs list over 1,000,000 runs of one
// tenant (-short: 20,000): the first page with its total, a page by
// cursor each way, and each kind of search (goal ≤ 100 ms each).
func BenchmarkRunsList(b *testing.B) {
	n := size("BENCH_LIST_RUNS", 1_000_000, 20_000)
	d := newDashboard(b)
	seedStart := time.Now()
	d.seedRuns(b, n)
	seeded := time.Since(seedStart)
	var pickID string
	if err := d.pool.QueryRow(context.Background(), `SELECT id::text FROM run WHERE subject = $1`, fmt.Sprintf("order-%d", n/2)).Scan(&pickID); err != nil {
		b.Fatal(err)
	}
	_, _, first := d.page(b, "/runs")
	next := regexp.MustCompile(`href="([^"]+)" id="runs-next"`).FindStringSubmatch(first)
	if next == nil {
		b.Fatal("the first page has no next link")
	}
	cursor := strings.ReplaceAll(strings.TrimPrefix(next[1], "/t/"+d.tenant.Slug), "&amp;", "&")
	shapes := []struct{ name, path string }{
		{"first page with its total", "/runs"},
		{"the next page", cursor},
		{"status failed", "/runs?status=failed"},
		{"one definition", "/runs?definition=def-3"},
		{"definitions by part", "/runs?definition=ef-&definition_match=contains"},
		{"subject prefix", fmt.Sprintf("/runs?q=order-%d", n/3)},
		{"run id prefix", "/runs?q=" + pickID[:8]},
		{"attribute", "/runs?q=region%3Dap&status=cancelled"},
		{"a day's runs", "/runs?from=" + url.QueryEscape(time.Now().UTC().Add(-72*time.Hour).Format("2006-01-02T15:04")) + "&to=" + url.QueryEscape(time.Now().UTC().Add(-48*time.Hour).Format("2006-01-02T15:04"))},
	}
	b.ResetTimer()
	var worst time.Duration
	var lines []string
	for range b.N {
		worst, lines = 0, nil
		for _, sh := range shapes {
			took, size, _ := d.page(b, sh.path)
			worst = max(worst, took)
			lines = append(lines, fmt.Sprintf("%s %.1f ms (%d KB)", sh.name, ms(took), size/1024))
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(worst), "worst-ms")
	record(b, "runs-list", "runs list over %d runs (seeded in %s): slowest page %.1f ms (goal ≤ 100 ms: %s): %s",
		n, seeded.Round(time.Second), ms(worst), verdict(worst <= 100*time.Millisecond), strings.Join(lines, "; "))
}

// BenchmarkInspector serves the inspector of a run with a 10,000-way
// scatter (-short: 2,000): the run, the scatter's panel, its failed
// children, and one child's panel (goal ≤ 300 ms and ≤ 300 KB each).
func BenchmarkInspector(b *testing.B) {
	n := size("BENCH_INSPECTOR_CHILDREN", 10_000, 2_000)
	d := newDashboard(b)
	run := d.seedScatterRun(b, n)
	base := "/runs/" + run.String()
	shapes := []struct{ name, path string }{
		{"the run", base},
		{"the scatter", base + "?node=fan"},
		{"its failed children", base + "?node=fan&state=failed"},
		{"children by key", base + "?node=fan&q=77"},
		{"one child", base + "?node=" + url.QueryEscape(fmt.Sprintf("fan[%d]", n/2))},
		{"children page 40", fmt.Sprintf("%s?node=fan&after=%d", base, min(n-60, 2000))},
	}
	b.ResetTimer()
	var worst time.Duration
	var biggest int
	var lines []string
	for range b.N {
		worst, biggest, lines = 0, 0, nil
		for _, sh := range shapes {
			took, size, _ := d.page(b, sh.path)
			worst, biggest = max(worst, took), max(biggest, size)
			lines = append(lines, fmt.Sprintf("%s %.1f ms, %d KB", sh.name, ms(took), size/1024))
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(worst), "worst-ms")
	b.ReportMetric(float64(biggest)/1024, "biggest-KB")
	ok := worst <= 300*time.Millisecond && biggest <= 300<<10
	record(b, "inspector", "inspector of a %d-child scatter: slowest page %.1f ms, biggest %d KB (goal ≤ 300 ms and ≤ 300 KB: %s): %s",
		n, ms(worst), biggest/1024, verdict(ok), strings.Join(lines, "; "))
}

const scatterDoc = `
key: fan
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, max_inline_children: 10000, do: {type: task, with: {handler: builtin.echo}}}
  - { ref: all, type: gather, with: { scatter_ref: fan, strategy: partition } }
edges:
  - { from: fan, to: all }
limits: {max_inline_children: 10000}
`

// seedScatterRun writes a finished run of a published scatter of n
// children, one in a hundred failed, each with an attempt and four
// transitions, and an output of every child's outcome.
func (d *dashboard) seedScatterRun(b *testing.B, n int) uuid.UUID {
	b.Helper()
	ctx := context.Background()
	c, err := definition.Compile([]byte(scatterDoc), definition.FormatYAML)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := d.store.DefinitionPublish(ctx, d.tenant.ID, store.Publication{Manifest: c.Manifest, ManifestHash: c.Hash, Source: scatterDoc, SourceFormat: "yaml"}); err != nil {
		b.Fatal(err)
	}
	id := uuid.New()
	d.exec(b, `INSERT INTO run (tenant_id, id, definition_key, definition_version, manifest_hash, status, root_run_id, state, input, created_at, finished_at, transition_count)
		VALUES ($1, $2::uuid, 'fan', 1, $3, 'succeeded', $2::uuid, jsonb_build_object('id', $2::uuid::text, 'status', 'succeeded', 'transition_count', $4::int * 4 + 8),
		jsonb_build_object('items', (SELECT jsonb_agg(i) FROM generate_series(0, $4::int - 1) AS i)), now() - interval '5 minutes', now(), $4::int * 4 + 8)`,
		d.tenant.ID, id, c.Hash, n)
	d.exec(b, `INSERT INTO run_node (tenant_id, run_id, node, ref, state, scatter, child_index, data)
		SELECT $1, $2, 'fan[' || i || ']', 'fan', s, 'fan', i, jsonb_build_object(
			'id', 'fan[' || i || ']', 'ref', 'fan', 'state', s, 'attempt', 1, 'generation', 0,
			'outcome', CASE WHEN s = 'failed' THEN 'error' ELSE 'success' END,
			'output', CASE WHEN s = 'failed' THEN NULL ELSE jsonb_build_object('item', i, 'note', 'echoed') END,
			'error', CASE WHEN s = 'failed' THEN jsonb_build_object('code', 'task_failed', 'message', 'the upstream answered 503') END,
			'child', jsonb_build_object('scatter', 'fan', 'index', i, 'key', i::text, 'item', i),
			'started_at', now() - interval '4 minutes', 'finished_at', now() - interval '3 minutes')
		FROM generate_series(0, $3::int - 1) AS i, LATERAL (SELECT CASE WHEN i % 100 = 7 THEN 'failed' ELSE 'succeeded' END AS s) AS st`,
		d.tenant.ID, id, n)
	out := `(SELECT jsonb_agg(jsonb_build_object('key', i::text, 'state', 'succeeded', 'output', jsonb_build_object('item', i), 'error', NULL)) FROM generate_series(0, $4::int - 1) AS i)`
	d.exec(b, `INSERT INTO run_node (tenant_id, run_id, node, ref, state, data) VALUES
		($1, $2, 'fan', 'fan', 'succeeded', jsonb_build_object('id', 'fan', 'ref', 'fan', 'state', 'succeeded', 'attempt', 1, 'generation', 0,
			'outcome', 'success', 'output', `+out+`, 'scatter', jsonb_build_object('total', $4::int, 'next', $4::int, 'succeeded', $4::int - $4::int / 100, 'failed', $4::int / 100),
			'started_at', $3::timestamptz, 'finished_at', now())),
		($1, $2, 'all', 'all', 'succeeded', jsonb_build_object('id', 'all', 'ref', 'all', 'state', 'succeeded', 'attempt', 1, 'generation', 0, 'outcome', 'success',
			'inbound', jsonb_build_object('fan>all', 'fired')))`,
		d.tenant.ID, id, time.Now().Add(-4*time.Minute), n)
	d.exec(b, `INSERT INTO run_attempt (tenant_id, run_id, node, generation, attempt, started_at, finished_at, output)
		SELECT $1, $2, 'fan[' || i || ']', 0, 1, now() - interval '4 minutes', now() - interval '3 minutes', jsonb_build_object('item', i)
		FROM generate_series(0, $3::int - 1) AS i`, d.tenant.ID, id, n)
	d.exec(b, `INSERT INTO run_history_batch (tenant_id, run_id, last_seq, at, transitions)
		SELECT $1, $2, 4 * i + 4, now() - interval '4 minutes', jsonb_agg(jsonb_build_array(4 * i + k, 'fan[' || i || ']',
			(ARRAY['', 'pending', 'ready', 'running'])[k], (ARRAY['pending', 'ready', 'running', 'succeeded'])[k], 0, CASE WHEN k >= 3 THEN 1 ELSE 0 END, '') ORDER BY k)
		FROM generate_series(0, $3::int - 1) AS i, generate_series(1, 4) AS k GROUP BY i`, d.tenant.ID, id, n)
	d.exec(b, "VACUUM ANALYZE run, run_node, run_attempt, run_history_batch")
	return id
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
