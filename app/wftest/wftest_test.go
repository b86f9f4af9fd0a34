package wftest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const gateDef = `
key: gate
steps:
  - {ref: fetch, type: http, with: {url: "https://x.example"}, retry: {max_attempts: 3, initial_interval: 1s}}
  - {ref: big, type: condition, with: {expr: 'steps.fetch.output.n > 10'}}
  - {ref: ok, type: approval, with: {approvers: ['role:owner'], timeout: 72h}}
  - {ref: small, type: transform, with: {expr: '"small"'}}
edges:
  - {from: fetch, to: big}
  - {from: big, to: ok, on: "true"}
  - {from: big, to: small, on: "false"}
`

func runner(t *testing.T) *Runner {
	t.Helper()
	r, err := NewRunner()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func parseFile(t *testing.T, src string) *File {
	t.Helper()
	f, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRunDecidesAsExpected(t *testing.T) {
	t.Parallel()
	r := runner(t)
	f := parseFile(t, `
definition: {key: k, steps: [{ref: a, type: task, with: {handler: h}}]}
tests:
  - name: retried twice
    mocks:
      a: [{error: {code: e, retryable: true}}, {timeout: true}, {output: {x: 1}}]
`)
	doc, _ := f.DefinitionDoc()
	m, err := Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	// The default retry policy retries the error and the timeout.
	o, err := r.Run(context.Background(), m, f.Tests[0], DefaultStart)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "succeeded" || o.Attempts["a"] != 3 || o.Output.(map[string]any)["a"].(map[string]any)["x"] != int64(1) {
		t.Fatalf("got %s, %d attempts, %v", o.Status, o.Attempts["a"], o.Output)
	}
}

func TestVirtualTimeSkipsToTimers(t *testing.T) {
	t.Parallel()
	r := runner(t)
	m, err := Compile([]byte(gateDef))
	if err != nil {
		t.Fatal(err)
	}
	c := Case{Mocks: map[string]MockList{"fetch": {{Error: &MockError{Code: "e", Retryable: true}}, {Output: map[string]any{"n": 20}}}}}
	start := time.Now()
	o, err := r.Run(context.Background(), m, c, DefaultStart)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "failed" || o.Nodes["ok"] != "failed" || o.Attempts["fetch"] != 2 {
		t.Fatalf("got %+v", o)
	}
	if !strings.HasPrefix(o.Duration, "72h0m") {
		t.Errorf("duration %s, want 72h and a retry's backoff", o.Duration)
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("took %s", took)
	}
}

func TestCheckReportsEachDifference(t *testing.T) {
	t.Parallel()
	r := runner(t)
	f := parseFile(t, `
definition: {key: k, steps: [{ref: a, type: transform, with: {expr: '{"n": 1, "s": "x"}'}}, {ref: b, type: transform, with: {expr: '2'}}], edges: [{from: a, to: b}]}
tests:
  - name: wrong
    expect:
      status: failed
      output: {b: 3}
      nodes: {a: skipped, zz: succeeded}
      order: [b, a]
      assert: ['steps.a.output.n == 2', 'steps.a.output.s == "x"', 'nosuch.x']
`)
	res, err := r.RunFile(context.Background(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(res[0].Failures, "\n")
	for _, want := range []string{
		"status: got succeeded, want failed",
		"output differs (-want +got)",
		`-   "b": 3`,
		`+   "b": 2`,
		"nodes.a: got succeeded, want skipped",
		"nodes.zz: no such node",
		`order: "a" not found`,
		"assert steps.a.output.n == 2: false",
		"assert nosuch.x:",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("failures lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `s == "x"`) {
		t.Errorf("a true assertion reported:\n%s", got)
	}
}

func TestMissingMockAndStuckRun(t *testing.T) {
	t.Parallel()
	r := runner(t)
	m, err := Compile([]byte(gateDef))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), m, Case{}, DefaultStart); !errors.Is(err, ErrNoMock) {
		t.Fatalf("got %v, want ErrNoMock", err)
	}
	sig, _ := Compile([]byte(`{"key": "s", "steps": [{"ref": "s", "type": "signal", "with": {"name": "go"}}]}`))
	o, err := r.Run(context.Background(), sig, Case{}, DefaultStart)
	if err != nil || !o.Stuck || o.Status != "waiting" {
		t.Fatalf("got %+v, %v; want a stuck waiting run", o, err)
	}
}

func TestUpdateWritesObservedKeepingComments(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.test.yaml")
	src := `# keep me
definition: {key: k, steps: [{ref: a, type: transform, with: {expr: '7'}}]}
tests:
  - name: no expect yet
  - name: wrong expect
    expect: {status: failed}
  - name: right expect # and me
    expect: {status: succeeded}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r := runner(t)
	res, _ := r.RunFile(context.Background(), f, nil)
	text, err := Update(f, res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), "# keep me") || !strings.Contains(string(raw), "# and me") {
		t.Errorf("comments lost:\n%s", raw)
	}
	f2, err := Load(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	res2, _ := r.RunFile(context.Background(), f2, nil)
	for _, x := range res2 {
		if !x.Passed() {
			t.Errorf("%s after update: %v %v\n%s", x.Name, x.Err, x.Failures, raw)
		}
	}
	if f2.Tests[2].Expect.Nodes != nil {
		t.Errorf("a passing case was rewritten:\n%s", raw)
	}
}

func TestFilterSelectsByName(t *testing.T) {
	t.Parallel()
	f := parseFile(t, `
definition: {key: k, steps: [{ref: a, type: transform, with: {expr: '1'}}]}
tests: [{name: alpha, expect: {status: succeeded}}, {name: beta, expect: {status: succeeded}}]
`)
	res, err := runner(t).RunFile(context.Background(), f, regexpMust(t, "^b"))
	if err != nil || len(res) != 1 || res[0].Name != "beta" {
		t.Fatalf("got %+v, %v", res, err)
	}
}

// The runner stays pure: no database, web framework or queue among its
// imports, no clock read and no file written (it only reads test files).
func TestRunnerStaysPure(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range []string{"github.com/jackc/pgx", "github.com/labstack/echo", "github.com/riverqueue/river", "github.com/ductor/ductor/app/store", "net/http", "database/sql"} {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("imports %s", dep)
			}
		}
	}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, _ := os.ReadFile(f)
		for _, clock := range []string{"time.Now(", "time.Since(", "time.Sleep(", "time.After(", "time.NewTimer("} {
			if strings.Contains(string(src), clock) {
				t.Errorf("%s reads the clock: %s", f, clock)
			}
		}
		for _, write := range []string{"os.WriteFile(", "os.Create(", "os.OpenFile(", "os.Remove("} {
			if strings.Contains(string(src), write) {
				t.Errorf("%s writes files: %s", f, write)
			}
		}
	}
}

// An event is offered only to the nodes waiting for it when it arrives:
// one sent before its step waits is gone, as on a server.
func TestEventBeforeItsWaitIsLost(t *testing.T) {
	t.Parallel()
	f := parseFile(t, `
definition:
  key: ev
  steps:
    - {ref: pause, type: wait, with: {duration: 1h}}
    - {ref: paid, type: event, with: {name: paid, timeout: 2h, on_timeout: skip}}
  edges: [{from: pause, to: paid}]
tests:
  - name: too early
    deliver: [{at: 30m, event: {name: paid}}]
    expect: {status: succeeded, nodes: {paid: skipped}, duration: 3h0m0s}
  - name: in time
    deliver: [{at: 90m, event: {name: paid, data: {n: 1}}}]
    expect: {status: succeeded, output: {paid: {n: 1}}, duration: 1h30m0s}
`)
	res, err := runner(t).RunFile(context.Background(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res {
		if !x.Passed() {
			t.Errorf("%s: %v %v", x.Name, x.Err, x.Failures)
		}
	}
}

// ParseCases takes the cases apart from their definition (a definition
// the text names is not read), and a run stops when its context ends.
func TestParseCasesAndAStoppedRun(t *testing.T) {
	t.Parallel()
	def := []byte(`{"key": "k", "steps": [{"ref": "w", "type": "wait", "with": {"duration": "1h"}}]}`)
	f, err := ParseCases([]byte("definition: /nonexistent\ntests:\n  - name: waits\n    expect: {status: succeeded, duration: 1h0m0s}\n"), def)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compile(def)
	if err != nil {
		t.Fatal(err)
	}
	r := runner(t)
	if res := r.RunCases(context.Background(), f, m, nil, nil); len(res) != 1 || !res[0].Passed() {
		t.Fatalf("the case: %+v", res)
	}
	if l, err := ParseCases([]byte("- name: alone\n"), def); err != nil || len(l.Tests) != 1 || l.Tests[0].Name != "alone" {
		t.Fatalf("the list alone: %+v, %v", l, err)
	}
	if _, err := ParseCases([]byte("42"), def); err == nil {
		t.Fatal("a number parsed as cases")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := r.RunCases(ctx, f, m, nil, nil)
	if len(res) != 1 || res[0].Err == nil || !errors.Is(res[0].Err, context.Canceled) {
		t.Fatalf("a cancelled run: %+v", res)
	}
}
