package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSDKTypeScript runs the TypeScript SDK (sdk-ts) against a real
// `ductor dev`: its suite (npm ci, tsc, node --test) with DUCTOR_URL and
// DUCTOR_API_KEY set, then the quick start of docs/sdk-typescript.md as a
// user runs it: the package packed with npm pack and installed into a new
// project, the example worker started there as its own process, and the
// start script run against it.
func TestSDKTypeScript(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the TypeScript SDK's suite needs Node 20 or later", tool)
		}
	}
	p := startDevOnTestDatabase(t)
	env := append(os.Environ(), "DUCTOR_URL="+p.BaseURL, "DUCTOR_API_KEY="+p.devKey(t))
	sdk, err := filepath.Abs("../sdk-ts")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	tsNPM(t, ctx, sdk, env, "ci", "--no-audit", "--no-fund")
	if err := os.RemoveAll(filepath.Join(sdk, "dist")); err != nil { // no output of an earlier build
		t.Fatal(err)
	}
	suite := tsNPM(t, ctx, sdk, env, "test")
	t.Logf("the TypeScript SDK's suite: %s", tsTapSummary(suite))

	project := t.TempDir()
	tarball := tsPack(t, ctx, sdk, env, project)
	if err := os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"name": "greeter", "private": true, "type": "module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tsNPM(t, ctx, project, env, "install", "--no-audit", "--no-fund", "./"+tarball)
	for _, f := range []string{"worker.mjs", "start.mjs"} {
		tsCopyFile(t, filepath.Join(sdk, "examples", f), filepath.Join(project, f))
	}

	worker := tsStartWorker(t, project, env)
	first := tsRunNode(t, ctx, project, env, "start.mjs", "ada")
	if !strings.HasPrefix(first, "succeeded ") || !strings.Contains(first, `"greeting":"hello, ada"`) {
		t.Fatalf("start.mjs ada printed %q, want a succeeded run greeting ada", first)
	}
	if again := tsRunNode(t, ctx, project, env, "start.mjs", "ada"); again != first {
		t.Errorf("start.mjs ada again printed %q, want the same run's %q", again, first)
	}
	if err := worker.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := worker.Wait(); err != nil {
		t.Errorf("the worker exited with %v after SIGTERM, want 0", err)
	}
}

// tsNPM runs `npm args…` in dir and fails the test with its output if it
// fails.
func tsNPM(t *testing.T, ctx context.Context, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// tsPack packs the SDK, as built by npm test, into dest and returns the
// tarball's file name.
func tsPack(t *testing.T, ctx context.Context, sdk string, env []string, dest string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "npm", "pack", "--json", "--ignore-scripts", "--pack-destination", dest) // npm test built dist
	cmd.Dir, cmd.Env = sdk, env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("npm pack: %v\n%s", err, out)
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out[strings.IndexByte(string(out), '['):], &packed); err != nil || len(packed) != 1 {
		t.Fatalf("npm pack printed %s: %v", out, err)
	}
	return packed[0].Filename
}

func tsCopyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tsStartWorker starts `node worker.mjs` in dir and waits until it says it
// serves its queue; the test's end kills it if it still runs.
func tsStartWorker(t *testing.T, dir string, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("node", "worker.mjs")
	cmd.Dir, cmd.Env = dir, env
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	serving := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if strings.Contains(s.Text(), "serving queue ts") {
				serving <- s.Text()
			}
		}
	}()
	select {
	case <-serving:
	case <-time.After(30 * time.Second):
		t.Fatal("the example worker did not say it serves the queue ts within 30s")
	}
	return cmd
}

// tsRunNode runs `node script args…` in dir and returns its output.
func tsRunNode(t *testing.T, ctx context.Context, dir string, env []string, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	return strings.TrimSpace(string(out))
}

// tsTapSummary is the counts at the end of node --test's TAP output.
func tsTapSummary(out string) string {
	var counts []string
	for _, line := range strings.Split(out, "\n") {
		for _, name := range []string{"pass", "fail", "skipped"} {
			if n, ok := strings.CutPrefix(line, "# "+name+" "); ok {
				counts = append(counts, name+" "+n)
			}
		}
	}
	return strings.Join(counts, ", ")
}
