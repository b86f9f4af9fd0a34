package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
)

// Defaults for Engine's bounds.
const (
	DefaultMaxBufferedSignals = 1000
	DefaultMaxCANDeferrals    = 3
)

// Engine holds what Decide needs besides its arguments: the expression
// evaluator and the run-wide bounds. It keeps no state between calls.
type Engine struct {
	Eval Evaluator
	// MaxBufferedSignals bounds unmatched signals per run (default 1000).
	MaxBufferedSignals int
	// MaxCANDeferrals bounds the ticks a ContinueAsNew waits for pending
	// inputs (default 3).
	MaxCANDeferrals int
	// MaxOutputBytes caps every node output and the run's output, as JSON
	// (default DefaultMaxOutputBytes).
	MaxOutputBytes int
}

// ErrInvalidState reports a state Decide cannot work on (a manifest step
// without its node, an unknown step type…): a bug in the caller.
var ErrInvalidState = errors.New("engine: invalid state")

// Decide is the coordinator's decision: from the loaded state and the
// tick's inputs it computes the transitions and commands. It performs no
// I/O, reads no clock and leaves st untouched; every change is in the
// returned Decision. When ctx ends while it decides it returns an error
// rather than a decision that failed nodes on interrupted evaluations.
func (e *Engine) Decide(ctx context.Context, m *definition.Manifest, st *State, t Tick) (*Decision, error) {
	if e.Eval == nil {
		return nil, fmt.Errorf("%w: no evaluator", ErrInvalidState)
	}
	d := newDecider(ctx, e, m, st, t)
	if err := d.check(); err != nil {
		return nil, err
	}
	d.run()
	if err := ctx.Err(); err != nil {
		// An evaluation was interrupted, not faulty: decide again later.
		return nil, fmt.Errorf("engine: decision interrupted: %w", context.Cause(ctx))
	}
	return d.finish(), nil
}

// decider is one Decide call's working memory.
type decider struct {
	ctx  context.Context
	e    *Engine
	g    *graph
	now  time.Time
	rng  *rand.Rand
	tick Tick

	st         *State
	runRow     Run
	work       map[string]*Node
	order      []string
	queue      []string
	signals    []Signal
	children   map[string]map[int]string // scatter id → index → child id
	steps      map[string]any
	fillingSet map[string]bool
	out        Decision
}

func newDecider(ctx context.Context, e *Engine, m *definition.Manifest, st *State, t Tick) *decider {
	d := &decider{
		ctx: ctx, e: e, g: newGraph(m), now: t.Now, tick: t,
		rng:      rand.New(rand.NewPCG(t.Seed, t.Seed^0x9e3779b97f4a7c15)),
		st:       st,
		runRow:   st.Run,
		work:     map[string]*Node{},
		signals:  append([]Signal(nil), st.Signals...),
		children: map[string]map[int]string{},
	}
	for id, n := range st.Nodes {
		if n.Child != nil {
			d.indexChild(id, n.Child)
		}
	}
	return d
}

func (d *decider) indexChild(id string, c *ChildInfo) {
	if d.children[c.Scatter] == nil {
		d.children[c.Scatter] = map[int]string{}
	}
	d.children[c.Scatter][c.Index] = id
}

// check verifies that every manifest step has its node once the run has
// started.
func (d *decider) check() error {
	for ref, s := range d.g.steps {
		if _, ok := stepKinds[s.Type]; !ok {
			return fmt.Errorf("%w: step %q has unknown type %q", ErrInvalidState, ref, s.Type)
		}
		if d.runRow.Status != RunPending && !d.runRow.StartedAt.IsZero() && d.st.Nodes[ref] == nil {
			return fmt.Errorf("%w: node %q not loaded", ErrInvalidState, ref)
		}
	}
	return nil
}

func (d *decider) run() {
	if d.runRow.Held && d.holdOn() || d.neverStarted() {
		return
	}
	if d.runRow.Status == RunPending {
		d.start()
	}
	for _, in := range d.tick.Inputs {
		d.apply(in)
		d.drain()
	}
	d.drain()
	d.resumeScatters()
	d.drain()
	d.settle()
}

// resumeScatters lets every open scatter dispatch or complete with the
// children loaded for it (a follow-up call after Needs).
func (d *decider) resumeScatters() {
	for _, ref := range d.g.order() {
		if n := d.get(ref); n.Scatter != nil && !n.State.Terminal() && !d.runRow.Status.Terminal() {
			d.scatterProgress(ref)
		}
	}
}

// get returns the node as this tick sees it (nil when not loaded).
func (d *decider) get(id string) *Node {
	if n, ok := d.work[id]; ok {
		return n
	}
	return d.st.Nodes[id]
}

// mut returns a private copy of the node that the decision will persist.
func (d *decider) mut(id string) *Node {
	if n, ok := d.work[id]; ok {
		return n
	}
	n := d.st.Nodes[id]
	if n == nil {
		return nil
	}
	c := n.Clone()
	d.work[id] = c
	d.order = append(d.order, id)
	return c
}

// insert adds a node created by this tick.
func (d *decider) insert(n *Node) *Node {
	if _, ok := d.work[n.ID]; !ok {
		d.order = append(d.order, n.ID)
	}
	d.work[n.ID] = n
	if n.Child != nil {
		d.indexChild(n.ID, n.Child)
	}
	return n
}

// setNode changes a node's state and records the transition.
func (d *decider) setNode(n *Node, to NodeState, detail string) {
	from := n.State
	n.State = to
	switch to {
	case NodeReady:
		n.ReadyAt = d.now
	case NodeRunning:
		n.StartedAt = d.now
	}
	if to.Terminal() {
		n.FinishedAt = d.now
	}
	d.transition(Transition{Node: n.ID, From: string(from), To: string(to), Generation: n.Generation, Attempt: n.Attempt, Detail: detail})
}

// noteNode records a self-transition of n saying detail, changing
// nothing else (a running scatter keeps its started_at).
func (d *decider) noteNode(n *Node, detail string) {
	st := string(n.State)
	d.transition(Transition{Node: n.ID, From: st, To: st, Generation: n.Generation, Attempt: n.Attempt, Detail: detail})
}

// setRun changes the run's status and records the transition.
func (d *decider) setRun(to RunStatus, detail string) {
	from := d.runRow.Status
	d.runRow.Status = to
	if to.Terminal() {
		d.runRow.FinishedAt = d.now
	}
	d.transition(Transition{From: string(from), To: string(to), Detail: detail})
}

func (d *decider) transition(tr Transition) {
	d.runRow.TransitionCount++
	tr.Seq, tr.At = d.runRow.TransitionCount, d.now
	d.out.Transitions = append(d.out.Transitions, tr)
}

func (d *decider) emit(c Command) { d.out.Commands = append(d.out.Commands, c) }

// retract drops a command this decision emitted, so that starting and
// withdrawing something in one tick leaves no work for the shell.
func (d *decider) retract(match func(Command) bool) bool {
	for i, c := range d.out.Commands {
		if match(c) {
			d.out.Commands = append(d.out.Commands[:i], d.out.Commands[i+1:]...)
			return true
		}
	}
	return false
}

func (d *decider) discard(in Input, reason string) {
	d.discardWith(Discard{Input: describeInput(in), Reason: reason})
}

func (d *decider) discardWith(x Discard) {
	x.Seq, x.At = d.runRow.TransitionCount, d.now
	d.out.Discarded = append(d.out.Discarded, x)
}

// keepDiscard also records a discard on the run, where a user sees it:
// the latest MaxKeptDiscards of them and their count.
func (d *decider) keepDiscard(x Discard) {
	d.discardWith(x)
	x = d.out.Discarded[len(d.out.Discarded)-1]
	kept := d.runRow.Discarded
	if len(kept) >= MaxKeptDiscards {
		kept = kept[len(kept)-MaxKeptDiscards+1:]
	}
	d.runRow.Discarded = append(append([]Discard(nil), kept...), x)
	d.runRow.DiscardedTotal++
}

func (d *decider) finish() *Decision {
	for _, id := range d.order {
		d.out.Nodes = append(d.out.Nodes, d.work[id])
	}
	d.out.Run = d.runRow
	d.out.RunChanged = !reflect.DeepEqual(d.runRow, d.st.Run)
	return &d.out
}

// eval evaluates src with the tick's variables; extra sets item, index,
// key or event. A value (anything but a bool or a timestamp) comes back
// in the JSON value model, as it will read after a trip through the
// database; one that cannot make that trip is a *badValue.
func (d *decider) eval(src string, kind expr.Kind, extra func(*expr.Vars)) (any, error) {
	v := expr.Vars{Input: d.runRow.Input, Steps: d.stepsVar(), Run: d.runVar(), Now: d.now}
	if extra != nil {
		extra(&v)
	}
	out, err := d.e.Eval.Eval(d.ctx, src, kind, v)
	if err != nil || kind == expr.KindBool || kind == expr.KindTimestamp {
		return out, err
	}
	return storable(out)
}

func (d *decider) evalBool(src string, extra func(*expr.Vars)) (bool, error) {
	v, err := d.eval(src, expr.KindBool, extra)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("expression must be a bool, not %T", v)
	}
	return b, nil
}

func (d *decider) runVar() map[string]any {
	if d.runRow.Meta != nil {
		return d.runRow.Meta
	}
	return map[string]any{"id": d.runRow.ID}
}

// stepsVar is the CEL `steps` map: ref → {output, state, error} of the
// finished manifest nodes, built once per tick and kept current.
func (d *decider) stepsVar() map[string]any {
	if d.steps == nil {
		d.steps = map[string]any{}
		for ref := range d.g.steps {
			if n := d.get(ref); n != nil && n.State.Terminal() {
				d.steps[ref] = stepVar(n)
			}
		}
	}
	return d.steps
}

func stepVar(n *Node) map[string]any {
	v := map[string]any{"output": n.Output, "state": string(n.State)}
	if n.Error != nil {
		v["error"] = map[string]any{"code": n.Error.Code, "message": n.Error.Message}
	} else {
		v["error"] = nil
	}
	return v
}

// finished records a terminal manifest node in the steps variable.
func (d *decider) finished(n *Node) {
	if d.steps != nil && n.Child == nil {
		d.steps[n.ID] = stepVar(n)
	}
}

func (d *decider) recordAttempt(n *Node, output any, err *Error) {
	d.out.Attempts = append(d.out.Attempts, Attempt{
		Node: n.ID, Type: string(d.specOf(n).typ), Generation: n.Generation, Attempt: n.Attempt,
		StartedAt: n.StartedAt, FinishedAt: d.now, Output: output, Error: err,
	})
}

// idempotencyKey is {run_id}:{node}, plus :g{N} from the first operator
// retry on.
func (d *decider) idempotencyKey(n *Node) string { return NodeKey(d.runRow.ID, n) }

// NodeKey is the idempotency key of the node's current generation in the
// run: {run_id}:{node}, plus :g{N} after the N-th operator retry (and :r{N}
// after the N-th retry of a scatter child on its own). Commands that
// create something for a node (an approval, a case, a child run) carry it,
// and the shell derives that thing's id from it.
func NodeKey(runID string, n *Node) string {
	key := runID + ":" + n.ID
	if n.Generation > 0 {
		key = fmt.Sprintf("%s:g%d", key, n.Generation)
	}
	if n.Retry > 0 {
		key = fmt.Sprintf("%s:r%d", key, n.Retry)
	}
	return key
}

// timerID names a node's timer so that a timer of an earlier attempt or
// generation is recognisably stale.
func timerID(n *Node, purpose string) string {
	return fmt.Sprintf("%s:%s:%d.%d", n.ID, purpose, n.Generation, n.Attempt)
}

const runTimeoutTimer = "run:timeout"
