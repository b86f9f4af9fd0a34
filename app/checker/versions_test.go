package checker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// Versions, the check that every node is in the state of the run's own
// version, finds a node of a step the version does not have and a step
// of the version without a node: planted in a run that ended well, they
// are what a tick that wrote a plan of the old version over an upgrade
// would leave.
func TestVersionsFindsNodesOfAnotherVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	StartWorker(t, b.url, WorkerOptions{})
	id, ok := b.w.start(b.ctx, "chk-chain", nil)
	if !ok {
		t.Fatal(b.w.errors)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	b.w.await(ctx, id, func(store.Run) bool { return false })
	if found, err := Versions(b.ctx, b.pool); err != nil || len(found) > 0 {
		t.Fatalf("before planting: %v %v", found, err)
	}
	if _, err := b.pool.Exec(b.ctx, `
		INSERT INTO run_node (tenant_id, run_id, node, ref, state, data)
		SELECT tenant_id, run_id, 'gone', 'gone', 'succeeded', '{"id": "gone", "ref": "gone", "state": "succeeded"}' FROM run_node WHERE run_id = $1 AND node = 'a';
		`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(b.ctx, `DELETE FROM run_node WHERE run_id = $1 AND node = 'd'`, id); err != nil {
		t.Fatal(err)
	}
	found, err := Versions(b.ctx, b.pool)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(found, "\n"); len(found) != 2 || !strings.Contains(got, "has node gone") || !strings.Contains(got, "no node of step d") {
		t.Fatalf("found %q, want the stray node and the missing one", got)
	}
}

// An upgrade that neither locks the run nor checks its record_version
// (shell.Testing.UnguardedUpgrades: it reads the run, pauses while the
// workers tick it, and writes its plan over what they committed) loses
// updates, and the checker says so: History, which holds at every
// commit, finds a run whose history has transitions its count lost.
// TestConcurrencyChecker upgrades the same runs, guarded, under the same
// nemesis, and finds nothing. A lost update shows in one of two ways: a
// history longer than the run's count (History), or, when the write
// over it happened to restore the count, a run that consumed its signal
// and then was put back to wait for it, so it never moves again
// (Stalled: nothing else in this workload keeps a run still for 20 s).
func TestConcurrencyCheckerFindsTheUnguardedUpgrade(t *testing.T) {
	t.Parallel()
	b := setupWith(t, func(c *workers.Config) {
		c.Testing.UnguardedUpgrades, c.Testing.UpgradePause = true, 50*time.Millisecond
	})
	b.w.OnlyUpgrades = true
	StartWorker(t, b.url, nemesis)
	StartWorker(t, b.url, nemesis)
	began := time.Now()
	ctx, cancel := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for round := g; ctx.Err() == nil; round += 4 {
				b.w.Round(ctx, round)
			}
		})
	}
	var found []string
	testwait.Until(b.ctx, 150*time.Second, func() bool {
		v, err := History(b.ctx, b.pool)
		if err == nil {
			var stalled []string
			stalled, err = Stalled(b.ctx, b.pool, 20*time.Second)
			v = append(v, stalled...)
		}
		if err != nil {
			t.Error(err)
		}
		found = v
		return len(v) > 0 || err != nil
	})
	cancel()
	wg.Wait()
	if len(found) == 0 {
		t.Fatalf("the checker found nothing wrong with unguarded upgrades in %s (the driver: %v)", time.Since(began).Round(time.Second), b.w.errors)
	}
	t.Logf("found in %s: %s", time.Since(began).Round(time.Millisecond), strings.Join(found, "\n"))
}
