package engine

import (
	"time"
)

// retryChild applies an operator's RetryNode to one failed scatter child
// (or one an operator cancelled): the child runs again with a new
// attempt, its retry count suffixing its idempotency key, and its scatter
// counts it in flight again. A scatter that had completed reopens with
// its other children and their outputs kept; what ran after it is reset,
// as by a retry of the scatter itself, and runs again once the scatter
// completes. A run that had ended failed or cancelled resumes.
func (d *decider) retryChild(r RetryNode, c *Node) {
	sc := d.get(c.Child.Scatter)
	switch {
	case sc == nil || sc.Scatter == nil || sc.Generation != c.Generation:
		d.discard(r, "child of an earlier generation of its scatter")
		return
	case c.State == NodeSucceeded || !counted(c):
		d.discard(r, "node is "+string(c.State))
		return
	case sc.Scatter.CompletedEarly:
		d.discard(r, "its scatter completed early")
		return
	case sc.State.Terminal() && sc.State != NodeSucceeded:
		d.discard(r, "its scatter is "+string(sc.State)+": retry the scatter")
		return
	case d.runRow.Status == RunSucceeded || d.runRow.Status == RunTerminated || d.runRow.Status == RunTimedOut:
		d.discard(r, "run is "+string(d.runRow.Status))
		return
	}
	if sc.State.Terminal() {
		d.reopenScatter(sc.ID, c.ID)
	}
	d.resumeRun("retry of " + c.ID)
	c = d.mut(c.ID)
	c.Retry++
	c.Outcome, c.Output, c.Error, c.Waiting, c.CancelReason = "", nil, nil, nil, ""
	sc = d.mut(sc.ID)
	sc.Scatter.Failed--
	sc.Scatter.InFlight++
	d.setNode(c, NodeReady, "retry")
	d.execute(c, d.now)
}

// reopenScatter puts a completed scatter back to running for the retry
// of its child: the nodes after it (and, in an ended run, whatever else
// retrying resets) go back to pending without the marks of the edges
// from reset nodes and the scatter, so they wait for it to complete again.
func (d *decider) reopenScatter(id, child string) {
	reset := d.resetSet(id)
	for _, ref := range d.g.order() {
		if reset[ref] && ref != id {
			d.resetNode(d.mut(ref), reset, child)
		}
	}
	sc := d.mut(id)
	sc.Outcome, sc.Output, sc.FinishedAt = "", nil, time.Time{}
	if d.steps != nil {
		delete(d.steps, id)
	}
	d.setNode(sc, NodeRunning, "retry of "+child)
	if with(d.g.steps[sc.Ref].With).str("mode") == "child_workflow" {
		d.wait(sc, &Waiting{Type: WaitChild}, "", time.Time{})
	}
	for _, ref := range d.g.order() {
		if reset[ref] && ref != id {
			d.consider(ref)
		}
	}
}

// resumeRun moves an ended run back to running for an operator's retry.
func (d *decider) resumeRun(detail string) {
	if !d.runRow.Status.Terminal() {
		return
	}
	d.runRow.Error, d.runRow.FinishedAt = nil, time.Time{}
	d.runRow.CancelReason, d.runRow.CancelledBy = "", ""
	d.setRun(RunRunning, detail)
}
