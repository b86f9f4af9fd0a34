package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/app/version"
)

// devBundle is `ductor dev` running in-process on a test schema, and the
// environment the CLI's API and admin commands see.
type devBundle struct {
	vars map[string]string
	dir  string
}

var devKeyLine = regexp.MustCompile(`Dev API key \(tenant dev\): (dk_\S+)`)

func startDev(t *testing.T) *devBundle {
	t.Helper()
	_, url := testdb.SchemaURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out lockedBuffer
	ready, done := make(chan string, 1), make(chan error, 1)
	env := map[string]string{"DATABASE_URL": url, "DUCTOR_ADDR": "127.0.0.1:0", "DUCTOR_API_RATE": "0"}
	go func() {
		done <- Run(ctx, []string{"dev"}, Env{
			Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &lockedBuffer{},
			Ready: func(addr string) { ready <- addr },
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("dev stopped: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("dev did not listen")
	}
	m := devKeyLine.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("dev printed no key: %s", out.String())
	}
	return &devBundle{
		vars: map[string]string{"DUCTOR_URL": "http://" + addr, "DUCTOR_API_KEY": m[1], "DATABASE_URL": url},
		dir:  t.TempDir(),
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// ductor runs a command and fails the test if it fails.
func (b *devBundle) ductor(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := b.try(args...)
	if err != nil {
		t.Fatalf("ductor %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

func (b *devBundle) try(args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	env := Env{Getenv: func(k string) string { return b.vars[k] }, Stdout: &out, Stderr: &errOut}
	err := Run(context.Background(), args, env)
	return out.String(), errOut.String(), err
}

// json runs a read command with --output json and decodes its answer.
func (b *devBundle) json(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var v map[string]any
	out := b.ductor(t, append(args, "--output", "json")...)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("ductor %v printed %q: %v", args, out, err)
	}
	return v
}

func (b *devBundle) apply(t *testing.T, name, doc string) {
	t.Helper()
	path := filepath.Join(b.dir, name)
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	b.ductor(t, "apply", "-f", path)
}

// waitRun polls `run get` until cond holds for the run.
func (b *devBundle) waitRun(t *testing.T, id string, cond func(run map[string]any) bool) map[string]any {
	t.Helper()
	var run map[string]any
	if !testwait.Until(context.Background(), 30*time.Second, func() bool {
		run = b.json(t, "run", "get", id)
		return cond(run)
	}) {
		t.Fatalf("run %s never got there: %v", id, run)
	}
	return run
}

func status(want string) func(map[string]any) bool {
	return func(r map[string]any) bool { return r["status"] == want }
}

func (b *devBundle) start(t *testing.T, key string, extra ...string) string {
	t.Helper()
	return strings.TrimSpace(b.ductor(t, append([]string{"run", "start", key}, extra...)...))
}

const verbDefinitions = `key: verbs-ok
steps:
  - {ref: hi, type: transform, with: {expr: '"hi"'}}
---
key: verbs-fail
steps:
  - {ref: boom, type: task, with: {handler: builtin.fail, input_expr: '{"message": "boom"}'}}
---
key: verbs-gate
steps:
  - {ref: go, type: signal, with: {name: go}}
---
key: verbs-approve
steps:
  - {ref: ok, type: approval, with: {approvers: ['key:dev'], title: Ship it}}
---
key: verbs-case
steps:
  - {ref: work, type: human_loop, with: {title: Check it}}
`

// TestVerbs drives every API and admin verb against one dev server.
func TestVerbs(t *testing.T) {
	t.Parallel()
	b := startDev(t)
	b.apply(t, "verbs.yaml", verbDefinitions)

	t.Run("definition list get unpublish", func(t *testing.T) {
		list := b.json(t, "definition", "list")
		if n := len(list["definitions"].([]any)); n != 5 {
			t.Fatalf("definition list has %d definitions, want 5: %v", n, list)
		}
		page := b.json(t, "definition", "list", "--limit", "2")
		if page["next_cursor"] == nil {
			t.Fatalf("a page of 2 of 5 has no next_cursor: %v", page)
		}
		if next := b.json(t, "definition", "list", "--limit", "2", "--cursor", page["next_cursor"].(string)); len(next["definitions"].([]any)) != 2 {
			t.Fatalf("the second page = %v", next)
		}
		def := b.json(t, "definition", "get", "verbs-ok")
		if def["latest_version"] != 1.0 {
			t.Fatalf("definition get = %v", def)
		}
		v := b.json(t, "definition", "get", "verbs-ok", "--version", "1")
		if !strings.Contains(v["source"].(string), "verbs-ok") {
			t.Fatalf("definition get --version 1 = %v", v)
		}
		if out := b.ductor(t, "definition", "unpublish", "verbs-ok", "1"); out != "verbs-ok v1 unpublished\n" {
			t.Fatalf("unpublish printed %q", out)
		}
		if _, _, err := b.try("run", "start", "verbs-ok"); err == nil {
			t.Fatal("a run of a definition without a published version started")
		}
		b.apply(t, "again.yaml", strings.Replace(strings.SplitN(verbDefinitions, "---", 2)[0], `"hi"`, `"hello"`, 1))
	})

	t.Run("run list history cursor", func(t *testing.T) {
		ids := []string{b.start(t, "verbs-ok"), b.start(t, "verbs-ok"), b.start(t, "verbs-ok")}
		for _, id := range ids {
			b.waitRun(t, id, status("succeeded"))
		}
		page := b.json(t, "run", "list", "--definition", "verbs-ok", "--limit", "2")
		next, _ := page["next_cursor"].(string)
		if len(page["runs"].([]any)) != 2 || next == "" {
			t.Fatalf("run list --limit 2 = %v", page)
		}
		rest := b.json(t, "run", "list", "--definition", "verbs-ok", "--limit", "2", "--cursor", next)
		if runs := rest["runs"].([]any); len(runs) != 1 || runs[0].(map[string]any)["id"] != ids[0] {
			t.Fatalf("run list --cursor = %v, want the oldest run %s", rest, ids[0])
		}
		hist := b.json(t, "run", "history", ids[0])
		if n := len(hist["transitions"].([]any)); n < 3 {
			t.Fatalf("history of a finished run has %d transitions: %v", n, hist)
		}
		table := b.ductor(t, "run", "history", ids[0], "--output", "table")
		if !strings.HasPrefix(table, "SEQ") || !strings.Contains(table, "succeeded") {
			t.Fatalf("run history table = %q", table)
		}
		if table := b.ductor(t, "run", "list", "--limit", "1", "--output", "table"); !strings.Contains(table, "next page: ductor run list --cursor ") {
			t.Fatalf("run list table = %q", table)
		}
	})

	t.Run("run cancel", func(t *testing.T) {
		id := b.start(t, "verbs-gate")
		b.waitRun(t, id, status("waiting"))
		if out := b.ductor(t, "run", "cancel", id, "--reason", "not needed"); !strings.Contains(out, "cancelling run "+id) {
			t.Fatalf("run cancel printed %q", out)
		}
		b.waitRun(t, id, status("cancelled"))
	})

	t.Run("run retry", func(t *testing.T) {
		id := b.start(t, "verbs-fail")
		b.waitRun(t, id, status("failed"))
		b.ductor(t, "run", "retry", id, "boom")
		b.waitRun(t, id, func(r map[string]any) bool {
			n := r["nodes"].([]any)[0].(map[string]any)
			return n["generation"] == 1.0 && r["status"] == "failed"
		})
	})

	t.Run("approval list decide", func(t *testing.T) {
		id := b.start(t, "verbs-approve")
		b.waitRun(t, id, status("waiting"))
		approval := find(t, b.json(t, "approval", "list", "--status", "pending"), "approvals", id)
		if out := b.ductor(t, "approval", "decide", approval, "approve", "--comment", "fine"); out != "approval "+approval+": approved\n" {
			t.Fatalf("approval decide printed %q", out)
		}
		b.waitRun(t, id, status("succeeded"))
		if _, _, err := b.try("approval", "decide", approval, "maybe"); !errors.Is(err, ErrUsage) {
			t.Fatalf("decide maybe = %v", err)
		}
	})

	t.Run("case list update", func(t *testing.T) {
		id := b.start(t, "verbs-case")
		b.waitRun(t, id, status("waiting"))
		kase := find(t, b.json(t, "case", "list"), "cases", id)
		b.ductor(t, "case", "update", kase, "--status", "working", "--data", `{"note": "on it"}`)
		if got := b.json(t, "case", "get", kase); got["data"].(map[string]any)["note"] != "on it" {
			t.Fatalf("case get = %v", got)
		}
		for _, c := range b.json(t, "case", "list", "--include", "data")["cases"].([]any) {
			if c := c.(map[string]any); c["id"] == kase && c["data"].(map[string]any)["note"] != "on it" {
				t.Fatalf("case list --include data = %v", c)
			}
		}
		if run := b.json(t, "run", "get", id); run["status"] != "waiting" {
			t.Fatalf("a case set to working resumed its run: %v", run)
		}
		b.ductor(t, "case", "update", kase, "--status", "resolved")
		run := b.waitRun(t, id, status("succeeded"))
		if out := run["output"].(map[string]any)["work"].(map[string]any); out["note"] != "on it" {
			t.Fatalf("run output = %v, want the case's data", run["output"])
		}
	})

	t.Run("apikey list revoke", func(t *testing.T) {
		key := strings.TrimSpace(b.ductor(t, "apikey", "create", "--tenant", "dev", "--name", "temp", "--scope", "runs:read"))
		var id string
		for _, k := range b.json(t, "apikey", "list", "--tenant", "dev")["api_keys"].([]any) {
			if k := k.(map[string]any); k["name"] == "temp" {
				id = k["id"].(string)
				if !strings.HasPrefix(key, k["prefix"].(string)) || k["revoked_at"] != nil {
					t.Fatalf("listed key %v does not match %s", k, key[:8])
				}
			}
		}
		if id == "" {
			t.Fatal("apikey list does not show the new key")
		}
		if whoami(t, b, key) != http.StatusOK {
			t.Fatal("the new key does not work")
		}
		if out := b.ductor(t, "apikey", "revoke", "--tenant", "dev", id); !strings.HasPrefix(out, "revoked ") {
			t.Fatalf("apikey revoke printed %q", out)
		}
		if whoami(t, b, key) != http.StatusUnauthorized {
			t.Fatal("a revoked key still works")
		}
		if table := b.ductor(t, "apikey", "list", "--tenant", "dev", "--output", "table"); !strings.Contains(table, "temp") || !strings.HasPrefix(table, "ID") {
			t.Fatalf("apikey list table = %q", table)
		}
	})

	t.Run("tenant list", func(t *testing.T) {
		b.ductor(t, "tenant", "create", "second")
		list := b.json(t, "tenant", "list")["tenants"].([]any)
		if len(list) != 2 || list[0].(map[string]any)["slug"] != "dev" || list[1].(map[string]any)["slug"] != "second" {
			t.Fatalf("tenant list = %v", list)
		}
		if table := b.ductor(t, "tenant", "list", "--output", "table"); !strings.Contains(table, "second") {
			t.Fatalf("tenant list table = %q", table)
		}
	})
}

// find returns the id of the list's item of the run.
func find(t *testing.T, v map[string]any, list, run string) string {
	t.Helper()
	for _, x := range v[list].([]any) {
		if x := x.(map[string]any); x["run_id"] == run {
			return x["id"].(string)
		}
	}
	t.Fatalf("no %s of run %s in %v", list, run, v)
	return ""
}

func whoami(t *testing.T, b *devBundle, key string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", b.vars["DUCTOR_URL"]+"/api/v1/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Every command and subcommand answers -h without a key or a database.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	var cases [][]string
	for _, c := range commands() {
		cases = append(cases, []string{c.name, "-h"})
		for _, s := range subNamesOf(c.name) {
			cases = append(cases, []string{c.name, s, "-h"})
		}
	}
	for _, args := range cases {
		var out bytes.Buffer
		err := Run(context.Background(), args, Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &out})
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Errorf("ductor %s: %v", strings.Join(args, " "), err)
			continue
		}
		if !strings.Contains(out.String(), "Usage: ductor "+args[0]) {
			t.Errorf("ductor %s printed %q", strings.Join(args, " "), out.String())
		}
	}
}

// Mistakes are said in one line, without a usage dump.
func TestUsageErrorsArePlain(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"frobnicate"}, {"run"}, {"run", "get"}, {"run", "frob"}, {"run", "get", "--bogus"}, {"definition", "unpublish", "k", "x"}, {"apply"}} {
		var out bytes.Buffer
		err := Run(context.Background(), args, Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &out})
		if err == nil {
			t.Errorf("ductor %v succeeded", args)
			continue
		}
		if msg := err.Error(); strings.HasPrefix(msg, "usage") || strings.Contains(msg, "\n") || strings.Contains(out.String(), "Usage") {
			t.Errorf("ductor %v: %q, printed %q", args, msg, out.String())
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out bytes.Buffer
		if err := Run(context.Background(), args, Env{Getenv: func(string) string { return "" }, Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^ductor \S+ \(go1\.\d+`).MatchString(out.String()) {
			t.Errorf("%v printed %q", args, out.String())
		}
		// One version everywhere: /healthz, the User-Agent and
		// ductor_build_info report app/version's too.
		if want := "ductor " + version.String() + " (" + version.GoVersion() + ")\n"; out.String() != want {
			t.Errorf("%v printed %q, want %q", args, out.String(), want)
		}
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		var out bytes.Buffer
		if err := Run(context.Background(), []string{"completion", shell}, Env{Stdout: &out, Getenv: os.Getenv}); err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"definition", "approval", "unpublish", "history"} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s completion lacks %q", shell, w)
			}
		}
		if shell == "bash" {
			cmd := exec.Command("bash", "-n")
			cmd.Stdin = &out
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v %s", err, msg)
			}
		}
	}
	if err := Run(context.Background(), []string{"completion", "tcsh"}, Env{Stdout: &bytes.Buffer{}}); !errors.Is(err, ErrUsage) {
		t.Errorf("completion tcsh = %v", err)
	}
}
