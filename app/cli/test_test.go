package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testVerbFile = `
definition:
  key: verb-test
  steps:
    - {ref: fetch, type: http, with: {url: "https://x.example"}}
    - {ref: twice, type: transform, with: {expr: 'steps.fetch.output.n * 2'}}
  edges: [{from: fetch, to: twice}]
tests:
  - name: doubles
    mocks: {fetch: {output: {n: 21}}}
    expect: {status: succeeded, output: {twice: 42}}
  - name: wrong on purpose
    mocks: {fetch: {output: {n: 1}}}
    expect: {status: succeeded, output: {twice: 3}}
`

func runTestVerb(args ...string) (string, error) {
	var out, errOut lockedBuffer
	err := Run(context.Background(), append([]string{"test"}, args...), Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errOut})
	return out.String(), err
}

// ductor test prints a line per test and a diff for a failure, exits
// non-zero on one, filters with -run, writes JUnit XML and, with
// --update, the observed outcome as the expectation.
func TestTestVerbRunsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "verb.test.yaml")
	if err := os.WriteFile(path, []byte(testVerbFile), 0o600); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "report.xml")
	out, err := runTestVerb(dir, "--junit", junit)
	if !errors.Is(err, errTestsFailed) {
		t.Fatalf("err %v, want tests failed\n%s", err, out)
	}
	for _, want := range []string{"ok   " + path + ": doubles", "FAIL " + path + ": wrong on purpose", `-   "twice": 3`, `+   "twice": 2`, "1 passed, 1 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	xml, _ := os.ReadFile(junit)
	if !strings.Contains(string(xml), `<testsuite name="`+path+`" tests="2" failures="1">`) || !strings.Contains(string(xml), "<failure message=") {
		t.Errorf("junit report:\n%s", xml)
	}
	if out, err := runTestVerb(path, "-run", "doub"); err != nil || strings.Contains(out, "wrong") {
		t.Errorf("-run doub: %v\n%s", err, out)
	}
	if out, err := runTestVerb("--update", path); !errors.Is(err, errTestsFailed) {
		t.Errorf("--update reports the failures it fixed: %v\n%s", err, out)
	}
	if out, err := runTestVerb(path); err != nil {
		t.Errorf("after --update: %v\n%s", err, out)
	}
}

// Every cookbook recipe's tests pass through the command.
func TestTestVerbCookbook(t *testing.T) {
	t.Parallel()
	out, err := runTestVerb("../../docs/cookbook")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

const replayVerbDef = `key: replay-verb
steps:
  - {ref: a, type: task, with: {handler: builtin.echo, input_expr: '{"n": input.n}'}}
  - {ref: fan, type: scatter, with: {items_expr: '[1, 2, 3]', concurrency: 2, do: {type: task, with: {handler: builtin.echo}}}}
  - {ref: go, type: signal, with: {name: go}}
  - {ref: big, type: condition, with: {expr: 'steps.a.output.n > 10'}}
  - {ref: "yes", type: transform, with: {expr: '"big"'}}
  - {ref: "no", type: transform, with: {expr: '"small"'}}
edges:
  - {from: a, to: fan}
  - {from: fan, to: go}
  - {from: go, to: big}
  - {from: big, to: "yes", on: "true"}
  - {from: big, to: "no", on: "false"}
`

// --replay of a real run through its unchanged definition finds no
// difference; through a version with a changed condition it names the
// node and the transition where the two part.
func TestTestVerbReplay(t *testing.T) {
	t.Parallel()
	b := startDev(t)
	b.apply(t, "replay.yaml", replayVerbDef)
	id := b.start(t, "replay-verb", "--input", `{"n": 20}`)
	b.waitRun(t, id, status("waiting"))
	b.ductor(t, "signal", id, "go", "--request-id", "r1")
	b.waitRun(t, id, status("succeeded"))
	out := b.ductor(t, "test", "--replay", id)
	if !strings.Contains(out, "no difference") {
		t.Fatalf("unchanged: %s", out)
	}
	changed := filepath.Join(b.dir, "changed.yaml")
	if err := os.WriteFile(changed, []byte(strings.Replace(replayVerbDef, "n > 10", "n > 100", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := b.try("test", "--replay", id, "--definition", changed)
	if !errors.Is(err, errTestsFailed) || !strings.Contains(out, "big diverges at transition") || !strings.Contains(out, "recorded running → succeeded (true), replayed running → succeeded (false)") {
		t.Fatalf("changed: %v\n%s", err, out)
	}
}
