package shell

import (
	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// DefaultStepBatchMax is how many steps one River job carries at most
// unless Config.StepBatchMax says otherwise (DUCTOR_STEP_BATCH). The
// scatter ran fastest with 4 to 8 (32 and 128 were no faster), but
// batches of 4 and 8 put an idle tenant's p95 behind a flood past its goal
// of 3× its idle one in some rounds, and 2 kept it within (bench/README.md).
const DefaultStepBatchMax = 2

// batchKey is what the steps of one batch share.
type batchKey struct {
	tenant          uuid.UUID
	queue, typ      string
	scheduleToStart int64
}

// packSteps carries up to max ready steps of one tenant in one River job,
// a step batch (see the package doc, "What a step costs"): the first
// step's args stay at the top level of the job's (so every lookup by
// tenant, run and node finds the batch by it), the others go in its More.
// Only steps that are alike in everything the sweep and River decide on
// by the job are packed: the same tenant, queue (so the same tier and fair
// clock), type and schedule_to_start. A sparse step (urgent, on its
// lane), a step of a concurrency pool (admitted and counted by its key)
// and a step its pool held back go alone. The batch keeps its first
// step's fair tag; its tenant reserved the span of all of them.
func packSteps(jobs []river.InsertManyParams, max int) []river.InsertManyParams {
	if max <= 1 || len(jobs) < 2 {
		return jobs
	}
	out := make([]river.InsertManyParams, 0, len(jobs))
	open := map[batchKey]int{} // the batch still filling, by its index in out
	for _, j := range jobs {
		a, ok := j.Args.(StepArgs)
		if !ok || !packable(a) {
			out = append(out, j)
			continue
		}
		k := batchKey{a.TenantID, j.InsertOpts.Queue, a.Type, a.ScheduleToStartMS}
		i, found := open[k]
		if !found {
			out = append(out, j)
			open[k] = len(out) - 1
			continue
		}
		head := out[i].Args.(StepArgs)
		head.More = append(head.More, a)
		out[i].Args = head
		if len(head.More)+1 >= max {
			delete(open, k)
		}
	}
	return out
}

// packable tells whether a step may share its job.
func packable(a StepArgs) bool {
	return !a.Sparse && a.FlowKey == "" && !a.PoolWait && len(a.More) == 0
}

// stepBatchMax is the coordinator's batch bound.
func (c *Writer) stepBatchMax() int {
	if c.StepBatchMax == 0 {
		return DefaultStepBatchMax
	}
	return c.StepBatchMax
}
