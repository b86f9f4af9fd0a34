package workers_test

import (
	"testing"
	"time"

	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/testwait"
)

// A poll claims at most the tasks it asks for, however many wait.
func TestPollClaimsAtMostMax(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: six-remote
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, do: {type: task, with: {handler: remote.six}}}
`)
	b.start(t, "six-remote", map[string]any{"items": items(6)})
	testwait.Eventually(t, 30*time.Second, "six bridge tasks waiting", func() bool {
		var n int
		err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM bridge_task WHERE tenant_id = $1 AND token IS NULL`, b.tenant.ID).Scan(&n)
		return err == nil && n == 6
	})
	for _, max := range []int{1, 2, 3} {
		tasks, err := b.coord.Runs.Tasks.Poll(b.ctx, b.tenant.ID, runs.TaskPoll{
			Queue: shell.DefaultQueue, Handlers: []string{"remote.six"}, WorkerID: "w", Max: max,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) != max {
			t.Errorf("a poll for %d claimed %d tasks", max, len(tasks))
		}
	}
	// A claimed task's attempt keeps what the worker received, for the
	// inspector, as a step worker's attempt does.
	var kept int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM run_attempt WHERE tenant_id = $1 AND started_at IS NOT NULL
		AND input->>'handler' = 'remote.six' AND input ? 'input'`, b.tenant.ID).Scan(&kept); err != nil || kept != 6 {
		t.Errorf("%d claimed attempts keep their input (%v), want 6", kept, err)
	}
}
