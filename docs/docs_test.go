package docs

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/cli"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// TestDocs checks every Markdown file of the documentation (and the
// repository's README): each definition example compiles and matches the
// JSON Schema, keys are unique in a file, and each example marked
// <!-- run: {...} --> is published in a tenant of the file's own and run
// to the status (and output) the marker says, on a real server with its
// workers, against a real Postgres.
func TestDocs(t *testing.T) {
	files := markdownFiles(t)
	if len(files) < 3 {
		t.Fatalf("found only %d Markdown files", len(files))
	}
	h := startHarness(t)
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			h.checkFile(t, file)
		})
	}
}

// markdownFiles lists docs/**/*.md and the repository's README.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../README.md"}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// example is a definition block of a file, compiled.
type example struct {
	block
	key string
}

func (h *harness) checkFile(t *testing.T, file string) {
	bs, err := blocks(file)
	if err != nil {
		t.Fatal(err)
	}
	var examples []example
	keys := map[string]string{}
	for _, b := range bs {
		if b.markerErr != nil {
			t.Errorf("%s: %v", b.where(), b.markerErr)
		}
		if !b.isDefinition() {
			if b.marker != nil {
				t.Errorf("%s: a run marker must precede a definition (```yaml starting with key:)", b.where())
			}
			continue
		}
		c, err := definition.Compile([]byte(b.body), definition.FormatYAML)
		if err != nil {
			t.Errorf("%s: the example does not compile: %v", b.where(), err)
			continue
		}
		if err := definition.ValidateSchema([]byte(b.body), definition.FormatYAML); err != nil {
			t.Errorf("%s: the example does not match the definition schema: %v", b.where(), err)
		}
		key := c.Manifest.Key
		if first, dup := keys[key]; dup {
			t.Errorf("%s: key %q is used by the example at %s too: give each example of a file its own key", b.where(), key, first)
		}
		keys[key] = b.where()
		examples = append(examples, example{block: b, key: key})
	}
	h.runExamples(t, examples)
}

// runExamples publishes every example of a file in a tenant of its own
// (so subworkflows find the children they name), then runs the marked
// ones in parallel.
func (h *harness) runExamples(t *testing.T, examples []example) {
	runnable := 0
	for _, e := range examples {
		if e.marker != nil {
			runnable++
		}
	}
	if runnable == 0 {
		return
	}
	key, deciders := h.tenantKey(t)
	versions := map[string]int{}
	for _, e := range examples {
		var v struct {
			Version int `json:"version"`
		}
		if code := h.call(t, key, "POST", "/definitions/"+e.key+"/versions", "application/yaml", e.body, &v); code/100 != 2 {
			t.Fatalf("%s: publish: %d", e.where(), code)
		}
		versions[e.key] = v.Version
	}
	var wg sync.WaitGroup
	for _, e := range examples {
		if e.marker == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.runExample(t, key, deciders, e, versions[e.key])
		}()
	}
	wg.Wait()
}

// harness is one running `ductor dev` on a schema of the test database,
// with a local HTTP server examples may call ($ECHO_URL in an input).
type harness struct {
	base  string
	store *store.Store
	echo  string
}

func startHarness(t *testing.T) *harness {
	t.Helper()
	pool, url := testdb.SchemaURL(t)
	echo := httptest.NewServer(http.HandlerFunc(echoRequest))
	t.Cleanup(echo.Close)
	env := map[string]string{"DATABASE_URL": url, "DUCTOR_ADDR": "127.0.0.1:0", "DUCTOR_HTTP_ALLOW": "127.0.0.0/8", "DUCTOR_API_RATE": "0"}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- cli.Run(ctx, []string{"dev"}, cli.Env{
			Getenv: func(k string) string { return env[k] },
			Stdout: io.Discard, Stderr: io.Discard,
			Ready: func(addr string) { ready <- addr },
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case addr := <-ready:
		return &harness{base: "http://" + addr + "/api/v1", store: store.New(pool), echo: echo.URL}
	case err := <-done:
		t.Fatalf("ductor dev stopped: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("ductor dev did not listen within 90s")
	}
	return nil
}

// echoRequest answers {"method", "path", "query", "body"} for the request.
func echoRequest(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body any
	_ = json.Unmarshal(raw, &body)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": body})
}

// tenantKey creates a tenant and an admin key for it, and the keys that
// decide its approvals.
func (h *harness) tenantKey(t *testing.T) (string, *deciders) {
	tenant := testdb.Tenant(t, h.store, nil)
	_, key := testdb.APIKey(t, h.store, tenant, nil)
	return key, &deciders{h: h, tenant: tenant, keys: map[string]string{}}
}

// deciders are the API keys of a tenant by name: an API key decides only
// an approval that names it (key:NAME), so the harness decides as the
// key an approval names, made on first use.
type deciders struct {
	h      *harness
	tenant store.Tenant
	mu     sync.Mutex
	keys   map[string]string
}

func (d *deciders) key(t *testing.T, name string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if k, ok := d.keys[name]; ok {
		return k
	}
	_, k := testdb.APIKey(t, d.h.store, d.tenant, &testdb.APIKeyOpts{Name: &name, Scopes: []auth.Scope{auth.ScopeApprovalsWrite}})
	d.keys[name] = k
	return k
}

// call sends a request and decodes the JSON answer into out.
func (h *harness) call(t *testing.T, key, method, path, contentType, body string, out any) int {
	req, err := http.NewRequest(method, h.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		t.Errorf("%s %s = %d %s", method, path, res.StatusCode, raw)
	}
	if out != nil && len(raw) > 0 {
		_ = json.Unmarshal(raw, out)
	}
	return res.StatusCode
}

func (h *harness) postJSON(t *testing.T, key, path string, body, out any) int {
	raw, _ := json.Marshal(body)
	return h.call(t, key, "POST", path, "application/json", string(raw), out)
}

var echoPlaceholder = regexp.MustCompile(`\$ECHO_URL`)

// withEcho replaces $ECHO_URL in the strings of v by the echo server's URL.
func (h *harness) withEcho(v any) any {
	switch x := v.(type) {
	case string:
		return echoPlaceholder.ReplaceAllString(x, h.echo)
	case map[string]any:
		for k, e := range x {
			x[k] = h.withEcho(e)
		}
	case []any:
		for i, e := range x {
			x[i] = h.withEcho(e)
		}
	}
	return v
}
