package engine

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/transcript"
)

var update = flag.Bool("update", false, "rewrite testdata transcripts with the actual output")

// TestTranscripts replays every testdata/*.txt scenario: blocks of
// commands, a ---- line, and the expected output up to a blank line.
// `go test ./app/engine -update` rewrites the expected parts; review the
// diff like code.
func TestTranscripts(t *testing.T) {
	transcript.Replay(t, *update, func(t *testing.T) func([]string) string {
		r := &replay{t: t, now: t0}
		return r.do
	})
}

type replay struct {
	t   *testing.T
	sim *sim
	now time.Time
}

func (r *replay) do(cmd []string) string {
	f := tokens(cmd[0])
	switch f[0] {
	case "manifest":
		m, err := parseManifest(strings.Join(cmd[1:], "\n"))
		if err != nil {
			return "error: " + err.Error()
		}
		r.sim, r.now = newSim(r.t, m, nil), t0
		return "ok"
	case "upgrade":
		// The run goes on under another manifest, as app/upgrade leaves
		// it: every step of it without a node gets a pending one, with no
		// edge into it resolved (a Reconsider input resolves them).
		m, err := parseManifest(strings.Join(cmd[1:], "\n"))
		if err != nil {
			return "error: " + err.Error()
		}
		r.sim.m = m
		for _, s := range m.Steps {
			if r.sim.nodes[s.Ref] == nil {
				r.sim.nodes[s.Ref] = &Node{ID: s.Ref, Ref: s.Ref, State: NodePending}
			}
		}
		return "ok"
	case "start":
		opts := kv(f[1:])
		r.sim.run.Input = opts["input"]
		r.sim.run.Held = opts["held"] == true
		if p, ok := opts["parent"].(string); ok {
			run, node, _ := strings.Cut(p, "/")
			r.sim.run.Parent = &ParentLink{RunID: run, Node: node, Sync: true}
		}
		return formatDecisions(r.sim.tick(r.now, 1))
	case "tick":
		seed := uint64(1)
		more := false
		for _, o := range f[1:] {
			switch {
			case strings.HasPrefix(o, "+"):
				d, _ := time.ParseDuration(o[1:])
				r.now = r.now.Add(d)
			case strings.HasPrefix(o, "seed="):
				seed, _ = strconv.ParseUint(o[5:], 10, 64)
			case o == "more":
				more = true
			}
		}
		var ins []Input
		for _, l := range cmd[1:] {
			in, err := parseInput(tokens(l))
			if err != nil {
				return "error: " + err.Error()
			}
			ins = append(ins, in)
		}
		return r.tickMore(seed, more, ins)
	case "state":
		return formatState(r.sim)
	}
	return "error: unknown command " + f[0]
}

func (r *replay) tickMore(seed uint64, more bool, ins []Input) string {
	if !more {
		return formatDecisions(r.sim.tick(r.now, seed, ins...))
	}
	st := r.sim.load(ins, nil)
	d, err := r.sim.eng.Decide(r.t.Context(), r.sim.m, st, Tick{Now: r.now, Seed: seed, Inputs: ins, MorePending: true})
	if err != nil {
		return "error: " + err.Error()
	}
	r.sim.persist(d)
	return formatDecisions([]*Decision{d})
}

func parseInput(f []string) (Input, error) {
	arg := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	switch f[0] {
	case "result":
		node, att, _ := strings.Cut(arg(1), "#")
		a, g, _ := strings.Cut(att, "/g")
		res := StepResult{Node: node}
		res.Attempt, _ = strconv.Atoi(a)
		res.Generation, _ = strconv.Atoi(g)
		if arg(2) == "ok" {
			res.Output = jsonOrString(arg(3))
		} else {
			res.Error = &Error{Code: arg(3), Retryable: arg(4) == "retryable"}
		}
		return res, nil
	case "timer":
		if arg(1) == "run" {
			return TimerFired{TimerID: runTimeoutTimer}, nil
		}
		return TimerFired{Node: arg(1), TimerID: arg(2)}, nil
	case "signal":
		return SignalReceived{Signal: Signal{RequestID: arg(1), Name: arg(2), Payload: jsonOrNil(arg(3))}}, nil
	case "event":
		return EventMatched{EventID: arg(1), Name: arg(2), Data: jsonOrNil(arg(3))}, nil
	case "child":
		opts := kv(f[3:])
		cp, _ := opts["checkpoint"].(string)
		u := ChildRunUpdate{Node: arg(1), Status: RunStatus(arg(2)), Checkpoint: cp, Output: opts["output"]}
		if key, ok := opts["key"].(string); ok {
			u.ChildRunID = ChildRunID(key)
		}
		if run, ok := opts["run"].(string); ok {
			u.ChildRunID = run
		}
		if next, ok := opts["successor"].(string); ok {
			u.Successor = next
		}
		return u, nil
	case "approve", "reject":
		return ApprovalDecided{Node: arg(1), Approved: f[0] == "approve", By: arg(2)}, nil
	case "case":
		return CaseStatusChanged{Node: arg(1), Status: arg(2), Data: jsonOrNil(arg(3))}, nil
	case "cancel":
		c := Cancel{Reason: arg(1)}
		if by, ok := strings.CutPrefix(arg(2), "by="); ok {
			c.By = by
		}
		return c, nil
	case "retry":
		return RetryNode{Node: arg(1)}, nil
	case "cancel-node":
		return CancelNode{Node: arg(1), Reason: strings.Join(f[min(2, len(f)):], " ")}, nil
	case "can":
		return ContinueAsNew{RequestID: arg(1), Input: jsonOrNil(arg(2))}, nil
	case "terminate":
		return Terminate{Reason: TerminateReason(arg(1))}, nil
	case "admit":
		return Admit{}, nil
	case "reconsider":
		return Reconsider{RequestID: "up", Nodes: f[1:]}, nil
	}
	return nil, fmt.Errorf("unknown input %q", f[0])
}

func jsonOrNil(s string) any {
	if s == "" {
		return nil
	}
	return jsonOrString(s)
}

func formatDecisions(ds []*Decision) string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			fmt.Fprintf(&b, "-- follow-up call %d --\n", i)
		}
		formatDecision(&b, d)
	}
	s := strings.TrimRight(b.String(), "\n")
	if s == "" {
		return "(nothing)"
	}
	return s
}

func formatDecision(b *strings.Builder, d *Decision) {
	discards := d.Discarded
	flush := func(seq int64) {
		for len(discards) > 0 && discards[0].Seq <= seq {
			at := ""
			if discards[0].Node != "" {
				at = " at " + discards[0].Node
			}
			fmt.Fprintf(b, "discard %s%s: %s\n", discards[0].Input, at, discards[0].Reason)
			discards = discards[1:]
		}
	}
	for _, tr := range d.Transitions {
		flush(tr.Seq - 1)
		who := "run"
		if tr.Node != "" {
			who = "node " + tr.Node
		}
		fmt.Fprintf(b, "%s %s -> %s", who, tr.From, tr.To)
		if tr.Node != "" && tr.To == string(NodeRunning) {
			fmt.Fprintf(b, " #%d", tr.Attempt)
		}
		if tr.Detail != "" {
			fmt.Fprintf(b, " (%s)", tr.Detail)
		}
		b.WriteString("\n")
	}
	flush(d.Run.TransitionCount)
	for _, c := range d.Commands {
		fmt.Fprintf(b, "cmd %s\n", formatCommand(c))
	}
	for _, s := range d.Signals {
		fmt.Fprintf(b, "signal %s %s %s %s\n", s.Action, s.Signal.RequestID, s.Signal.Name, s.Node)
	}
	for _, e := range d.Events {
		fmt.Fprintf(b, "event %s consumed by %s\n", e.EventID, e.Node)
	}
	for _, n := range d.Needs {
		fmt.Fprintf(b, "need %s[%d:%d] live=%v\n", n.Scatter, n.From, n.To, n.Live)
	}
	if ended(d) {
		fmt.Fprintf(b, "=> run %s", d.Run.Status)
		if d.Run.Reason != "" {
			fmt.Fprintf(b, " reason=%s", d.Run.Reason)
		}
		if d.Run.Error != nil {
			fmt.Fprintf(b, " error=%s", js(d.Run.Error))
		} else {
			fmt.Fprintf(b, " output=%s", js(d.Run.Output))
		}
		fmt.Fprintf(b, " transitions=%d\n", d.Run.TransitionCount)
	}
}

// ended reports whether the decision moved the run to a final status.
func ended(d *Decision) bool {
	for _, tr := range d.Transitions {
		if tr.Node == "" && RunStatus(tr.To).Terminal() {
			return true
		}
	}
	return false
}

func formatCommand(c Command) string {
	switch x := c.(type) {
	case DispatchAttempt:
		out := fmt.Sprintf("dispatch %s #%d key=%s at=%s params=%s", x.Node, x.Attempt, x.IdempotencyKey, rel(x.RunAt), js(x.Params))
		if x.FlowKey != "" {
			out += fmt.Sprintf(" flow=%s/%d", x.FlowKey, x.FlowLimit)
		}
		return out
	case ScheduleTimer:
		return fmt.Sprintf("timer %s at=%s", x.TimerID, rel(x.FireAt))
	case CancelTimer:
		return "cancel_timer " + x.TimerID
	case CancelAttempt:
		return fmt.Sprintf("cancel_attempt %s #%d", x.Node, x.Attempt)
	case OpenApproval:
		return fmt.Sprintf("open_approval %s key=%s approvers=%v min=%d", x.Node, x.Key, x.Approvers, x.MinApprovals)
	case OpenCase:
		return fmt.Sprintf("open_case %s key=%s awaiting=%s", x.Node, x.Key, x.AwaitingStatus)
	case StartChildRun:
		return fmt.Sprintf("start_child %s key=%s workflow=%s sync=%v wait_for=%s input=%s", x.Node, x.Key, x.Workflow, x.Sync, x.WaitFor, js(x.Input))
	case NotifyParent:
		out := fmt.Sprintf("notify_parent %s/%s status=%s checkpoint=%s output=%s", x.Parent.RunID, x.Parent.Node, x.Status, x.Checkpoint, js(x.Output))
		if x.Successor != "" {
			out += " successor=" + x.Successor
		}
		return out
	case CancelChildRun:
		out := fmt.Sprintf("cancel_child %s key=%s", x.Node, x.Key)
		if x.RunID != ChildRunID(x.Key) {
			out += " run=" + x.RunID
		}
		return out + " reason=" + x.Reason
	case StartSuccessor:
		return fmt.Sprintf("start_successor request=%s input=%s", x.RequestID, js(x.Input))
	}
	return fmt.Sprintf("%s %+v", c.commandKind(), c)
}

func formatState(s *sim) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s transitions=%d buffered_signals=%d", s.run.Status, s.run.TransitionCount, s.run.BufferedSignals)
	if s.run.DiscardedTotal > 0 {
		fmt.Fprintf(&b, " discarded=%d", s.run.DiscardedTotal)
		for _, x := range s.run.Discarded {
			fmt.Fprintf(&b, "\n  discarded %s at %s (%s)", x.Input, x.Node, x.Code)
		}
	}
	b.WriteString("\n")
	for _, id := range sortedKeys(s.nodes) {
		n := s.nodes[id]
		fmt.Fprintf(&b, "%s %s gen=%d attempt=%d output=%s", id, n.State, n.Generation, n.Attempt, js(n.Output))
		if n.Scatter != nil {
			fmt.Fprintf(&b, " scatter=%+v", *n.Scatter)
		}
		if n.CancelReason != "" {
			fmt.Fprintf(&b, " cancel_reason=%q", n.CancelReason)
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func rel(t time.Time) string { return "+" + t.Sub(t0).String() }
