package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testwait"
)

// quickStart reads the README's two quick-start blocks: the server's
// commands (the last one runs until stopped) and the client's script.
func quickStart(t *testing.T) (server []string, client string) {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := func(name string) string {
		m := regexp.MustCompile("(?s)<!-- quickstart: " + name + " -->\n```sh\n(.*?)\n```").FindSubmatch(readme)
		if m == nil {
			t.Fatalf("README has no quickstart %s block", name)
		}
		return string(m[1])
	}
	sc := bufio.NewScanner(strings.NewReader(block("server")))
	for sc.Scan() {
		if line := strings.TrimSpace(strings.SplitN(sc.Text(), "#", 2)[0]); line != "" {
			server = append(server, line)
		}
	}
	return server, block("client")
}

// TestReadmeQuickStart follows the README's quick start as written, in a
// fresh directory: its make targets (run in the repository, whose bin/
// the directory links to), `bin/ductor dev` with its own Postgres cluster
// under ./.ductor, then the client's script under bash -e. The one
// liberty taken: dev listens on a free port instead of 8080, and the
// script's 127.0.0.1:8080 is rewritten to it, since other programs on a
// shared machine may hold 8080.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	server, client := quickStart(t)
	if len(server) < 2 || server[len(server)-1] != "bin/ductor dev" {
		t.Fatalf("the server block should end with `bin/ductor dev`: %q", server)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := freshDir(t)
	for _, line := range server[:len(server)-1] {
		words := strings.Fields(line)
		if words[0] != "make" {
			t.Fatalf("the server block runs %q: teach the test", line)
		}
		if out, err := exec.Command("make", append([]string{"-C", repo}, words[1:]...)...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	if err := os.Symlink(filepath.Join(repo, "bin"), filepath.Join(dir, "bin")); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	dev := exec.Command("bin/ductor", "dev")
	dev.Dir = dir
	dev.Env = append(cleanEnv(), "DUCTOR_ADDR="+addr)
	var devOut bytes.Buffer
	dev.Stdout, dev.Stderr = &devOut, &devOut
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = dev.Process.Signal(syscall.SIGINT)
		_ = dev.Wait()
		if t.Failed() {
			t.Logf("ductor dev said:\n%s", devOut.String())
		}
	})
	waitHealthy(t, "http://"+addr)

	script := strings.ReplaceAll(client, "127.0.0.1:8080", addr)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the client's quick start failed: %v\n%s", err, out)
	}
	for _, want := range []string{"hello v1 ", "(created)", `"status": "succeeded"`, `"output": "hello, Ada"`, `"definitions:write"`, "STATUS", "ci ", `"id": "hello-hourly"`, "whsec_"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the quick start's output lacks %q:\n%s", want, out)
		}
	}
}

// freshDir is an empty directory the cluster's postgres user can enter.
func freshDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "ductor-quickstart-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// cleanEnv is this process's environment without Ductor's settings, as a
// new terminal would have it.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DUCTOR_") && !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "TEST_DATABASE_URL=") {
			out = append(out, kv)
		}
	}
	return out
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitHealthy polls /readyz until it answers 200.
func waitHealthy(t *testing.T, base string) {
	t.Helper()
	if !testwait.Until(context.Background(), 120*time.Second, func() bool {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}) {
		t.Fatalf("ductor dev was not ready at %s within 120s", base)
	}
}
