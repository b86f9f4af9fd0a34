package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// python3 is the interpreter the Python SDK's suite runs with; a machine
// without one (or with one older than the SDK's 3.10) skips these tests.
func python3(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python SDK's suite needs it")
	}
	if out, err := exec.Command(path, "-c", "import sys; assert sys.version_info >= (3, 10), sys.version").CombinedOutput(); err != nil {
		t.Skipf("python3 is older than 3.10, which the Python SDK needs: %s", out)
	}
	return path
}

// sdkPythonDir is the Python SDK's folder in this checkout.
func sdkPythonDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "sdk-python"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// pythonEnv is the environment the SDK's suite gets: the server, its key,
// and the SDK importable from the checkout.
func pythonEnv(p *program, key, dir string) []string {
	return append(os.Environ(), "DUCTOR_URL="+p.BaseURL, "DUCTOR_API_KEY="+key, "PYTHONPATH="+dir,
		"PYTHONDONTWRITEBYTECODE=1")
}

// TestSDKPython runs the Python SDK's whole unittest suite against a real
// server: definitions checked by the server's compiler, every client
// operation, and workers as separate processes killed, cancelled and
// stopped mid-task.
func TestSDKPython(t *testing.T) {
	t.Parallel()
	py := python3(t)
	p := startDevOnTestDatabase(t)
	dir := sdkPythonDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-s", "tests", "-v")
	cmd.Dir, cmd.Env = dir, pythonEnv(p, p.devKey(t), dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Python SDK's suite failed: %v\n%s", err, out)
	}
	if strings.Contains(string(out), " ... skipped") {
		t.Fatalf("the suite skipped tests:\n%s", out)
	}
	t.Logf("%s", out)
}

// TestSDKPythonQuickStart is docs/sdk-python.md's quick start as the page
// tells it, from the repository's root: pip install ./sdk-python (into a
// virtual environment), the example worker as a process of its own, then
// the example that publishes, starts a run and waits for it.
func TestSDKPythonQuickStart(t *testing.T) {
	t.Parallel()
	py := python3(t)
	p := startDevOnTestDatabase(t)
	root := filepath.Dir(sdkPythonDir(t))
	env := append(os.Environ(), "DUCTOR_URL="+p.BaseURL, "DUCTOR_API_KEY="+p.devKey(t), "PIP_DISABLE_PIP_VERSION_CHECK=1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	py, extra := pipInstall(t, ctx, py, root)
	env = append(env, extra...)

	worker := exec.CommandContext(ctx, py, "sdk-python/examples/worker.py")
	worker.Dir, worker.Env = root, env
	var log lockedBuffer
	worker.Stdout, worker.Stderr = &log, &log
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = worker.Process.Kill()
		_ = worker.Wait()
	})

	start := exec.CommandContext(ctx, py, "sdk-python/examples/start.py", "ada")
	start.Dir, start.Env = root, env
	out, err := start.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "succeeded") || !strings.Contains(string(out), "hello, ada") {
		t.Fatalf("examples/start.py = %v\n%s\nthe worker said:\n%s", err, out, log.String())
	}
	if err := worker.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := worker.Wait(); err != nil {
		t.Errorf("the worker did not exit cleanly on SIGINT: %v\n%s", err, log.String())
	}
}

// pipInstall installs ./sdk-python into a new virtual environment, without
// a package index (the package needs nothing from one), and returns the
// environment's python. A Python without venv and pip (Debian's python3
// without python3-venv) runs the examples from the checkout instead.
func pipInstall(t *testing.T, ctx context.Context, py, root string) (string, []string) {
	t.Helper()
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.CommandContext(ctx, py, "-m", "venv", venv).CombinedOutput(); err != nil {
		t.Logf("python3 -m venv failed (%v), so the examples import the SDK from the checkout:\n%s", err, out)
		return py, []string{"PYTHONPATH=" + filepath.Join(root, "sdk-python")}
	}
	vpy := filepath.Join(venv, "bin", "python")
	pip := exec.CommandContext(ctx, vpy, "-m", "pip", "install", "--no-index", "--quiet", "./sdk-python")
	pip.Dir, pip.Env = root, append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1")
	if out, err := pip.CombinedOutput(); err != nil {
		t.Fatalf("pip install ./sdk-python: %v\n%s", err, out)
	}
	return vpy, nil
}
