package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmpDir returns a directory for pgrun's clusters that the postgres user
// can reach even when tests run as root, unlike t.TempDir.
func tmpDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgrun-test-*")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// assertRemoved checks that the cluster behind rawURL is stopped and that
// pgrun left nothing in tmp.
func assertRemoved(t *testing.T, rawURL, tmp string) {
	t.Helper()
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || u.Port() == "" {
		t.Fatalf("TEST_DATABASE_URL = %q: %v", rawURL, err)
	}
	if conn, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		conn.Close()
		t.Errorf("cluster at %s still accepts connections", u.Host)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left %d entries in %s", len(entries), tmp)
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	tmp := tmpDir(t)
	var stdout bytes.Buffer
	code := run(t.Context(), []string{"--", "sh", "-c", `echo "$TEST_DATABASE_URL"; exit 3`},
		[]string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp}, nil, &stdout, io.Discard)
	if code != 3 {
		t.Errorf("exit code %d, want the command's 3", code)
	}
	if !strings.HasSuffix(strings.TrimSpace(stdout.String()), "/ductor_test?sslmode=disable") {
		t.Errorf("TEST_DATABASE_URL = %q", stdout.String())
	}
	assertRemoved(t, stdout.String(), tmp)
}

func TestRunSignal(t *testing.T) {
	t.Parallel()
	tmp := tmpDir(t)
	ctx, cancel := context.WithCancelCause(t.Context())
	out, w := io.Pipe()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--", "sh", "-c", `echo "$TEST_DATABASE_URL"; exec sleep 60`},
			[]string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp}, nil, w, io.Discard)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, out)
	cancel(signalError{syscall.SIGTERM})
	if code := <-done; code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit code %d, want %d", code, 128+int(syscall.SIGTERM))
	}
	assertRemoved(t, line, tmp)
}

func TestRunWithDatabaseURL(t *testing.T) {
	t.Parallel()
	tmp := tmpDir(t)
	var stdout bytes.Buffer
	code := run(t.Context(), []string{"--", "sh", "-c", `echo "$TEST_DATABASE_URL"`},
		[]string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "TEST_DATABASE_URL=postgres://given"}, nil, &stdout, io.Discard)
	if code != 0 || strings.TrimSpace(stdout.String()) != "postgres://given" {
		t.Errorf("exit code %d, TEST_DATABASE_URL = %q", code, stdout.String())
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("started a cluster although TEST_DATABASE_URL was set")
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if code := run(t.Context(), nil, nil, nil, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage") {
		t.Errorf("exit code %d, stderr %q", code, stderr.String())
	}
}
