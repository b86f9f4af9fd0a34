package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

const propertyManifest = "" +
	"step a task handler=h retry=3\n" +
	"step c condition expr=`steps.a.output.ok`\n" +
	"step t task handler=h retry=2 on_error=continue\n" +
	"step ap approval approvers=[\"x\"] timeout_ms=5000 on_timeout=skip\n" +
	"step j transform expr=`1` join=any\n" +
	"step r transform expr=`steps.j.state`\n" +
	"step x transform expr=`\"x\"`\n" +
	"step y transform expr=`\"y\"`\n" +
	"step s signal name=go timeout_ms=8000 on_timeout=skip\n" +
	"step w wait duration_ms=1000\n" +
	"step sc scatter items_expr=`[1,2,3]` concurrency=2 do=`{\"type\":\"task\",\"with\":{\"handler\":\"h\"},\"retry\":{\"max_attempts\":2,\"initial_interval_ms\":10}}`\n" +
	"step g gather scatter_ref=sc\n" +
	"step z transform expr=`2`\n" +
	"step ra task handler=h\n" +
	"step rb wait duration_ms=1500\n" +
	"step rj transform expr=`1` at_least=1 cancel_rest\n" +
	"step fin transform expr=`\"fin\"` end_run=succeeded\n" +
	"edge a c\nedge c t on=true\nedge c ap on=false\nedge t j\nedge t j on=error\n" +
	"edge ap j on=approved\nedge ap j on=rejected\nedge j r on=done\n" +
	"choice r x 0 when=`input.flag`\nchoice r y 1 default\n" +
	"edge sc g\nedge g z\nedge w z on=done\nedge s z on=done\n" +
	"edge ra rj\nedge rb rj\nedge rj z on=done\nedge y fin\n"

// driver keeps what the outside world owes the run: results for
// dispatched attempts, due timers, open approvals.
type driver struct {
	rng        *rand.Rand
	s          *sim
	now        time.Time
	pending    []DispatchAttempt
	answered   []StepResult
	timers     map[string]ScheduleTimer
	approvals  []string
	dispatched map[string]bool
	lastState  map[string]string
	count      int64
}

// Random interleavings, duplicates, stale results and controls never break
// the engine's invariants, and answering everything always ends the run.
func TestPropertyInvariants(t *testing.T) {
	t.Parallel()
	m, err := parseManifest(propertyManifest)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range propertySeeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dr := &driver{
				rng: rand.New(rand.NewPCG(seed, 7)), now: t0,
				timers: map[string]ScheduleTimer{}, dispatched: map[string]bool{}, lastState: map[string]string{},
			}
			dr.s = newSim(t, m, map[string]any{"flag": seed%2 == 0})
			dr.observe(t, dr.s.tick(dr.now, seed))
			for range 40 {
				dr.observe(t, dr.s.tick(dr.now, dr.rng.Uint64(), dr.randomInputs()...))
			}
			for i := 0; i < 60 && !dr.s.run.Status.Terminal(); i++ {
				dr.observe(t, dr.s.tick(dr.now, dr.rng.Uint64(), dr.answerAll()...))
			}
			if !dr.s.run.Status.Terminal() {
				t.Fatalf("run never ended: %s\n%s", dr.s.run.Status, formatState(dr.s))
			}
			dr.checkEdgesResolved(t)
			t.Logf("ended %s (%s) after %d transitions", dr.s.run.Status, dr.endDetail(), dr.s.run.TransitionCount)
		})
	}
}

func (dr *driver) randomInputs() []Input {
	var ins []Input
	for range 1 + dr.rng.IntN(4) {
		if in := dr.randomInput(); in != nil {
			ins = append(ins, in)
		}
	}
	dr.now = dr.now.Add(time.Duration(dr.rng.IntN(3000)) * time.Millisecond)
	return ins
}

func (dr *driver) randomInput() Input {
	switch p := dr.rng.IntN(100); {
	case p < 40 && len(dr.pending) > 0:
		return dr.answer(dr.rng.IntN(len(dr.pending)), dr.rng.IntN(4) == 0)
	case p < 50 && len(dr.answered) > 0: // duplicate delivery
		return dr.answered[dr.rng.IntN(len(dr.answered))]
	case p < 55: // stale or invented attempt
		nodes := []string{"a", "t", "sc[0]", "sc[1]", "sc[2]"}
		return StepResult{Node: nodes[dr.rng.IntN(len(nodes))], Attempt: dr.rng.IntN(4), Generation: dr.rng.IntN(2), Output: map[string]any{}}
	case p < 70 && len(dr.timers) > 0:
		return dr.fire(sortedKeys(dr.timers)[dr.rng.IntN(len(dr.timers))])
	case p < 78 && len(dr.approvals) > 0:
		return ApprovalDecided{Node: dr.approvals[dr.rng.IntN(len(dr.approvals))], Approved: dr.rng.IntN(2) == 0}
	case p < 86:
		return SignalReceived{Signal: Signal{RequestID: fmt.Sprint("r", dr.rng.IntN(5)), Name: "go"}}
	case p < 90:
		return RetryNode{Node: []string{"a", "t", "g", "sc"}[dr.rng.IntN(4)]}
	case p < 92:
		return Cancel{Reason: "random"}
	case p < 93:
		return CancelNode{Node: []string{"a", "t", "sc", "sc[1]", "w", "ra", "ap"}[dr.rng.IntN(7)]}
	case p < 94:
		return ContinueAsNew{RequestID: "can"}
	}
	return nil
}

// answer returns a result for pending[i] and forgets it.
func (dr *driver) answer(i int, fail bool) Input {
	da := dr.pending[i]
	dr.pending = slices.Delete(dr.pending, i, i+1)
	r := StepResult{Node: da.Node, Generation: da.Generation, Attempt: da.Attempt, Output: map[string]any{"ok": dr.rng.IntN(2) == 0}}
	if fail {
		r.Output, r.Error = nil, &Error{Code: "boom", Retryable: dr.rng.IntN(2) == 0}
	}
	dr.answered = append(dr.answered, r)
	return r
}

func (dr *driver) fire(id string) Input {
	tm := dr.timers[id]
	delete(dr.timers, id)
	if tm.FireAt.After(dr.now) {
		dr.now = tm.FireAt
	}
	return TimerFired{TimerID: tm.TimerID, Node: tm.Node}
}

// answerAll settles every debt successfully.
func (dr *driver) answerAll() []Input {
	var ins []Input
	for len(dr.pending) > 0 {
		ins = append(ins, dr.answer(0, false))
	}
	for _, id := range sortedKeys(dr.timers) {
		ins = append(ins, dr.fire(id))
	}
	for _, n := range dr.approvals {
		ins = append(ins, ApprovalDecided{Node: n, Approved: true})
	}
	dr.approvals = nil
	ins = append(ins, SignalReceived{Signal: Signal{RequestID: fmt.Sprint("drain", dr.now.UnixNano()), Name: "go"}})
	dr.now = dr.now.Add(time.Second)
	return ins
}

// observe records the debts a tick created and checks the invariants.
func (dr *driver) observe(t *testing.T, ds []*Decision) {
	t.Helper()
	for _, d := range ds {
		dr.checkHistory(t, d)
		for _, c := range d.Commands {
			dr.record(t, c)
		}
	}
	dr.checkRunAgreesWithNodes(t)
}

func (dr *driver) record(t *testing.T, c Command) {
	switch x := c.(type) {
	case DispatchAttempt:
		key := fmt.Sprintf("%s/%d/%d", x.Node, x.Generation, x.Attempt)
		if dr.dispatched[key] {
			t.Fatalf("attempt %s dispatched twice", key)
		}
		dr.dispatched[key] = true
		dr.pending = append(dr.pending, x)
	case ScheduleTimer:
		dr.timers[x.TimerID] = x
	case CancelTimer:
		delete(dr.timers, x.TimerID)
	case OpenApproval:
		dr.approvals = append(dr.approvals, x.Node)
	}
}

// checkHistory: transitions are numbered without gaps, each starts from
// the state the previous one left, and a terminal node only leaves its
// state through an operator retry.
func (dr *driver) checkHistory(t *testing.T, d *Decision) {
	t.Helper()
	for _, tr := range d.Transitions {
		if dr.count++; tr.Seq != dr.count {
			t.Fatalf("transition seq %d, want %d", tr.Seq, dr.count)
		}
		key := fmt.Sprintf("%s/g%d", tr.Node, tr.Generation)
		if last, ok := dr.lastState[key]; ok && last != tr.From {
			t.Fatalf("%s: transition from %s but state was %s", key, tr.From, last)
		}
		if tr.Node != "" && NodeState(tr.From).Terminal() && tr.To != string(NodePending) {
			t.Fatalf("node %s left terminal %s for %s", tr.Node, tr.From, tr.To)
		}
		if tr.Node != "" && NodeState(tr.From).Terminal() && !strings.HasPrefix(tr.Detail, "retry") {
			t.Fatalf("node %s reopened without a retry: %+v", tr.Node, tr)
		}
		dr.lastState[key] = tr.To
	}
	if d.Run.TransitionCount != dr.count {
		t.Fatalf("transition_count %d, history %d", d.Run.TransitionCount, dr.count)
	}
}

// checkRunAgreesWithNodes: the run is terminal iff every node is; waiting
// iff nothing is ready or running and something waits.
func (dr *driver) checkRunAgreesWithNodes(t *testing.T) {
	t.Helper()
	allDone, active, waiting := true, false, false
	for _, n := range dr.s.nodes {
		allDone = allDone && n.State.Terminal()
		if n.Child != nil {
			continue
		}
		active = active || n.State == NodeReady || n.State == NodeRunning
		waiting = waiting || n.State == NodeWaiting
	}
	st := dr.s.run.Status
	if st.Terminal() != allDone {
		t.Fatalf("run %s but all nodes terminal = %v\n%s", st, allDone, formatState(dr.s))
	}
	if !st.Terminal() && (st == RunWaiting) != (!active && waiting) {
		t.Fatalf("run %s with active=%v waiting=%v", st, active, waiting)
	}
}

// checkEdgesResolved: in a succeeded run every edge ended fired or dead,
// and a skipped node's edges are all dead.
func (dr *driver) checkEdgesResolved(t *testing.T) {
	t.Helper()
	if dr.s.run.Status != RunSucceeded {
		return
	}
	for _, e := range dr.s.m.Edges {
		mark := dr.s.nodes[e.To].Inbound[EdgeID(e)]
		if mark != EdgeFired && mark != EdgeDead {
			t.Fatalf("edge %s unresolved", EdgeID(e))
		}
		if dr.s.nodes[e.From].State == NodeSkipped && mark != EdgeDead {
			t.Fatalf("edge %s of a skipped node is %s", EdgeID(e), mark)
		}
	}
}

var propertySeeds = uint64(300)

// endDetail is the detail of the run's last status transition.
func (dr *driver) endDetail() string {
	for i := len(dr.s.history) - 1; i >= 0; i-- {
		if tr := dr.s.history[i]; tr.Node == "" && RunStatus(tr.To).Terminal() {
			return tr.Detail
		}
	}
	return ""
}
