package engine

import (
	"fmt"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/jsonvalue"
)

// apply validates one input against the state and acts on it.
func (d *decider) apply(in Input) {
	if d.runRow.Status.Terminal() {
		if r, ok := in.(RetryNode); ok && len(d.g.m.Concurrency) > 0 {
			// Its slots were freed when it ended; a retry passes no
			// admission, so it would reopen the run past its key's limit.
			d.discard(r, "run ended under concurrency rules")
			return
		} else if ok {
			d.retryNode(r)
			return
		}
		d.discard(in, "run is "+string(d.runRow.Status))
		return
	}
	switch x := in.(type) {
	case StepResult:
		d.stepResult(x)
	case TimerFired:
		d.timerFired(x)
	case SignalReceived:
		d.signal(x.Signal)
	case EventMatched:
		d.event(x)
	case ChildRunUpdate:
		d.childRun(x)
	case ApprovalDecided:
		d.approval(x)
	case CaseStatusChanged:
		d.caseStatus(x)
	case Cancel:
		d.cancelRun(x)
	case RetryNode:
		d.retryNode(x)
	case CancelNode:
		d.cancelNode(x)
	case ContinueAsNew:
		d.continueAsNew(x)
	case Reconsider:
		d.reconsider(x)
	case Terminate:
		d.terminate(x.Reason)
	case Admit:
		if !d.st.Run.Held { // else it is what let the run start, this tick
			d.discard(in, "run is not held")
		}
	default:
		d.discard(in, "unknown input")
	}
}

// waiting returns the node if it is loaded and waiting with type t.
func (d *decider) waiting(id string, t WaitingType) *Node {
	n := d.get(id)
	if n == nil || n.State != NodeWaiting || n.Waiting == nil || n.Waiting.Type != t {
		return nil
	}
	return d.mut(id)
}

// stepResult applies a worker's result, unless it is for another attempt
// (stale) or the attempt already ended (duplicate).
func (d *decider) stepResult(r StepResult) {
	n := d.get(r.Node)
	switch {
	case n == nil:
		d.discard(r, "unknown node")
		return
	case n.Generation != r.Generation || n.Attempt != r.Attempt:
		d.discard(r, "stale attempt")
		return
	case n.State != NodeRunning:
		d.discard(r, "duplicate result")
		return
	}
	n = d.mut(r.Node)
	out, bad := d.checkOutput(r.Output)
	if bad != nil && r.Error == nil {
		r.Error = bad
	}
	d.recordAttempt(n, out, r.Error)
	if r.Error == nil {
		d.route(n, definition.OutcomeSuccess, out)
		return
	}
	sp := d.specOf(n)
	if !retryable(sp.policy, n.Attempt, r.Error) {
		d.fail(n, r.Error)
		return
	}
	delay := Backoff(sp.policy, n.Attempt, d.rng.Float64())
	n.Error = r.Error
	d.setNode(n, NodeReady, "retry in "+readableDelay(delay))
	d.begin(n)
	d.dispatch(n, sp, d.now.Add(delay))
}

func (d *decider) timerFired(t TimerFired) {
	if t.TimerID == runTimeoutTimer {
		d.timeoutRun()
		return
	}
	n := d.get(t.Node)
	if n == nil || n.State != NodeWaiting || n.Waiting == nil || n.Waiting.TimerID != t.TimerID {
		d.discard(t, "stale timer")
		return
	}
	n = d.mut(t.Node)
	switch n.Waiting.Type {
	case WaitTimer:
		d.succeed(n, definition.OutcomeSuccess, map[string]any{"fired_at": d.now})
	case WaitDigest:
		d.succeed(n, definition.OutcomeSuccess, map[string]any{"items": orEmpty(n.Waiting.Items)})
	default:
		d.timedOut(n)
	}
}

// timedOut applies the node's on_timeout policy.
func (d *decider) timedOut(n *Node) {
	sp := d.specOf(n)
	policy := sp.with.strOr("on_timeout", "fail")
	if n.Waiting.Type == WaitApproval || n.Waiting.Type == WaitInteraction {
		d.emit(CloseInteraction{Node: n.ID, Key: d.idempotencyKey(n)})
	}
	err := &Error{Code: CodeTimeout, Message: string(sp.typ) + " timed out"}
	if n.Waiting.Type == WaitEventSet && sp.with.str("policy") == "until_timeout" {
		policy = "succeed_partial" // collecting until the timeout is the policy itself
	}
	switch policy {
	case "skip":
		d.skip(n, "timed out")
	case "approve":
		d.succeed(n, definition.OutcomeApproved, map[string]any{"approved": true, "timed_out": true})
	case "succeed_partial":
		d.succeed(n, definition.OutcomeSuccess, n.Waiting.Received)
	case "detach":
		d.succeed(n, definition.OutcomeSuccess, map[string]any{"child_key": n.Waiting.ChildKey, "detached": true})
	case "continue_with_error":
		d.failContinue(n, err)
	default:
		d.fail(n, err)
	}
}

func (d *decider) signal(s Signal) {
	for _, b := range d.signals {
		if b.RequestID == s.RequestID {
			d.discard(SignalReceived{Signal: s}, "duplicate signal")
			return
		}
	}
	for _, ref := range d.g.order() {
		if n := d.waiting(ref, WaitSignal); n != nil && n.Waiting.Name == s.Name {
			d.consumeSignal(n, s, false)
			return
		}
	}
	if d.runRow.BufferedSignals >= d.maxSignals() {
		d.out.Signals = append(d.out.Signals, SignalChange{Action: SignalRejected, Signal: s})
		return
	}
	d.runRow.BufferedSignals++
	d.signals = append(d.signals, s)
	d.out.Signals = append(d.out.Signals, SignalChange{Action: SignalBuffered, Signal: s})
}

func (d *decider) maxSignals() int {
	if d.e.MaxBufferedSignals > 0 {
		return d.e.MaxBufferedSignals
	}
	return DefaultMaxBufferedSignals
}

// consumeSignal completes a signal node with the payload; buffered says
// the signal came from the run's buffer.
func (d *decider) consumeSignal(n *Node, s Signal, buffered bool) {
	if buffered {
		d.runRow.BufferedSignals--
		for i, b := range d.signals {
			if b.RequestID == s.RequestID {
				d.signals = append(d.signals[:i:i], d.signals[i+1:]...)
				break
			}
		}
	}
	if n.Waiting != nil && n.Waiting.TimerID != "" {
		d.cancelNodeTimer(n)
	}
	d.out.Signals = append(d.out.Signals, SignalChange{Action: SignalConsumed, Signal: s, Node: n.ID})
	d.succeed(n, definition.OutcomeSuccess, s.Payload)
}

// event offers an event to every node of the run waiting for its name;
// each consumes it at most once. A match_expr that fails on the event is
// no match for that node: the event is discarded for it, with the reason
// kept on the run, and the node goes on waiting.
func (d *decider) event(ev EventMatched) {
	used := false
	for _, ref := range d.g.order() {
		n := d.get(ref)
		if n == nil || n.State != NodeWaiting || n.Waiting == nil {
			continue
		}
		if d.offerEvent(ref, n.Waiting.Type, ev) {
			used = true
		}
	}
	if !used {
		d.discardWith(Discard{Input: describeInput(ev), Reason: "no waiting node matches", Code: DiscardNoMatch})
	}
}

func (d *decider) offerEvent(ref string, t WaitingType, ev EventMatched) bool {
	sp := d.specOf(d.get(ref))
	switch t {
	case WaitEvent, WaitDigest:
		if sp.with.str("name") != ev.Name || !d.matches(ref, "with.match_expr", sp.with.str("match_expr"), ev) {
			return false
		}
		d.takeEvent(d.mut(ref), sp, ev, "")
		return true
	case WaitEventSet:
		key, ok := d.eventSetMember(ref, sp.with, ev)
		if ok {
			d.takeEvent(d.mut(ref), sp, ev, key)
		}
		return ok
	}
	return false
}

// matches evaluates a match expression on the event; empty matches
// everything, and an error is no match, recorded.
func (d *decider) matches(ref, field, src string, ev EventMatched) bool {
	if src == "" {
		return true
	}
	ok, err := d.evalBool(src, func(v *expr.Vars) { v.Event = ev.Data })
	if err != nil {
		d.keepDiscard(Discard{
			Input: describeInput(ev), Node: ref, Code: DiscardMatchError,
			Reason: field + " failed, counted as no match: " + err.Error(),
		})
		return false
	}
	return ok
}

// eventSetMember finds the first member of an event_set, in order, that
// is still open, has the event's name and whose match_expr matches: one
// event satisfies at most one member.
func (d *decider) eventSetMember(ref string, w with, ev EventMatched) (string, bool) {
	received := d.get(ref).Waiting.Received
	for i, m := range eventSetMembers(w) {
		if m.name != ev.Name {
			continue
		}
		if _, seen := received[m.key]; seen {
			continue
		}
		field := fmt.Sprintf("with.events[%d].match_expr", i)
		if d.matches(ref, field, m.match, ev) {
			return m.key, true
		}
	}
	return "", false
}

type eventMember struct{ name, key, match string }

// eventSetMembers reads an event_set's members with their keys (a
// manifest compiled before keys existed gets the same keys derived).
func eventSetMembers(w with) []eventMember {
	list, _ := w["events"].([]any)
	names := make([]string, len(list))
	out := make([]eventMember, len(list))
	for i, x := range list {
		m := with(asMap(x))
		names[i] = m.str("name")
		out[i] = eventMember{name: names[i], key: m.str("key"), match: m.str("match_expr")}
	}
	for i := range out {
		if out[i].key == "" {
			out[i].key = definition.EventMemberKey(names, i)
		}
	}
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// takeEvent consumes the event for the node: an event node succeeds with
// its data, a digest collects it, an event_set records it under the
// member's key and succeeds when its policy is met.
func (d *decider) takeEvent(n *Node, sp spec, ev EventMatched, key string) {
	d.out.Events = append(d.out.Events, EventUse{EventID: ev.EventID, Node: n.ID})
	w := n.Waiting
	switch w.Type {
	case WaitEvent:
		d.cancelNodeTimer(n)
		d.succeed(n, definition.OutcomeSuccess, ev.Data)
	case WaitDigest:
		d.collect(n, sp, ev)
	case WaitEventSet:
		if w.Received == nil {
			w.Received = map[string]any{}
		}
		w.Received[key] = ev.Data
		if eventSetComplete(sp.with, len(w.Received)) {
			d.cancelNodeTimer(n)
			d.succeed(n, definition.OutcomeSuccess, w.Received)
		}
	}
}

// collect adds an event to a digest, releasing the batch at max_items. A
// batch whose JSON would pass the output cap fails the digest
// (payload_too_large) rather than grow without bound.
func (d *decider) collect(n *Node, sp spec, ev EventMatched) {
	w := n.Waiting
	w.Items = append(w.Items, ev.Data)
	_, size, err := jsonvalue.Check(ev.Data, 0)
	w.ItemsBytes += size + 1
	maxItems := sp.with.num("max_items")
	if err == nil && w.ItemsBytes+len(`{"items":[]}`) <= d.maxOutput() && (maxItems <= 0 || int64(len(w.Items)) < maxItems) {
		return
	}
	d.cancelNodeTimer(n)
	d.succeed(n, definition.OutcomeSuccess, map[string]any{"items": w.Items})
}

// eventSetComplete applies the completion policy to the number of
// members satisfied.
func eventSetComplete(w with, got int) bool {
	total, _ := w["events"].([]any)
	switch w.strOr("policy", "all_required") {
	case "any":
		return got >= 1
	case "quorum", "count":
		return int64(got) >= max(w.num("n"), 1)
	case "until_timeout":
		return false
	}
	return got >= len(total)
}

// cancelNodeTimer withdraws the node's timer: dropped from this
// decision if it was scheduled here, else cancelled.
func (d *decider) cancelNodeTimer(n *Node) {
	if n.Waiting == nil || n.Waiting.TimerID == "" {
		return
	}
	id := n.Waiting.TimerID
	if !d.retract(func(c Command) bool { x, ok := c.(ScheduleTimer); return ok && x.TimerID == id }) {
		d.emit(CancelTimer{TimerID: id})
	}
}

func (d *decider) childRun(u ChildRunUpdate) {
	if cur := d.get(u.Node); cur != nil && cur.Waiting != nil && staleChild(cur.Waiting, u) {
		d.discard(u, "stale child run")
		return
	}
	n := d.waiting(u.Node, WaitChild)
	if n == nil {
		d.discard(u, "node not waiting for a child")
		return
	}
	if u.Successor != "" {
		// The child continued as new: the node follows it to its
		// successor, which reports instead. No transition: a long-lived
		// child may continue many times, and the parent's history must
		// not grow with the child's.
		n.Waiting.ChildRunID = u.Successor
		return
	}
	waitFor := d.specOf(n).with.strOr("wait_for", "terminal")
	switch {
	case u.Checkpoint != "" && waitFor == "checkpoint:"+u.Checkpoint:
		d.cancelNodeTimer(n)
		d.succeed(n, definition.OutcomeSuccess, u.Output)
	case u.Checkpoint != "" || !u.Status.Terminal():
		d.discard(u, "not the awaited child state")
	case u.Status == RunSucceeded && waitFor == "terminal" && n.Waiting.Iteration > 0:
		d.iterate(n, u.Output)
	case u.Status == RunSucceeded && waitFor == "terminal":
		d.cancelNodeTimer(n)
		d.succeed(n, definition.OutcomeSuccess, u.Output)
	default:
		d.cancelNodeTimer(n)
		d.fail(n, childError(u))
	}
}

// childError is the parent node's error for a child that did not
// succeed: the child's own error when it could not even start
// (workflow_not_found, depth_exceeded), else child_failed naming how the
// child ended and why.
func childError(u ChildRunUpdate) *Error {
	if u.NotStarted && u.Error != nil {
		return &Error{Code: u.Error.Code, Message: u.Error.Message}
	}
	msg := "child run ended " + string(u.Status)
	if u.Error != nil && u.Error.Code != "" {
		msg += ": " + u.Error.Code
		if u.Error.Message != "" {
			msg += ": " + u.Error.Message
		}
	}
	return &Error{Code: CodeChildFailed, Message: msg}
}

func (d *decider) approval(a ApprovalDecided) {
	n := d.waiting(a.Node, WaitApproval)
	if n == nil {
		d.discard(a, "node not waiting for approval")
		return
	}
	out := map[string]any{"approved": a.Approved, "by": a.By, "comment": a.Comment}
	if !a.Approved {
		d.cancelNodeTimer(n)
		d.succeed(n, definition.OutcomeRejected, out)
		return
	}
	n.Waiting.Approvals++
	if int64(n.Waiting.Approvals) >= max(d.specOf(n).with.num("min_approvals"), 1) {
		d.cancelNodeTimer(n)
		d.succeed(n, definition.OutcomeApproved, out)
	}
}

func (d *decider) caseStatus(c CaseStatusChanged) {
	n := d.waiting(c.Node, WaitInteraction)
	if n == nil {
		d.discard(c, "node not waiting for a case")
		return
	}
	if c.Status != d.specOf(n).with.strOr("awaiting_status", "resolved") {
		d.discard(c, "status not awaited")
		return
	}
	d.cancelNodeTimer(n)
	d.succeed(n, definition.OutcomeSuccess, c.Data)
}

func orEmpty(items []any) []any {
	if items == nil {
		return []any{}
	}
	return items
}

// describeInput is a short stable text for an input in Discarded.
func describeInput(in Input) string {
	switch x := in.(type) {
	case StepResult:
		return fmt.Sprintf("result %s g%d #%d", x.Node, x.Generation, x.Attempt)
	case TimerFired:
		return "timer " + x.TimerID
	case SignalReceived:
		return "signal " + x.Signal.RequestID
	case EventMatched:
		return "event " + x.EventID
	case ChildRunUpdate:
		return "child " + x.Node
	case ApprovalDecided:
		return "approval " + x.Node
	case CaseStatusChanged:
		return "case " + x.Node
	case RetryNode:
		return "retry " + x.Node
	case CancelNode:
		return "cancel " + x.Node
	case Reconsider:
		return "reconsider " + x.RequestID
	}
	return in.inputKind()
}

// readableDelay is a delay as people read it: to the millisecond under a
// minute ("256ms", "4.1s" rather than "256.774572ms"), to the second
// above; the attempt itself is due at the exact time.
func readableDelay(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}
