package checker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a worker process: the test binary run again as a worker
// (RunWorkerIfAsked), on the database the test gave it.
type Process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *lockedBuffer
	done   chan struct{}
}

// StartWorker starts a worker process on databaseURL and waits until it
// works. It is stopped (SIGTERM) when the test ends, and what it logged is
// shown if the test failed.
func StartWorker(t testing.TB, databaseURL string, o WorkerOptions) *Process {
	t.Helper()
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+databaseURL, workerEnv+"="+string(raw))
	p := &Process{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if lines.Text() == "ready" {
				ready <- true
			}
		}
		ready <- false
	}()
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("worker process %d said:\n%s", cmd.Process.Pid, p.stderr)
		}
	})
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("worker process exited before it was ready:\n%s", p.stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("worker process not ready within 60s:\n%s", p.stderr)
	}
	return p
}

// Pid is the worker's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Kill kills the worker with SIGKILL, as a crash or the OOM killer would,
// and waits until it is gone.
func (p *Process) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop asks the worker to stop (SIGTERM: in-flight jobs finish for a
// while), killing it if it has not stopped within 30 s.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.Kill()
	}
	_ = p.stdin.Close()
}

// lockedBuffer is an io.Writer a test reads while a process writes it.
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
