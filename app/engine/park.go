package engine

import (
	"slices"
	"strings"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/schedule"
)

// park puts a running node in waiting with its wake data and emits the
// command that will eventually wake it.
func (d *decider) park(n *Node, sp spec) {
	switch sp.typ {
	case definition.TypeWait:
		d.parkWait(n, sp.with)
	case definition.TypeSignal:
		d.parkSignal(n, sp.with)
	case definition.TypeEvent, definition.TypeEventSet:
		d.parkEvent(n, sp)
	case definition.TypeDigest:
		w := &Waiting{Type: WaitDigest, Name: sp.with.str("name")}
		d.wait(n, w, "wake", d.now.Add(sp.with.ms("window_ms")))
	case definition.TypeApproval:
		d.parkApproval(n, sp.with)
	case definition.TypeHumanLoop:
		d.parkCase(n, sp.with)
	case definition.TypeSubworkflow:
		d.parkChild(n, sp.with)
	}
}

// wait parks n; a non-zero at arms a timer for purpose ("wake" or
// "timeout").
func (d *decider) wait(n *Node, w *Waiting, purpose string, at time.Time) {
	if !at.IsZero() {
		w.TimerID, w.Until = timerID(n, purpose), at
		d.emit(ScheduleTimer{TimerID: w.TimerID, Node: n.ID, FireAt: at})
	}
	n.Waiting = w
	d.setNode(n, NodeWaiting, string(w.Type))
}

// timeoutAt is now + with.timeout_ms, zero when none.
func (d *decider) timeoutAt(w with) time.Time {
	if ms := w.num("timeout_ms"); ms > 0 {
		return d.now.Add(msDuration(ms))
	}
	return time.Time{}
}

func (d *decider) parkWait(n *Node, w with) {
	at, err := d.wakeAt(n, w)
	if err != nil {
		d.fail(n, err)
		return
	}
	d.wait(n, &Waiting{Type: WaitTimer}, "wake", at)
}

// wakeAt resolves a wait step's duration, until, cron or until_expr.
func (d *decider) wakeAt(n *Node, w with) (time.Time, *Error) {
	switch {
	case w.num("duration_ms") > 0:
		return d.now.Add(w.ms("duration_ms")), nil
	case w.str("until") != "":
		t, err := time.Parse(time.RFC3339, w.str("until"))
		if err != nil {
			return time.Time{}, &Error{Code: CodeInvalidStep, Message: "with.until: " + err.Error()}
		}
		return t, nil
	case w.str("until_expr") != "":
		v, err := d.eval(w.str("until_expr"), expr.KindTimestamp, vars(n))
		t, ok := v.(time.Time)
		if err != nil || !ok {
			return time.Time{}, exprError("with.until_expr", errOr(err, "not a timestamp"))
		}
		return t, nil
	case w.str("cron") != "":
		return d.cronNext(w)
	}
	return d.now, nil
}

// cronNext is the first time after now the wait's cron matches in its
// zone, by the schedules' rules for clock changes; @every D waits D (in
// whole seconds, at least one), from now's second.
func (d *decider) cronNext(w with) (time.Time, *Error) {
	spec := strings.TrimSpace(w.str("cron"))
	if every, ok := strings.CutPrefix(spec, "@every"); ok {
		wait, err := time.ParseDuration(strings.TrimSpace(every))
		if err != nil {
			return time.Time{}, &Error{Code: CodeInvalidStep, Message: "with.cron: " + err.Error()}
		}
		wait = max(wait.Truncate(time.Second), time.Second)
		return d.now.Add(wait - time.Duration(d.now.Nanosecond())), nil
	}
	sc, err := schedule.New(schedule.Spec{Cron: spec, Timezone: w.str("timezone")})
	if err != nil {
		return time.Time{}, &Error{Code: CodeInvalidStep, Message: "with." + err.Error()}
	}
	return sc.Next(d.now), nil
}

func (d *decider) parkSignal(n *Node, w with) {
	name := w.str("name")
	for _, s := range d.signals {
		if s.Name == name {
			d.consumeSignal(n, s, true)
			return
		}
	}
	d.wait(n, &Waiting{Type: WaitSignal, Name: name}, "timeout", d.timeoutAt(w))
}

func (d *decider) parkEvent(n *Node, sp spec) {
	wt := &Waiting{Type: WaitEvent, Name: sp.with.str("name")}
	if sp.typ == definition.TypeEventSet {
		wt.Type, wt.Events = WaitEventSet, memberNames(sp.with)
	}
	d.wait(n, wt, "timeout", d.timeoutAt(sp.with))
}

// memberNames lists the distinct event names of an event_set's members,
// in member order.
func memberNames(w with) []string {
	var names []string
	list, _ := w["events"].([]any)
	for _, x := range list {
		if name := with(asMap(x)).str("name"); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

func (d *decider) parkApproval(n *Node, w with) {
	at := d.timeoutAt(w)
	d.emit(OpenApproval{
		Node: n.ID, Key: d.idempotencyKey(n), Approvers: w.strs("approvers"), Title: w.str("title"),
		Description: w.str("description"), MinApprovals: int(max(w.num("min_approvals"), 1)), ExpiresAt: at,
	})
	d.wait(n, &Waiting{Type: WaitApproval}, "timeout", at)
}

func (d *decider) parkCase(n *Node, w with) {
	d.emit(OpenCase{
		Node: n.ID, Key: d.idempotencyKey(n), Title: w.str("title"), Assignees: w.strs("assignees"),
		Fields: w["fields"], AwaitingStatus: w.strOr("awaiting_status", "resolved"),
	})
	d.wait(n, &Waiting{Type: WaitInteraction}, "timeout", d.timeoutAt(w))
}

// parkChild starts a child run; sync waits for it, async succeeds now. A
// repeating subworkflow starts its first iteration.
func (d *decider) parkChild(n *Node, w with) {
	input, err := d.childInput(n, w.str("input_expr"), "with.input_expr", &expr.Loop{})
	if err != nil {
		d.fail(n, err)
		return
	}
	key := d.idempotencyKey(n)
	sync := w.str("mode") != "async"
	loop := sync && w.sub("repeat") != nil
	if loop {
		key = iterationKey(key, 1)
	}
	d.startChild(n, w, key, input)
	if !sync {
		d.succeed(n, definition.OutcomeSuccess, map[string]any{"child_key": key, "child_run_id": ChildRunID(key)})
		return
	}
	wt := &Waiting{Type: WaitChild, ChildKey: key, ChildRunID: ChildRunID(key)}
	if loop {
		wt.Iteration = 1
	}
	d.wait(n, wt, "timeout", d.timeoutAt(w))
}

func (d *decider) startChild(n *Node, w with, key string, input any) {
	d.emit(StartChildRun{
		Node: n.ID, Key: key, Workflow: w.str("workflow"), Version: int(w.num("version")),
		Input: input, Sync: w.str("mode") != "async", WaitFor: w.strOr("wait_for", "terminal"),
	})
}

// childInput is a child run's input: src evaluated (with the loop's
// variables), or the scatter item or the run input.
func (d *decider) childInput(n *Node, src, field string, loop *expr.Loop) (any, *Error) {
	if src == "" {
		if n.Child != nil {
			return n.Child.Item, nil
		}
		return d.runRow.Input, nil
	}
	extra := vars(n)
	v, err := d.evalWith(src, func(v *expr.Vars) {
		if extra != nil {
			extra(v)
		}
		v.Loop = loop
	})
	if err != nil {
		return nil, exprError(field, err)
	}
	return v, nil
}

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errString(msg)
}

type errString string

func (e errString) Error() string { return string(e) }
