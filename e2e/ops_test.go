package e2e

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// callerTrace and callerSpan are the trace context a caller of POST /runs
// sends: the run must join that trace.
const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// spanSink is a local OTLP/HTTP receiver: it keeps every span exported to
// it.
type spanSink struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (s *spanSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			s.spans = append(s.spans, ss.Spans...)
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

func (s *spanSink) named(prefix string) []*tracepb.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*tracepb.Span
	for _, sp := range s.spans {
		if strings.HasPrefix(sp.Name, prefix) {
			out = append(out, sp)
		}
	}
	return out
}

// opsProcess runs `ductor dev` exporting spans to a local receiver, with
// JSON logs, and a local server that http steps call.
type opsProcess struct {
	*program
	key    string
	sink   *spanSink
	target *httptest.Server
	heard  chan http.Header
}

func startOps(t *testing.T) *opsProcess {
	t.Helper()
	return startOpsWith(t, nil)
}

// startOpsWith is startOps with more environment.
func startOpsWith(t *testing.T, extra map[string]string) *opsProcess {
	t.Helper()
	o := &opsProcess{sink: &spanSink{}, heard: make(chan http.Header, 16)}
	collector := httptest.NewServer(o.sink)
	t.Cleanup(collector.Close)
	o.target = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.heard <- r.Header.Clone()
		fmt.Fprint(w, `{"ok": true}`)
	}))
	t.Cleanup(o.target.Close)
	_, dbURL := testdb.SchemaURL(t)
	env := map[string]string{
		"DATABASE_URL": dbURL, "DUCTOR_ADDR": "127.0.0.1:0", "DUCTOR_LOG_FORMAT": "json",
		"DUCTOR_HTTP_ALLOW": "127.0.0.1/32", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
	}
	for k, v := range extra {
		env[k] = v
	}
	o.program = start(t, env, "dev")
	o.key = o.devKey(t)
	return o
}

func (o *opsProcess) call(t *testing.T, method, path, body string, header map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, o.BaseURL+"/api/v1"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+o.key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func (o *opsProcess) publish(t *testing.T, doc string) {
	t.Helper()
	var d struct{ Key string }
	_ = json.Unmarshal([]byte(doc), &d)
	if code, out := o.call(t, "POST", "/definitions/"+d.Key+"/versions", doc, nil); code != 201 {
		t.Fatalf("publish %s = %d %v", d.Key, code, out)
	}
}

func (o *opsProcess) runTo(t *testing.T, body string, header map[string]string, status string) string {
	t.Helper()
	code, out := o.call(t, "POST", "/runs", body, header)
	if code != 201 {
		t.Fatalf("start = %d %v", code, out)
	}
	id := out["id"].(string)
	testwait.Eventually(t, 30*time.Second, "run "+id+" to be "+status, func() bool {
		_, run := o.call(t, "GET", "/runs/"+id, "", nil)
		return run["status"] == status
	})
	return id
}

// logLines returns the JSON log lines with run_id id.
func (o *opsProcess) logLines(t *testing.T, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(o.Stderr.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			t.Fatalf("log line is not JSON: %s", sc.Text())
		}
		if line["run_id"] == id {
			out = append(out, line)
		}
	}
	return out
}

const tracedDoc = `{"key": "traced", "steps": [{"ref": "call", "type": "http", "with": {"url": "%s/hook", "method": "POST"}}]}`

const flakyDoc = `{"key": "flaky", "steps": [{"ref": "boom", "type": "task",
  "with": {"handler": "builtin.fail", "input_expr": "{\"message\": \"nope\", \"retryable\": true}"},
  "retry": {"max_attempts": 2, "initial_interval": "10ms"}}]}`

// One process, seen as an operator sees it: a run's start, failed
// attempts and end in the log by run_id, with no payload; its spans in
// the caller's trace at a local OTLP receiver, and its trace context on
// the http step's request; and a scrape that promtool accepts.
func TestOperatorSeesRunsInLogsTracesAndMetrics(t *testing.T) {
	t.Parallel()
	o := startOps(t)
	o.publish(t, fmt.Sprintf(tracedDoc, o.target.URL))
	o.publish(t, flakyDoc)
	o.publish(t, bridgeDoc)

	traced := o.runTo(t, `{"definition": "traced", "input": {"card": "4111-secret-card"}}`,
		map[string]string{"traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"}, "succeeded")
	heard := <-o.heard
	failed := o.runTo(t, `{"definition": "flaky", "input": {"password": "hunter2-secret"}}`, nil, "failed")
	_, run := o.call(t, "GET", "/runs/"+traced, "", nil)
	if run["trace_id"] != callerTrace {
		t.Errorf("run trace_id %v, want the caller's %s", run["trace_id"], callerTrace)
	}

	t.Run("logs", func(t *testing.T) { checkRunLogs(t, o, traced, failed) })
	t.Run("metrics", func(t *testing.T) { checkScrape(t, o) })
	if err := o.Stop(t); err != nil { // flushes the spans
		t.Fatal(err)
	}
	t.Run("traces", func(t *testing.T) { checkTrace(t, o, traced, heard) })
}

func checkRunLogs(t *testing.T, o *opsProcess, traced, failed string) {
	var msgs []string
	testwait.Eventually(t, 10*time.Second, "the failed run's end in the log", func() bool {
		msgs = msgs[:0]
		for _, l := range o.logLines(t, failed) {
			msgs = append(msgs, l["msg"].(string))
			for _, k := range []string{"tenant_id", "definition", "trace_id"} {
				if l[k] == nil || l[k] == "" {
					t.Fatalf("log line without %s: %v", k, l)
				}
			}
		}
		return len(msgs) > 0 && msgs[len(msgs)-1] == "run ended"
	})
	want := []string{"run started", "attempt failed; retrying", "attempt failed", "run ended"}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("log lines of the failed run: %q, want %q", msgs, want)
	}
	for _, l := range o.logLines(t, failed) {
		if strings.HasPrefix(l["msg"].(string), "attempt failed") && (l["node"] != "boom" || l["attempt"] == nil || l["error_code"] != "task_failed" || l["duration_ms"] == nil) {
			t.Errorf("attempt line %v: want node, attempt, error_code, duration_ms", l)
		}
		if l["msg"] == "run ended" && (l["status"] != "failed" || l["duration_ms"] == nil) {
			t.Errorf("end line %v", l)
		}
	}
	lines := o.logLines(t, traced)
	if len(lines) != 2 || lines[0]["trace_id"] != callerTrace {
		t.Errorf("log lines of the traced run: %v", lines)
	}
	if log := o.Stderr.String(); strings.Contains(log, "hunter2") || strings.Contains(log, "4111-secret") || strings.Contains(log, "nope") {
		t.Error("a run's input or an error message reached the log")
	}
}

// checkScrape scrapes /metrics after the runs, checks the series an
// operator's alerts use are there, and runs `promtool check metrics` on
// the scrape. Without promtool on PATH (or in $PROMTOOL) that last check
// is skipped, unless DUCTOR_REQUIRE_PROMTOOL is set (make test sets it).
func checkScrape(t *testing.T, o *opsProcess) {
	code, _ := o.call(t, "GET", "/runs/00000000-0000-4000-8000-000000000000", "", nil)
	if code != 404 {
		t.Fatalf("unknown run = %d", code)
	}
	o.traffic(t)
	status, body := get(t, o.BaseURL+"/metrics", "")
	if status != 200 {
		t.Fatalf("/metrics = %d", status)
	}
	for _, series := range []string{
		`ductor_build_info{goversion=`, `ductor_runs_started_total{definition="flaky"} 1`,
		`ductor_runs_finished_total{definition="flaky",status="failed"} 1`,
		`ductor_step_attempts_total{outcome="failed",type="task"} 2`, `ductor_step_retries_total{type="task"} 1`,
		`ductor_step_schedule_to_start_seconds_bucket{handler="builtin.fail",tier="interactive",type="task"`,
		`ductor_step_duration_seconds_bucket{code="success",handler="",tier="interactive",type="http",le="86400"}`,
		`ductor_http_requests_total{method="POST",route="/api/v1/runs",status="201"} 6`,
		`ductor_http_requests_total{method="GET",route="/api/v1/runs/:id",status="404"} 1`,
		`ductor_db_pool_acquired_connections`, `ductor_prune_last_success_timestamp_seconds`, `ductor_tick_duration_seconds_bucket`,
	} {
		if !strings.Contains(body, series) {
			t.Errorf("scrape lacks %s", series)
		}
	}
	for _, name := range deployedMetrics(t) {
		if !strings.Contains(body, "# TYPE "+name+" ") && name != "ductor_metrics_scrape_errors_total" { // that one only counts failures
			t.Errorf("deploy/ uses %s, which the scrape lacks", name)
		}
	}
	promtoolCheck(t, body)
}

// promtoolCheck runs `promtool check metrics` on a scrape. Without
// promtool on PATH (or in $PROMTOOL) it skips the test, unless
// DUCTOR_REQUIRE_PROMTOOL is set (make test sets it).
func promtoolCheck(t *testing.T, body string) {
	t.Helper()
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		promtool, _ = exec.LookPath("promtool")
	}
	if promtool == "" {
		if os.Getenv("DUCTOR_REQUIRE_PROMTOOL") != "" {
			t.Fatal("promtool is required (DUCTOR_REQUIRE_PROMTOOL) but not found")
		}
		t.Skip("promtool not found: `make test` installs it")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}

func checkTrace(t *testing.T, o *opsProcess, id string, heard http.Header) {
	runs := o.sink.named("run traced")
	attempts := o.sink.named("attempt call")
	var ticks []*tracepb.Span
	for _, tick := range o.sink.named("tick") {
		for _, a := range tick.Attributes {
			if a.Key == "ductor.run_id" && a.Value.GetStringValue() == id {
				ticks = append(ticks, tick)
			}
		}
	}
	if len(runs) != 1 || len(attempts) != 1 || len(ticks) == 0 {
		t.Fatalf("spans: %d run, %d attempt, %d tick; want 1, 1, some", len(runs), len(attempts), len(ticks))
	}
	run, attempt := runs[0], attempts[0]
	if hex.EncodeToString(run.TraceId) != callerTrace || hex.EncodeToString(run.ParentSpanId) != callerSpan {
		t.Errorf("run span in trace %x under %x, want the caller's %s under %s", run.TraceId, run.ParentSpanId, callerTrace, callerSpan)
	}
	if !bytes.Equal(attempt.TraceId, run.TraceId) || !bytes.Equal(attempt.ParentSpanId, run.SpanId) {
		t.Errorf("attempt span is not the run span's child")
	}
	for _, tick := range ticks {
		if !bytes.Equal(tick.TraceId, run.TraceId) || !bytes.Equal(tick.ParentSpanId, run.SpanId) {
			t.Errorf("tick span %x is not in the run's trace under the run span", tick.SpanId)
		}
	}
	want := fmt.Sprintf("00-%s-%x-01", callerTrace, attempt.SpanId)
	if got := heard.Get("Traceparent"); got != want {
		t.Errorf("the http step sent traceparent %q, want the attempt's %q", got, want)
	}
	if !strings.HasPrefix(heard.Get("User-Agent"), "Ductor/") {
		t.Errorf("User-Agent %q", heard.Get("User-Agent"))
	}
}

const bridgeDoc = `{"key": "bridged", "steps": [{"ref": "work", "type": "task", "with": {"handler": "ext.work"}}]}`

// heldDoc holds a concurrency slot, and its step a slot of a step pool,
// until its bridge task is answered (never, here).
const heldDoc = `{"key": "held", "concurrency": [{"key_expr": "'ops'", "limit": 1}],
  "steps": [{"ref": "work", "type": "task", "with": {"handler": "ext.held"}, "concurrency": {"key_expr": "'ops-pool'", "limit": 1}}]}`

// traffic makes every kind of series the deploy/ files use appear: a
// bridge task claimed and one waiting, a signal and an event, and a run
// and a step under flow control.
func (o *opsProcess) traffic(t *testing.T) {
	t.Helper()
	o.publish(t, heldDoc)
	for range 2 { // one runs, one waits for its slot
		if code, out := o.call(t, "POST", "/runs", `{"definition": "held"}`, nil); code != 201 {
			t.Fatalf("start = %d %v", code, out)
		}
	}
	var ids []string
	for range 2 {
		code, out := o.call(t, "POST", "/runs", `{"definition": "bridged"}`, nil)
		if code != 201 {
			t.Fatalf("start = %d %v", code, out)
		}
		ids = append(ids, out["id"].(string))
	}
	code, out := o.call(t, "POST", "/tasks/poll", `{"handlers": ["ext.work"], "max": 1, "wait_ms": 5000}`, nil)
	if tasks, _ := out["tasks"].([]any); code != 200 || len(tasks) != 1 {
		t.Fatalf("poll = %d %v", code, out)
	}
	task := out["tasks"].([]any)[0].(map[string]any)
	if code, _ := o.call(t, "POST", "/tasks/"+task["id"].(string)+"/heartbeat", `{"token": "wrong"}`, nil); code != 409 {
		t.Fatalf("heartbeat with a wrong token = %d", code)
	}
	if code, _ := o.call(t, "POST", "/tasks/"+task["id"].(string)+"/fail", `{"token": "wrong", "error": {"message": "x"}}`, nil); code != 409 {
		t.Fatalf("fail with a wrong token = %d", code)
	}
	if code, out := o.call(t, "POST", "/runs/"+ids[0]+"/signals", `{"request_id": "r1", "name": "nobody-waits"}`, nil); code != 202 {
		t.Fatalf("signal = %d %v", code, out)
	}
	if code, out := o.call(t, "POST", "/events", `{"name": "nobody-listens"}`, nil); code != 202 {
		t.Fatalf("event = %d %v", code, out)
	}
}

// deployedMetrics are the metric names the Grafana dashboard and the
// alert rules in deploy/ use.
func deployedMetrics(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range []string{"../deploy/grafana/ductor-dashboard.json", "../deploy/prometheus/ductor-alerts.yml"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".json") && !json.Valid(raw) {
			t.Errorf("%s is not JSON", f)
		}
		for _, m := range metricName.FindAllString(string(raw), -1) {
			seen[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")] = true
		}
	}
	var out []string
	for m := range seen {
		out = append(out, m)
	}
	return out
}

var metricName = regexp.MustCompile(`ductor_[a-z_]+`)
