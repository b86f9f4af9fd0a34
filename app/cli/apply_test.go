package cli

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

const applyOrders = `key: orders
steps:
  - {ref: total, type: transform, with: {expr: "input.amount * 2.0"}}
`

// The file name gives the key of a document without one.
const applyHello = `{"steps": [{"ref": "hi", "type": "transform", "with": {"expr": "'hi'"}}]}`

// applyBundle is an in-process API server over a test schema, with a
// tenant's admin key in the environment `ductor` sees.
type applyBundle struct {
	store  *store.Store
	tenant store.Tenant
	vars   map[string]string
	dir    string
}

func setupApply(t *testing.T) *applyBundle {
	t.Helper()
	pool, url := testdb.SchemaURL(t)
	s := store.New(pool)
	srv := httptest.NewServer(server.New(server.Deps{Pool: pool, Store: s, Logger: slog.New(slog.DiscardHandler), API: true}))
	t.Cleanup(srv.Close)
	b := &applyBundle{store: s, tenant: testdb.Tenant(t, s, nil), dir: t.TempDir()}
	_, key := testdb.APIKey(t, s, b.tenant, nil)
	b.vars = map[string]string{"DUCTOR_URL": srv.URL, "DUCTOR_API_KEY": key, "DATABASE_URL": url}
	return b
}

// file writes a file under the bundle's directory and returns its path.
func (b *applyBundle) file(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(b.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs `ductor ARGS…` in-process and returns its stdout and stderr.
func (b *applyBundle) run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := Env{Getenv: func(k string) string { return b.vars[k] }, Stdout: &out, Stderr: &errOut}
	err := Run(context.Background(), args, env)
	return out.String(), errOut.String(), err
}

func hashOf(t *testing.T, doc string) string {
	t.Helper()
	c, err := definition.Compile([]byte(doc), definition.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	return c.Hash
}

func TestApplyPublishes(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	orders, hello := b.file(t, "orders.yaml", applyOrders), b.file(t, "hello.json", applyHello)
	out, errOut, err := b.run(t, "apply", "-f", orders, "-f", hello)
	want := "orders v1 " + hashOf(t, applyOrders) + " (created)\nhello v1 " + hashOf(t, `{"key": "hello", `+applyHello[1:]) + " (created)\n"
	if err != nil || out != want {
		t.Fatalf("apply = %q %q %v, want %q", out, errOut, err, want)
	}
	out, _, err = b.run(t, "apply", "-f", orders, hello)
	if err != nil || strings.Count(out, "(unchanged)") != 2 || !strings.Contains(out, "orders v1 ") {
		t.Fatalf("apply again = %q, %v; want both unchanged", out, err)
	}
	b.file(t, "orders.yaml", strings.Replace(applyOrders, "2.0", "3.0", 1))
	if out, _, err := b.run(t, "apply", "-f", orders); err != nil || !strings.HasPrefix(out, "orders v2 ") || !strings.HasSuffix(out, "(created)\n") {
		t.Fatalf("apply a change = %q, %v; want v2 created", out, err)
	}
	v, err := b.store.DefinitionVersionGet(context.Background(), b.tenant.ID, "hello", 1)
	if err != nil || v.SourceFormat != "json" || !strings.Contains(v.Source, `"key": "hello"`) {
		t.Fatalf("hello v1 = %+v, %v", v, err)
	}
}

func TestApplyDryRunPublishesNothing(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	out, errOut, err := b.run(t, "apply", "--dry-run", "-f", b.file(t, "orders.yaml", applyOrders))
	if err != nil || out != "orders "+hashOf(t, applyOrders)+" (valid)\n" {
		t.Fatalf("dry run = %q %q %v", out, errOut, err)
	}
	if _, err := b.store.DefinitionGet(context.Background(), b.tenant.ID, "orders"); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("a dry run stored the definition: %v", err)
	}
	bad := b.file(t, "bad.yaml", "key: bad\nsteps:\n  - {ref: a, type: sleep}\n")
	if _, errOut, err := b.run(t, "apply", "--dry-run", "-f", bad); err == nil || !strings.Contains(errOut, "bad.yaml: steps[0].type: ") {
		t.Fatalf("dry run of an invalid file = %q, %v", errOut, err)
	}
}

// Every problem is printed as FILE: PATH: MESSAGE; the good files are still
// published and the command fails.
func TestApplyReportsEveryProblem(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	bad := b.file(t, "bad.yaml", `key: bad
steps:
  - {ref: a, type: sleep, with: {duration: 1s}}
  - {ref: b, type: transform, with: {expr: "1 +"}}
edges:
  - {from: a, to: ghost}
`)
	broken := b.file(t, "broken.json", `{"key": `)
	good := b.file(t, "orders.yaml", applyOrders)
	missing := filepath.Join(b.dir, "missing.yaml")
	out, errOut, err := b.run(t, "apply", "-f", bad, "-f", broken, "-f", good, "-f", missing)
	if err == nil || !strings.Contains(err.Error(), "3 of 4") {
		t.Fatalf("apply = %v, want 3 of 4 files failed", err)
	}
	for _, want := range []string{bad + ": steps[0].type: ", bad + ": steps[1].with.expr: ", bad + ": edges[0]", broken + ": ", missing + ": "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.HasPrefix(out, "orders v1 ") {
		t.Errorf("the good file was not published: %q", out)
	}
	if _, _, err := b.run(t, "apply"); err == nil || !strings.Contains(err.Error(), "-f FILE") {
		t.Errorf("apply without files = %v", err)
	}
}

// A multi-document file applies each document; a directory applies its
// definition files in path order; a multi-document file's problems name
// the document.
func TestApplyMultiDocumentFilesAndDirectories(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	multi := b.file(t, "two.yaml", "# two flows\nkey: first\nsteps: [{ref: a, type: transform, with: {expr: '1'}}]\n---\n# nothing\n---\nkey: second\nsteps: [{ref: b, type: transform, with: {expr: '2'}}]\n")
	out, errOut, err := b.run(t, "apply", "-f", multi)
	if err != nil || !strings.HasPrefix(out, "first v1 ") || !strings.Contains(out, "\nsecond v1 ") {
		t.Fatalf("apply two.yaml = %q %q %v", out, errOut, err)
	}
	dir := filepath.Join(b.dir, "flows")
	if err := os.MkdirAll(filepath.Join(dir, "nested"), 0o755); err != nil {
		t.Fatal(err)
	}
	b.file(t, "flows/z.json", `{"key": "zed", "steps": [{"ref": "z", "type": "transform", "with": {"expr": "1"}}]}`)
	b.file(t, "flows/nested/a.yml", "key: ay\nsteps: [{ref: a, type: transform, with: {expr: '1'}}]\n")
	b.file(t, "flows/README.md", "not a definition")
	out, _, err = b.run(t, "apply", "--dry-run", "-f", dir)
	if err != nil || !strings.HasPrefix(out, "ay ") || !strings.Contains(out, "\nzed ") || strings.Count(out, "\n") != 2 {
		t.Fatalf("apply a directory = %q, %v; want ay then zed", out, err)
	}
	bad := b.file(t, "bad.yaml", "key: good\nsteps: [{ref: a, type: transform, with: {expr: '1'}}]\n---\nsteps: [{ref: b, type: transform, with: {expr: '1'}}]\n")
	if _, errOut, err := b.run(t, "apply", "-f", bad); err == nil || !strings.Contains(errOut, bad+"#2: ") {
		t.Fatalf("a keyless document in a multi-document file = %q, %v", errOut, err)
	}
	if _, _, err := b.run(t, "apply", "-f", filepath.Join(dir, "nested"), "-f", b.dir+"/nothing"); err == nil {
		t.Fatal("a missing path was not reported")
	}
}

// The healthcheck passes against a serving process and fails against
// nothing.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	if _, _, err := b.run(t, "healthcheck", "--url", b.vars["DUCTOR_URL"]+"/healthz"); err != nil {
		t.Fatalf("healthcheck of a live server: %v", err)
	}
	if _, _, err := b.run(t, "healthcheck", "--url", "http://127.0.0.1:1/readyz", "--timeout", "1s"); err == nil || !strings.Contains(err.Error(), "unhealthy") {
		t.Fatalf("healthcheck of nothing = %v", err)
	}
	b.vars["DUCTOR_ROLES"] = "coordinator,steps"
	if _, _, err := b.run(t, "healthcheck"); err != nil {
		t.Fatalf("healthcheck of a worker against its database: %v", err)
	}
	if got := readyURL(":8080"); got != "http://127.0.0.1:8080/readyz" {
		t.Errorf("readyURL(:8080) = %s", got)
	}
}
