package shell

import (
	"context"
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// A cancel whose notification is lost while the listener reconnects still
// ends the attempt: reconnected, the listener ends the attempts it watches
// that have their result meanwhile.
func TestStepCancelsRecheckAfterReconnecting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, pool := shellOn(t)
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	testdb.Definition(t, s, tenant.ID, `
key: watched
steps:
  - {ref: w, type: task, with: {handler: builtin.noop}}
`)
	run, _, err := startRun(ctx, c, tenant.ID, "watched")
	if err != nil {
		t.Fatal(err)
	}
	key := store.AttemptKey{Run: store.RunKey{TenantID: tenant.ID, ID: run.ID}, Node: "w", Attempt: 1}
	ctxs, releases, err := c.Steps.cancels.watch(ctx, []store.AttemptKey{key})
	if err != nil {
		t.Fatal(err)
	}
	defer releases[0]()

	// The listener's connection drops (every such listener's on this
	// cluster: the others reconnect and recheck the same way); the cancel
	// commits meanwhile, its notification lost (here: never sent).
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE query = 'LISTEN `+cancelChannel+`' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 20*time.Second, "the cancel listener notices its connection dropped", func() bool {
		c.Steps.cancels.mu.Lock()
		defer c.Steps.cancels.mu.Unlock()
		select {
		case <-c.Steps.cancels.listening:
			return false
		default:
			return true
		}
	})
	if err := s.AttemptCancel(ctx, key, &engine.Error{Code: engine.CodeCancelled, Message: "test"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctxs[0].Done():
		if cause := context.Cause(ctxs[0]); cause != errAttemptCancelled {
			t.Fatalf("the attempt's context ended by %v", cause)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the cancelled attempt's context still runs 15s after its cancel")
	}
}
