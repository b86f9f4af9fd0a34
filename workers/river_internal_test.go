package workers

import (
	"testing"

	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/shell"
)

// Each tier's step queue has workers of its own, in proportion to the
// tier's weight.
func TestTierQueuesHaveWorkersByWeight(t *testing.T) {
	t.Parallel()
	q := queues(Options{Steps: true, MaxWorkers: 10})
	want := map[string]int{shell.QueueStepsInteractive: 80, shell.QueueStepsStandard: 40, shell.QueueStepsBulk: 20,
		shell.SparseLane(shell.QueueStepsInteractive): 80, shell.SparseLane(shell.QueueStepsStandard): 40, shell.SparseLane(shell.QueueStepsBulk): 20}
	for queue, n := range want {
		if got := q[queue].MaxWorkers; got != n {
			t.Errorf("%s has %d workers, want %d", queue, got, n)
		}
	}
}

// A batch's River timeout is its longest step's plus the backstop, and
// none when one of its steps has none.
func TestStepBatchTimeoutIsItsLongestStep(t *testing.T) {
	w := &StepWorker{}
	job := &river.Job[shell.StepArgs]{Args: shell.StepArgs{TimeoutMS: 100, More: []shell.StepArgs{{TimeoutMS: 3000}, {TimeoutMS: 5}}}}
	if got := w.Timeout(job); got.Milliseconds() != 13000 {
		t.Errorf("timeout %s, want 13s", got)
	}
	job.Args.More[1].TimeoutMS = 0
	if got := w.Timeout(job); got != -1 {
		t.Errorf("timeout %s, want none", got)
	}
}
