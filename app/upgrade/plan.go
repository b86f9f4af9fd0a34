// Package upgrade plans moving a run to another version of its
// definition: a pure function of the run's state and the two manifests,
//
//	Plan(state, from, to, options) → a plan, or the reasons it is refused
//
// that reads no clock and does no I/O. Nodes are matched by ref: a node
// whose step is in both versions keeps its state and outputs; a step new
// in the target version gets a pending node (with the edges into it that
// can already be resolved); a node whose step is gone is dropped, or,
// when it is running or waiting, refused unless Options.CancelRemoved
// says to withdraw its work. A changed step takes effect on a pending
// node; a running, waiting or finished node keeps its state and the
// outputs it produced under the old settings, which the plan says.
//
// The caller (app/runs) applies a plan in one transaction holding the
// run's lock, so that an upgrade lands between two ticks: never inside
// one.
package upgrade

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
)

// Options change what a plan may do.
type Options struct {
	// CancelRemoved allows removing steps whose nodes are running or
	// waiting: their work is withdrawn (an attempt, a timer, an approval
	// or case, a sync child run) and the nodes are dropped.
	CancelRemoved bool
	// Retry names a failed or cancelled node the run is to be retried
	// from on the target version: the nodes that retry resets (the node,
	// what is downstream of it in the target version and, in an ended
	// run, what the ending skipped or cancelled) count as pending.
	Retry string
}

// Outcomes of a node in a plan.
const (
	// Kept: same step in both versions.
	Kept = "kept"
	// Changed: the step's type or settings changed (see Effect).
	Changed = "changed"
	// Added: a step new in the target version.
	Added = "added"
	// Removed: a step gone in the target version, its node dropped.
	Removed = "removed"
	// Cancelled: a step gone in the target version whose running or
	// waiting node is cancelled (Options.CancelRemoved).
	Cancelled = "cancelled"
)

// Node is what the plan does with one step.
type Node struct {
	Ref     string           `json:"ref"`
	Outcome string           `json:"outcome"`
	State   engine.NodeState `json:"state,omitempty"` // the node's state now, empty when it has none yet
	// Effect says in words what happens: "takes the new settings",
	// "keeps its state and its old outputs", "would run once its
	// predecessors finish", ...
	Effect string `json:"effect,omitempty"`
	// WouldRun, for an added node (or a pending one whose incoming
	// edges changed), says whether it would run: "yes" (at once: the
	// steps before it have finished), "no" (its join can no longer be
	// satisfied: it is skipped), or "when_reached".
	WouldRun string `json:"would_run,omitempty"`
	// Changes lists the fields that differ, as paths under the step.
	Changes []string `json:"changes,omitempty"`
}

// Problem is one reason, at one path of the target version, that the
// plan is refused or that a step will not have what it reads.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Rerun is a node a retry would run again. Side-effecting steps (task,
// http, subworkflow) that already succeeded are flagged with their last
// attempt, so that an operator sees what would fire twice.
type Rerun struct {
	Ref          string           `json:"ref"`
	Type         string           `json:"type"`
	State        engine.NodeState `json:"state"`
	FiresAgain   bool             `json:"fires_again,omitempty"`
	LastAttempt  string           `json:"last_attempt,omitempty"`
	SideEffect   bool             `json:"side_effect,omitempty"`
	NewInVersion bool             `json:"new_in_version,omitempty"`
}

// Summary counts a plan's nodes by outcome.
type Summary struct {
	Kept      int `json:"kept"`
	Changed   int `json:"changed"`
	Added     int `json:"added"`
	Removed   int `json:"removed"`
	Cancelled int `json:"cancelled"`
	Missing   int `json:"missing_reads"`
}

// String is the summary as a history entry's detail carries it.
func (s Summary) String() string {
	return fmt.Sprintf("%d kept, %d changed, %d added, %d removed, %d cancelled", s.Kept, s.Changed, s.Added, s.Removed, s.Cancelled)
}

// Result is a plan: what would happen to each node, what the target's
// expressions read that the run will not have, the refusals (a plan with
// any cannot be applied), and, when applied, the rows to write.
type Result struct {
	Nodes []Node `json:"nodes"`
	// MissingReads are expressions of the target version that read
	// outputs the run will not have (a step that was skipped, failed or
	// cancelled, and is not run again).
	MissingReads []Problem `json:"missing_reads,omitempty"`
	// Refusals are why the upgrade cannot be done safely, path by path.
	Refusals []Problem `json:"refusals,omitempty"`
	// Reruns are, for a retry, the nodes that would run again.
	Reruns []Rerun `json:"reruns,omitempty"`
	// Reconsider are the pending nodes (new, or with incoming edges
	// changed) whose predecessors have finished already, so that their
	// join is decided at once: applying the plan delivers an
	// engine.Reconsider for them, and they start (or are skipped) in the
	// run's next tick, on the target version.
	Reconsider []string `json:"reconsider,omitempty"`
	Summary    Summary  `json:"summary"`

	// Write are the nodes to upsert; Delete the nodes to drop (with
	// their scatter children); Withdraw the commands that undo the work
	// of cancelled nodes.
	Write    []*engine.Node   `json:"-"`
	Delete   []string         `json:"-"`
	Withdraw []engine.Command `json:"-"`
}

// Refused reports whether the plan cannot be applied.
func (r *Result) Refused() bool { return len(r.Refusals) > 0 }

// Noop reports whether applying the plan would change no node.
func (r *Result) Noop() bool { return len(r.Write) == 0 && len(r.Delete) == 0 }

// Plan plans moving the run of st from manifest from to manifest to.
// Nodes of st are the run's step nodes (scatter children are not
// needed). It never mutates st.
func Plan(st *engine.State, from, to *definition.Manifest, o Options) *Result {
	p := &planner{st: st, from: from, to: to, o: o, res: &Result{Nodes: []Node{}}}
	p.index()
	if o.Retry != "" {
		if _, ok := to.Step(o.Retry); !ok {
			p.refuse("steps."+o.Retry, "the node to retry from is gone in the target version")
		}
	}
	p.resetSet()
	for _, ref := range p.refs() {
		p.plan(ref)
	}
	p.inbound()
	p.reads()
	p.reruns()
	sort.SliceStable(p.res.Refusals, func(i, j int) bool { return p.res.Refusals[i].Path < p.res.Refusals[j].Path })
	p.res.Summary.Missing = len(p.res.MissingReads)
	return p.res
}

type planner struct {
	st       *engine.State
	from, to *definition.Manifest
	o        Options
	res      *Result

	in    map[string][]definition.Edge // target's edges by target ref
	out   map[string][]definition.Edge // target's edges by source ref
	reset map[string]bool              // nodes a retry resets
	after map[string]*engine.Node      // node of each target ref after the upgrade
	added map[string]bool
}

func (p *planner) index() {
	p.in, p.out = map[string][]definition.Edge{}, map[string][]definition.Edge{}
	for _, e := range p.to.Edges {
		p.in[e.To] = append(p.in[e.To], e)
		p.out[e.From] = append(p.out[e.From], e)
	}
	p.after, p.added, p.reset = map[string]*engine.Node{}, map[string]bool{}, map[string]bool{}
}

// refs are the refs of both versions, in the target's order and then
// the removed ones by ref.
func (p *planner) refs() []string {
	refs := slices.Clone(p.to.Order)
	var gone []string
	for _, s := range p.from.Steps {
		if _, ok := p.to.Step(s.Ref); !ok {
			gone = append(gone, s.Ref)
		}
	}
	sort.Strings(gone)
	return append(refs, gone...)
}

func (p *planner) node(ref string) *engine.Node {
	if p.st == nil || p.st.Nodes == nil {
		return nil
	}
	return p.st.Nodes[ref]
}

// started reports whether the run has nodes: a pending run has none, and
// starts with the target's.
func (p *planner) started() bool { return p.st != nil && len(p.st.Nodes) > 0 }

// resetSet computes what a retry resets, in the target's graph, as the
// engine will once the run is on it.
func (p *planner) resetSet() {
	if p.o.Retry == "" || !p.started() {
		return
	}
	mark := func(ref string) {
		stack := []string{ref}
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if p.reset[cur] {
				continue
			}
			p.reset[cur] = true
			for _, e := range p.out[cur] {
				stack = append(stack, e.To)
			}
		}
	}
	mark(p.o.Retry)
	if !p.st.Run.Status.Terminal() {
		return
	}
	for _, ref := range p.to.Order {
		n := p.node(ref)
		s, _ := p.to.Step(ref)
		if n == nil || n.State == engine.NodeCancelled || n.State == engine.NodeSkipped ||
			(n.State == engine.NodeFailed && s.OnError != definition.OnErrorContinue) {
			mark(ref)
		}
	}
}

func (p *planner) refuse(path, format string, args ...any) {
	p.res.Refusals = append(p.res.Refusals, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (p *planner) plan(ref string) {
	old, inOld := p.from.Step(ref)
	step, inNew := p.to.Step(ref)
	n := p.node(ref)
	pn := Node{Ref: ref}
	if n != nil {
		pn.State = n.State
	}
	path := "steps." + ref
	switch {
	case !inOld:
		pn.Outcome, pn.WouldRun = Added, "when_reached"
		p.res.Summary.Added++
		if p.started() {
			nn := &engine.Node{ID: ref, Ref: ref, State: engine.NodePending}
			p.after[ref], p.added[ref] = nn, true
			p.res.Write = append(p.res.Write, nn)
		}
		pn.Effect = "a new pending node"
	case !inNew:
		p.remove(ref, n, &pn)
	default:
		p.after[ref] = n
		changes := stepChanges(old, step)
		if len(changes) == 0 {
			pn.Outcome = Kept
			p.res.Summary.Kept++
			break
		}
		pn.Outcome, pn.Changes = Changed, changes
		p.res.Summary.Changed++
		pending := n == nil || n.State == engine.NodePending || p.reset[ref]
		switch {
		case pending:
			pn.Effect = "takes the new settings"
		case old.Type != step.Type:
			p.refuse(path+".type", "the type changed from %s to %s while the node is %s: only a pending node can change type", old.Type, step.Type, n.State)
		case old.Type == definition.TypeScatter && n.Scatter != nil && !n.Scatter.Done() && !reflect.DeepEqual(old.With["do"], step.With["do"]):
			p.refuse(path+".with.do", "the scatter's template changed while %d of its %d children are not finished", n.Scatter.Total-n.Scatter.Succeeded-n.Scatter.Failed, n.Scatter.Total)
		case n.State.Terminal():
			pn.Effect = "keeps its state and its old outputs"
		default:
			pn.Effect = "keeps its state and its old outputs; later attempts take the new settings"
		}
	}
	p.res.Nodes = append(p.res.Nodes, pn)
}

func (p *planner) remove(ref string, n *engine.Node, pn *Node) {
	path := "steps." + ref
	pn.Outcome = Removed
	if n == nil {
		p.res.Summary.Removed++
		return
	}
	live := n.State == engine.NodeRunning || n.State == engine.NodeWaiting || n.State == engine.NodeReady
	switch {
	case !live:
		pn.Effect = "dropped with its outputs"
		p.res.Summary.Removed++
	case !p.o.CancelRemoved:
		p.refuse(path, "the step is gone in the target version while its node is %s: set cancel_removed to cancel it", n.State)
		p.res.Summary.Removed++
	case n.Scatter != nil:
		p.refuse(path, "a running scatter cannot be removed: cancel the node first")
		p.res.Summary.Removed++
	default:
		pn.Outcome, pn.Effect = Cancelled, "its work is withdrawn and the node dropped"
		p.res.Summary.Cancelled++
		p.res.Withdraw = append(p.res.Withdraw, withdraw(p.st.Run.ID, n)...)
	}
	p.res.Delete = append(p.res.Delete, ref)
}

// withdraw is what undoes a running or waiting node's work, as the engine
// withdraws a cancelled node's.
func withdraw(runID string, n *engine.Node) []engine.Command {
	var cmds []engine.Command
	if n.State == engine.NodeRunning && n.Waiting == nil {
		cmds = append(cmds, engine.CancelAttempt{Node: n.ID, Generation: n.Generation, Attempt: n.Attempt})
	}
	w := n.Waiting
	if w == nil {
		return cmds
	}
	if w.TimerID != "" {
		cmds = append(cmds, engine.CancelTimer{TimerID: w.TimerID})
	}
	switch w.Type {
	case engine.WaitApproval, engine.WaitInteraction:
		cmds = append(cmds, engine.CloseInteraction{Node: n.ID, Key: engine.NodeKey(runID, n)})
	case engine.WaitChild:
		if w.ChildKey != "" {
			cmds = append(cmds, engine.CancelChildRun{Node: n.ID, Key: w.ChildKey, RunID: w.ChildRunID, Reason: "step removed by an upgrade"})
		}
	}
	return cmds
}

// stepChanges lists the fields of a step that differ between versions.
func stepChanges(a, b *definition.Step) []string {
	var out []string
	if a.Type != b.Type {
		out = append(out, "type")
	}
	keys := map[string]bool{}
	for k := range a.With {
		keys[k] = true
	}
	for k := range b.With {
		keys[k] = true
	}
	for _, k := range slices.Sorted(mapKeys(keys)) {
		if !reflect.DeepEqual(a.With[k], b.With[k]) {
			out = append(out, "with."+k)
		}
	}
	x, y := *a, *b
	x.With, y.With, x.Type, y.Type, x.Name, y.Name = nil, nil, "", "", "", ""
	if !reflect.DeepEqual(x, y) {
		out = append(out, "settings")
	}
	return out
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// inbound recomputes the incoming edge marks of every node that will be
// pending on the target version: marks of edges kept are kept, marks of
// edges gone are dropped, and a new edge from a node that already ended
// is resolved as that node resolved its edges. A pending node whose join
// that decides (it is ready or skipped at once) is listed in Reconsider:
// the engine only applies a join when an edge into it resolves, so the
// upgrade asks it to apply those once the run is on the target version.
func (p *planner) inbound() {
	if !p.started() {
		return
	}
	for _, ref := range p.to.Order {
		n := p.after[ref]
		if n == nil || (n.State != engine.NodePending && !p.reset[ref]) {
			continue
		}
		marks := map[string]engine.EdgeMark{}
		fired, dead := 0, 0
		for _, e := range p.in[ref] {
			id := engine.EdgeID(e)
			m, ok := n.Inbound[id]
			if !ok {
				src := p.after[e.From]
				if src == nil || !src.State.Terminal() || p.reset[e.From] {
					continue
				}
				if e.Choice != nil && ranToEnd(src) && src.Outcome == definition.OutcomeSuccess {
					p.refuse("steps."+ref, "a new branch from %s, which already chose its branch", e.From)
					continue
				}
				m = resolve(e, src)
			}
			marks[id] = m
			if m == engine.EdgeFired {
				fired++
			} else {
				dead++
			}
		}
		step, _ := p.to.Step(ref)
		need := step.JoinNeed(len(p.in[ref]))
		decided := ""
		switch {
		case p.reset[ref]:
			// the retry resets the node and applies its join
		case len(p.in[ref]) == 0:
			decided = "yes"
		case fired >= need:
			decided = "yes"
		case len(p.in[ref])-dead < need:
			decided = "no"
		}
		if decided != "" {
			p.decide(ref, decided)
		}
		if !reflect.DeepEqual(marks, orEmpty(n.Inbound)) {
			if !p.added[ref] {
				n = n.Clone()
				p.after[ref] = n
				p.res.Write = append(p.res.Write, n)
			}
			n.Inbound = marks
			if len(marks) == 0 {
				n.Inbound = nil
			}
		}
	}
}

// decide notes a pending node whose join the upgrade decides: yes, it
// starts at once (when its run_if allows), or no, it is skipped.
func (p *planner) decide(ref, decided string) {
	for i := range p.res.Nodes {
		pn := &p.res.Nodes[i]
		if pn.Ref != ref {
			continue
		}
		pn.WouldRun = decided
		effect := "starts at once: the steps before it have finished"
		if decided == "no" {
			effect = "skipped at once: the steps before it have finished without firing enough of its edges"
		}
		if pn.Effect != "" {
			effect = pn.Effect + "; " + effect
		}
		pn.Effect = effect
	}
	p.res.Reconsider = append(p.res.Reconsider, ref)
}

func orEmpty(m map[string]engine.EdgeMark) map[string]engine.EdgeMark {
	if m == nil {
		return map[string]engine.EdgeMark{}
	}
	return m
}

// ranToEnd mirrors the engine's: a node fires edges when it succeeded,
// failed, or an operator cancelled it.
func ranToEnd(n *engine.Node) bool {
	switch n.State {
	case engine.NodeSucceeded, engine.NodeFailed:
		return true
	case engine.NodeCancelled:
		return n.Outcome == definition.OutcomeError
	}
	return false
}

func resolve(e definition.Edge, src *engine.Node) engine.EdgeMark {
	ran := ranToEnd(src)
	on := e.On
	if on == "" {
		on = definition.OutcomeSuccess
	}
	fire := false
	switch {
	case e.On == definition.OutcomeDone:
		fire = ran
	case e.Choice != nil:
		fire = false
	default:
		fire = ran && on == src.Outcome
	}
	if fire {
		return engine.EdgeFired
	}
	return engine.EdgeDead
}

var stepsRef = regexp.MustCompile(`steps\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([^"']+)["']\s*\])`)

// reads lists the target's expressions, in steps that will still run,
// that read the output of a step the run will not have one from.
func (p *planner) reads() {
	if !p.started() {
		return
	}
	missing := func(ref string) (engine.NodeState, bool) {
		if p.reset[ref] || p.added[ref] {
			return "", false
		}
		n := p.after[ref]
		if n == nil || !n.State.Terminal() || n.State == engine.NodeSucceeded {
			return "", false
		}
		return n.State, true
	}
	check := func(path string, v any) {
		for _, s := range stringsIn(v) {
			for _, m := range stepsRef.FindAllStringSubmatch(s, -1) {
				ref := m[1] + m[2]
				if st, ok := missing(ref); ok {
					p.res.MissingReads = append(p.res.MissingReads, Problem{Path: path, Message: fmt.Sprintf("reads steps.%s, which is %s: the run has no output of it", ref, st)})
				}
			}
		}
	}
	for _, ref := range p.to.Order {
		n := p.after[ref]
		if n != nil && n.State != engine.NodePending && !p.reset[ref] {
			continue
		}
		s, _ := p.to.Step(ref)
		base := "steps." + ref
		for _, k := range slices.Sorted(withKeys(s.With)) {
			check(base+".with."+k, s.With[k])
		}
		check(base+".run_if", s.RunIf)
		check(base+".for_each", s.ForEach)
	}
	for _, e := range p.to.Edges {
		if e.Choice != nil && e.Choice.When != "" {
			if n := p.after[e.From]; n == nil || !n.State.Terminal() || p.reset[e.From] {
				check("edges."+engine.EdgeID(e), e.Choice.When)
			}
		}
	}
	check("output_expr", p.to.OutputExpr)
}

func withKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func stringsIn(v any) []string {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, "steps") {
			return []string{x}
		}
	case map[string]any:
		var out []string
		for _, k := range slices.Sorted(withKeys(x)) {
			out = append(out, stringsIn(x[k])...)
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, stringsIn(e)...)
		}
		return out
	}
	return nil
}

// sideEffects are the step types whose execution reaches outside the
// run: running them again fires them twice.
var sideEffects = map[definition.StepType]bool{definition.TypeTask: true, definition.TypeHTTP: true, definition.TypeSubworkflow: true}

// reruns lists, for a retry, the nodes that would run again.
func (p *planner) reruns() {
	if p.o.Retry == "" {
		return
	}
	for _, ref := range p.to.Order {
		if !p.reset[ref] {
			continue
		}
		s, _ := p.to.Step(ref)
		r := Rerun{Ref: ref, Type: string(s.Type), SideEffect: sideEffects[s.Type], NewInVersion: p.added[ref]}
		if n := p.after[ref]; n != nil {
			r.State = n.State
			if r.SideEffect && n.State == engine.NodeSucceeded {
				r.FiresAgain = true
				r.LastAttempt = fmt.Sprintf("%s:g%d:a%d", ref, n.Generation, n.Attempt)
			}
		}
		p.res.Reruns = append(p.res.Reruns, r)
	}
}
