package engine

// A held run is a pending run that flow control keeps from starting (a
// concurrency slot, a throttle's turn, a debounce's quiet): it has no
// nodes yet, and it starts on Admit. Meanwhile it can still be cancelled
// or terminated, and it buffers the signals sent to it; every other input
// is discarded.

// holdOn applies a held run's inputs and reports whether it stays held
// (or ended). Once an Admit is among them, the run starts as any pending
// run and takes its inputs in order.
func (d *decider) holdOn() bool {
	for _, in := range d.tick.Inputs {
		if _, ok := in.(Admit); ok {
			d.runRow.Held = false
			return false
		}
	}
	for _, in := range d.tick.Inputs {
		d.applyHeld(in)
	}
	d.notifyParent()
	return true
}

func (d *decider) applyHeld(in Input) {
	if d.runRow.Status.Terminal() {
		d.discard(in, "run is "+string(d.runRow.Status))
		return
	}
	switch x := in.(type) {
	case Cancel:
		d.runRow.Held = false
		d.setRun(RunCancelled, x.Reason)
	case Terminate:
		d.runRow.Held = false
		d.runRow.Reason = x.Reason
		d.setRun(RunTerminated, string(x.Reason))
	case SignalReceived:
		d.signal(x.Signal)
	default:
		d.discard(in, "run has not started: flow control holds it")
	}
}

// neverStarted reports a run that ended while held (cancelled or
// terminated before it started): it has no nodes, and every input is
// discarded.
func (d *decider) neverStarted() bool {
	if !d.runRow.Status.Terminal() || !d.runRow.StartedAt.IsZero() {
		return false
	}
	for _, in := range d.tick.Inputs {
		d.discard(in, "run is "+string(d.runRow.Status))
	}
	return true
}
