package e2e

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// binary builds the ductor command once per test binary.
var binary struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

func ductorBinary(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "ductor-e2e-bin-")
		if err != nil {
			binary.err = err
			return
		}
		binary.path = filepath.Join(dir, "ductor")
		cmd := exec.Command("go", "build", "-o", binary.path, "github.com/ductor/ductor")
		binary.out, binary.err = cmd.CombinedOutput()
	})
	if binary.err != nil {
		t.Fatalf("go build: %v\n%s", binary.err, binary.out)
	}
	return binary.path
}

// workerProcess runs `ductor serve --roles coordinator,steps` as its own OS
// process, so that the test can kill it with SIGKILL.
func workerProcess(t *testing.T, databaseURL string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(ductorBinary(t), "serve", "--roles", "coordinator,steps")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+databaseURL, "DUCTOR_RESCUE_WINDOW=1s", "DUCTOR_LOG_LEVEL=error")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("worker process %d said:\n%s", cmd.Process.Pid, out.String())
		}
	})
	return cmd
}

// A worker process killed with SIGKILL in the middle of its steps loses
// them; another worker process retries each one after its timeout plus the
// rescue window, and every run ends: exactly one successful attempt each,
// after one lost.
func TestKilledWorkerProcessStepsAreRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, url := testdb.SchemaURL(t)
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	testdb.Definition(t, s, tenant.ID, `
key: slow
steps:
  - { ref: work, type: task, with: { handler: builtin.sleep, input_expr: '{"ms": 1500}' }, timeout: 3s }
`)
	// The test only triggers runs: its client inserts jobs, works none.
	coord, err := workers.New(workers.Config{Pool: pool, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	if _, err := workers.NewClient(pool, workers.Options{Runtime: coord}); err != nil {
		t.Fatal(err)
	}
	const n = 10
	var ids []uuid.UUID
	for range n {
		run, _, err := coord.Runs.Start(ctx, runs.Trigger{TenantID: tenant.ID, Definition: "slow"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}

	doomed := workerProcess(t, url)
	testwait.Eventually(t, 60*time.Second, "every step to start on the first worker", func() bool {
		var started int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM run_attempt WHERE started_at IS NOT NULL`).Scan(&started)
		return err == nil && started == n
	})
	if err := doomed.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = doomed.Wait()
	killed := time.Now()

	workerProcess(t, url)
	for _, id := range ids {
		var run store.Run
		testwait.Eventually(t, 60*time.Second, "run "+id.String()+" to end", func() bool {
			run, err = s.RunGet(ctx, tenant.ID, id)
			return err == nil && run.Status.Terminal()
		})
		if run.Status != engine.RunSucceeded {
			t.Errorf("run %s: %s", id, run.Status)
			continue
		}
		attempts, err := s.RunAttempts(ctx, tenant.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(attempts) != 2 || attempts[0].Error == nil || attempts[0].Error.Code != "worker_lost" || attempts[1].Error != nil {
			t.Errorf("run %s: attempts %+v, want one lost with the killed worker, then one success", id, attempts)
		}
	}
	// Timeout 3 s + rescue window 1 s + the sleep itself, with room for a
	// busy machine.
	if took := time.Since(killed); took > 30*time.Second {
		t.Errorf("the killed worker's steps took %s to be retried and finish", took)
	}
}
