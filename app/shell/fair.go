package shell

import (
	"bytes"
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// StepCost is the virtual time one step task takes in its tenant's fair
// share. Virtual time advances only with tagged work, so it stays far
// behind real time and tags remain in the past.
const StepCost = 100 * time.Microsecond

// fairMarker in a job's metadata says its scheduled_at is a fair tag.
var fairMarker = []byte(`{"ductor_fair":true}`)

// fairTag stamps step jobs with start-time fair queueing tags in their
// scheduled_at, one (tenant, queue) batch at a time: jobs of a tenant that
// just became busy start at the queue's head; a tenant with a backlog
// queues behind its own earlier work. River fetches in (priority,
// scheduled_at, id) order, so tenants interleave. The tags are reserved
// outside the caller's transaction (see fairClock).
func (c *Writer) fairTag(ctx context.Context, jobs []river.InsertManyParams) error {
	if c.Testing.plainFIFO() {
		return nil
	}
	type group struct {
		tenant uuid.UUID
		queue  string
	}
	batches := map[group][]int{}
	var order []group
	for i, j := range jobs {
		g := group{j.Args.(StepArgs).TenantID, j.InsertOpts.Queue}
		if batches[g] == nil {
			order = append(order, g)
		}
		batches[g] = append(batches[g], i)
	}
	for _, g := range order {
		idx := batches[g]
		tag, err := c.clock.advance(ctx, g.tenant, g.queue, time.Duration(len(idx))*StepCost)
		if err != nil {
			return err
		}
		c.busy.note(g.tenant, !tag.Sparse || len(idx) > 1)
		for k, i := range idx {
			opts := *jobs[i].InsertOpts
			opts.ScheduledAt = tag.Start.Add(time.Duration(k) * StepCost)
			opts.Metadata = fairMarker
			if k == 0 && tag.Sparse {
				a := jobs[i].Args.(StepArgs)
				a.Sparse = true
				jobs[i].Args = a
				opts.Queue = SparseLane(g.queue)
				c.gate.await(a.AttemptKey())
			}
			jobs[i].InsertOpts = &opts
		}
	}
	return nil
}

// fairMiddleware makes fair-tagged jobs available at once: River inserts
// any job with a scheduled_at as scheduled, and a tag is an ordering key in
// the past, not a time to wait for. It compares the tag with no clock of
// this process: River fetches a job only once its scheduled_at has passed
// by the database's clock, so a tag that were ever ahead of it would wait
// for it anyway.
type fairMiddleware struct {
	river.MiddlewareDefaults
}

// InsertMany flips tagged jobs from scheduled to available.
func (*fairMiddleware) InsertMany(ctx context.Context, many []*rivertype.JobInsertParams,
	doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	for _, p := range many {
		if p.State == rivertype.JobStateScheduled && p.ScheduledAt != nil &&
			bytes.Contains(p.Metadata, []byte(`"ductor_fair":true`)) {
			p.State = rivertype.JobStateAvailable
		}
	}
	return doInner(ctx)
}
