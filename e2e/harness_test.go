// Package e2e drives the whole ductor program in-process, on a free
// loopback port, against a real Postgres and, for pages, a real headless
// Chromium.
package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/ductor/ductor/app/cli"
)

// lockedBuffer is an io.Writer that the test reads while the program writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// program is a running `ductor` command.
type program struct {
	BaseURL string
	Stdout  *lockedBuffer
	Stderr  *lockedBuffer // the log
	stop    context.CancelFunc
	done    chan struct{} // closed when Run returns
	err     error         // what Run returned
}

// Stop cancels the program as Ctrl-C would and returns what Run returned.
func (p *program) Stop(t *testing.T) error {
	t.Helper()
	p.stop()
	select {
	case <-p.done:
		return p.err
	case <-time.After(60 * time.Second):
		t.Fatal("ductor did not stop within 60s of cancellation")
		return nil
	}
}

// start runs `ductor args…` with the environment given and waits until it
// listens.
func start(t *testing.T, environ map[string]string, args ...string) *program {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	p := &program{Stdout: &lockedBuffer{}, Stderr: &lockedBuffer{}, stop: cancel, done: make(chan struct{})}
	env := cli.Env{
		Getenv: func(k string) string { return environ[k] },
		Stdout: p.Stdout, Stderr: p.Stderr,
		Ready: func(addr string) { ready <- addr },
	}
	go func() {
		defer close(p.done)
		p.err = cli.Run(ctx, args, env)
	}()
	select {
	case addr := <-ready:
		p.BaseURL = "http://" + addr
	case <-p.done:
		cancel()
		t.Fatalf("ductor %v exited before listening: %v\n%s", args, p.err, p.Stdout)
	case <-time.After(90 * time.Second):
		cancel()
		t.Fatalf("ductor %v did not listen within 90s\n%s", args, p.Stdout)
	}
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

var devKeyLine = regexp.MustCompile(`Dev API key \(tenant dev\): (dk_\S+)`)

// devKey returns the API key that dev printed.
func (p *program) devKey(t *testing.T) string {
	t.Helper()
	m := devKeyLine.FindStringSubmatch(p.Stdout.String())
	if m == nil {
		t.Fatalf("dev printed no API key:\n%s", p.Stdout)
	}
	return m[1]
}

// get performs an authenticated GET and returns the status and body.
func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}
