package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testwait"
)

// One run, two languages: its first task is on the queue ts, served by
// the TypeScript SDK's example worker, and its second on the queue py,
// served by the Python SDK's, each a process of its own started as
// docs/sdk-typescript.md and docs/sdk-python.md say. The run succeeds
// with both greetings.
func TestOneRunServedByATypeScriptAndAPythonWorker(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the TypeScript worker needs Node 20 or later", tool)
		}
	}
	py := python3(t)
	p := startDevOnTestDatabase(t)
	key := p.devKey(t)
	env := append(os.Environ(), "DUCTOR_URL="+p.BaseURL, "DUCTOR_API_KEY="+key)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The TypeScript SDK, built in a copy of its folder (TestSDKTypeScript
	// builds the checkout's at the same time), packed and installed into a
	// project of its own, as a user installs it.
	sdk := copyTracked(t, "sdk-ts")
	tsNPM(t, ctx, sdk, env, "ci", "--no-audit", "--no-fund")
	tsNPM(t, ctx, sdk, env, "run", "build")
	project := t.TempDir()
	tarball := tsPack(t, ctx, sdk, env, project)
	if err := os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"name": "polyglot", "private": true, "type": "module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tsNPM(t, ctx, project, env, "install", "--no-audit", "--no-fund", "./"+tarball)
	tsCopyFile(t, filepath.Join(sdk, "examples", "worker.mjs"), filepath.Join(project, "worker.mjs"))
	tsStartWorker(t, project, env)

	dir := sdkPythonDir(t)
	pyWorker := exec.CommandContext(ctx, py, "examples/worker.py")
	pyWorker.Dir, pyWorker.Env = dir, pythonEnv(p, key, dir)
	var pyLog lockedBuffer
	pyWorker.Stdout, pyWorker.Stderr = &pyLog, &pyLog
	if err := pyWorker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = pyWorker.Process.Kill()
		_ = pyWorker.Wait()
	})

	doc := map[string]any{
		"key":         "polyglot",
		"output_expr": `{"ts": steps.ts.output.greeting, "py": steps.py.output.greeting}`,
		"steps": []any{
			map[string]any{"ref": "ts", "type": "task", "with": map[string]any{"handler": "greet", "queue": "ts", "input_expr": `{"name": input.name}`}},
			map[string]any{"ref": "py", "type": "task", "with": map[string]any{"handler": "py.greet", "queue": "py", "input_expr": `{"name": "python"}`}},
		},
		"edges": []any{map[string]any{"from": "ts", "to": "py"}},
	}
	if status, body := apiCall(t, p, key, "POST", "/definitions/polyglot/versions", doc); status != 201 {
		t.Fatalf("publish: %d %s", status, body)
	}
	status, body := apiCall(t, p, key, "POST", "/runs", map[string]any{"definition": "polyglot", "input": map[string]any{"name": "ada"}})
	if status != 201 {
		t.Fatalf("start: %d %s", status, body)
	}
	var run map[string]any
	if err := json.Unmarshal(body, &run); err != nil {
		t.Fatal(err)
	}
	id, _ := run["id"].(string)
	testwait.Eventually(t, 60*time.Second, "the run to end", func() bool {
		status, body := apiCall(t, p, key, "GET", "/runs/"+id, nil)
		run = nil
		return status == 200 && json.Unmarshal(body, &run) == nil && (run["status"] == "succeeded" || run["status"] == "failed")
	})
	out, _ := json.Marshal(run["output"])
	if run["status"] != "succeeded" || string(out) != `{"py":"hello, python","ts":"hello, ada"}` {
		t.Fatalf("the run %s with output %s, want succeeded with both greetings\nthe Python worker said:\n%s", run["status"], out, pyLog.String())
	}
}

// copyTracked copies the repository's tracked files under dir (relative
// to the repository's root) into a new temporary folder and returns it.
func copyTracked(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", "..", "ls-files", "-z", dir).Output()
	if err != nil {
		t.Fatalf("git ls-files %s: %v", dir, err)
	}
	dest := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dest, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		tsCopyFile(t, filepath.Join("..", f), filepath.Join(dest, rel))
	}
	return dest
}

// apiCall sends one request to the program's API with the key and
// returns the status and body.
func apiCall(t *testing.T, p *program, key, method, path string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.BaseURL+"/api/v1"+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
