package views

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// InspectorData is everything the run inspector shows; the handler loads
// it, the components only render it.
type InspectorData struct {
	Run   store.Run
	Graph RunGraph
	// ChildRuns of subworkflow steps by ref, for the graph's links.
	StepRuns map[string]string
	// Steps are the manifest's steps in topological order with their
	// nodes (nil before a step has one).
	Steps    []InspectorStep
	Selected *NodeDetail
	History  []engine.Transition
	// HistoryFirst says the page is not the first, HistoryPrev is the
	// seq the previous page ends before, HistoryNext the seq the next
	// starts after (-1: none), HistoryLast says the page is not the last
	// (?history=end), HistoryFailure the cursor of the page that shows the
	// run's first transition into failed (-1: none).
	HistoryFirst, HistoryLast                bool
	HistoryPrev, HistoryNext, HistoryFailure int64
	// HistoryStep shows one step's transitions alone ("": all),
	// HistoryKind those of one kind (store.HistoryKinds; "": any);
	// HistoryNewest puts the newest first.
	HistoryStep, HistoryKind string
	HistoryNewest            bool
	Signals                  []store.SignalRecord
	ChildRuns                []store.Run
	ChildCounts              map[string]int64
	CanOperate               bool
	// Notice confirms a finished action; Error says why one failed.
	Notice, Error string
	Form          ActionForm
	// Now is when the page was made, for the duration of a run going on.
	Now time.Time
	// Here is the page's selection (node, children filter and page,
	// history page, layout) as a query, which actions return to.
	Here url.Values
	// Flow says what a run flow control holds back waits for.
	Flow *store.FlowWait
}

// InspectorStep is one manifest step and its node.
type InspectorStep struct {
	Ref, Type string
	Node      *engine.Node
	// Worker is set while the node's task waits for a worker to claim it.
	Worker *store.WorkerWait
	// Slot is set while the node's attempt waits for a slot of its step's
	// concurrency pool.
	Slot *store.PoolWait
}

// ActionForm is what an operator typed, shown again after an error.
type ActionForm struct {
	SignalName, SignalRequestID, SignalPayload, CANInput string
	// ApprovalComment is the comment typed on a decision of the step's
	// approval.
	ApprovalComment string
}

// NodeDetail is the selected node, a step or a scatter child: its state,
// settings or item, attempts, transitions, what it waits on and, for a
// scatter, one page of its children.
type NodeDetail struct {
	Ref, Type string
	Node      *engine.Node
	// Scatter is the scatter a child belongs to ("" for a step).
	Scatter string
	// Step is the manifest step (a child's: its scatter), InEdges its
	// incoming edges (for the join's description).
	Step     *definition.Step
	InEdges  int
	Settings map[string]any
	Attempts []store.AttemptRecord
	// History is the node's own transitions, oldest first (a child's).
	History []engine.Transition
	// Worker is set while the node's task waits for a worker to claim it;
	// Slot while its attempt waits for a slot of its concurrency pool.
	Worker *store.WorkerWait
	Slot   *store.PoolWait
	// SlotHolders are (some of) the attempts that hold the slots of the
	// pool Slot waits for.
	SlotHolders []store.PoolHolder
	Approval    *store.Approval
	// MyDecision is the viewer's own decision on Approval, when they made
	// one; CanDecide says they may decide it here (see the inbox's
	// rules: it is pending, addressed to them, and they have not).
	MyDecision *store.ApprovalDecision
	CanDecide  bool
	Case       *store.Case
	// ChildRun is the run a subworkflow node (or child_workflow scatter
	// child) started, when known.
	ChildRun    string
	Children    []*engine.Node
	ChildCounts map[string]int64
	// ChildState and ChildKey filter the children (by state, by key
	// text); ChildAfter is the index the page starts after (-1: the
	// first), ChildNext the next page's after (-1: no more).
	ChildState, ChildKey  string
	ChildAfter, ChildNext int
}

// IsScatter reports whether the node fans out.
func (d *NodeDetail) IsScatter() bool { return d.Node != nil && d.Node.Scatter != nil }

// IsChild reports whether the node is a scatter child.
func (d *NodeDetail) IsChild() bool { return d.Scatter != "" }

func nodeState(n *engine.Node) string {
	if n == nil {
		return "pending"
	}
	return string(n.State)
}

// heldState is a node's state as the inspector shows it: "held" while
// its attempt waits for a slot of its concurrency pool (the node is
// running, its work has not started), otherwise its state.
func heldState(n *engine.Node, slot *store.PoolWait) string {
	if slot != nil && n != nil && n.State == engine.NodeRunning {
		return "held"
	}
	return nodeState(n)
}

func runURL(slug string, id fmt.Stringer) string { return tenantURL(slug, "/runs/"+id.String()) }

// nodeURL selects a step in the inspector.
func nodeURL(slug string, runID fmt.Stringer, ref string) string {
	return runURL(slug, runID) + "?node=" + url.QueryEscape(ref) + "#node"
}

// failedChildrenURL selects a scatter with its children filtered to
// those that failed.
func failedChildrenURL(slug string, runID fmt.Stringer, ref string) string {
	return runURL(slug, runID) + "?node=" + url.QueryEscape(ref) + "&state=failed#node"
}

func orText(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// childPageURL is the scatter's children with a filter and a page.
func childPageURL(slug string, r store.Run, d *NodeDetail, state, key string, after int) string {
	q := url.Values{"node": {d.Ref}}
	if state != "" {
		q.Set("state", state)
	}
	if key != "" {
		q.Set("q", key)
	}
	if after >= 0 {
		q.Set("after", strconv.Itoa(after))
	}
	return runURL(slug, r.ID) + "?" + q.Encode() + "#children"
}

// historyURL is the page's history at another page: cursor is history
// (the page starts after seq) or history_before (it ends before seq),
// "" the first page; seq "end" with history is the last page.
func historyURL(slug string, d InspectorData, cursor, seq string) string {
	q := url.Values{}
	for k, v := range d.Here {
		q[k] = v
	}
	q.Del("history")
	q.Del("history_before")
	if cursor != "" {
		q.Set(cursor, seq)
	}
	if enc := q.Encode(); enc != "" {
		return runURL(slug, d.Run.ID) + "?" + enc + "#history"
	}
	return runURL(slug, d.Run.ID) + "#history"
}

// layoutURL is the page in another graph layout.
func layoutURL(slug string, d InspectorData, layout string) string {
	q := url.Values{}
	for k, v := range d.Here {
		q[k] = v
	}
	q.Set("layout", layout)
	return runURL(slug, d.Run.ID) + "?" + q.Encode() + "#graph-h"
}

func hasJSON(v any) bool { return v != nil }

// sortedCounts lists counts by state in a stable order.
func sortedCounts(m map[string]int64) []StateCount {
	out := make([]StateCount, 0, len(m))
	for k, v := range m {
		out = append(out, StateCount{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].State < out[j].State })
	return out
}

// StateCount is how many things are in one state.
type StateCount struct {
	State string
	N     int64
}

func totalCount(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func fmtCount(n int64) string { return strconv.FormatInt(n, 10) }

// runStamp formats an instant to the millisecond; zero is "–".
func runStamp(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}

// attemptTook is how long an attempt ran, or "running".
func attemptTook(start, end time.Time) string {
	switch {
	case start.IsZero():
		return "–"
	case end.IsZero():
		return "running"
	}
	return end.Sub(start).Round(time.Millisecond).String()
}

// waitsFor says what a waiting node waits for.
func waitsFor(w *engine.Waiting) string {
	if w == nil {
		return ""
	}
	s := string(w.Type)
	switch {
	case w.Name != "":
		s += " " + w.Name
	case w.ChildKey != "":
		s += " " + w.ChildKey
	}
	if !w.Until.IsZero() {
		s += " until " + runStamp(w.Until)
	}
	if w.Type == engine.WaitEventSet && len(w.Events) > 0 {
		got := slices.Sorted(maps.Keys(w.Received))
		s += fmt.Sprintf(" %s (%d of %d received", strings.Join(w.Events, ", "), len(got), len(w.Events))
		if len(got) > 0 {
			s += ": " + strings.Join(got, ", ")
		}
		s += ")"
	}
	if w.Approvals > 0 {
		s += fmt.Sprintf(" (%d approvals so far)", w.Approvals)
	}
	if w.Iteration > 0 {
		s += fmt.Sprintf(" (iteration %d)", w.Iteration)
	}
	return s
}

// slotText says what an attempt its concurrency pool holds back waits for.
func slotText(w *store.PoolWait) string {
	return fmt.Sprintf("a slot of concurrency pool %q (%d at once across the tenant)", w.Key, w.Limit)
}

// flowText says what a held run waits for.
func flowText(w *store.FlowWait) string {
	var s string
	switch w.Stage {
	case store.StageDebounce:
		s = "its debounce key to be quiet"
	case store.StageThrottle:
		s = "its throttle's turn"
	default:
		s = "a concurrency slot"
	}
	for i, r := range w.Rules {
		sep := ": "
		if i > 0 {
			sep = "; "
		}
		s += sep + r.Rule
		if r.Key != "" {
			s += fmt.Sprintf(" key %q", r.Key)
		}
		if r.Limit > 0 {
			s += fmt.Sprintf(" (limit %d", r.Limit)
			if r.Ahead != nil {
				s += fmt.Sprintf(", %d ahead", *r.Ahead)
			}
			s += ")"
		}
	}
	if w.Until != nil {
		s += ", until " + runStamp(*w.Until)
	}
	return s + ", since " + runStamp(w.Since)
}

// workerText says what a task waiting for a worker needs, and until when.
func workerText(w *store.WorkerWait) string {
	s := fmt.Sprintf("a worker: handler %s on queue %s, since %s", w.Handler, w.Queue, runStamp(w.Since))
	if w.StartBy != nil {
		s += ", fails as no_worker at " + runStamp(*w.StartBy)
	}
	return s
}

func errText(e *engine.Error) string {
	if e == nil {
		return ""
	}
	return e.Code + ": " + e.Message
}

func shortID(id fmt.Stringer) string { return id.String()[:8] }

// historyFormKey reports whether the history's filter form sets k itself
// (or, a cursor, drops it: a new filter starts at the first page).
func historyFormKey(k string) bool {
	switch k {
	case "history", "history_before", "history_step", "history_kind", "history_order":
		return true
	}
	return false
}

// historyKinds are the kinds the history can be filtered by.
func historyKinds() []store.HistoryKind { return store.HistoryKinds }

// SlotHolderRows bounds the attempts a held step's panel lists as
// holding its pool's slots.
const SlotHolderRows = 10

// slotHoldersMore says the holders listed may not be all of them.
func slotHoldersMore(n *NodeDetail) bool { return len(n.SlotHolders) >= SlotHolderRows }

// openResponse says a's response opens with the panel: a is the last of
// the node's attempts that failed with a response, so a failed step's
// error body reads without a click.
func openResponse(n *NodeDetail, a store.AttemptRecord) bool {
	for i := len(n.Attempts) - 1; i >= 0; i-- {
		b := n.Attempts[i]
		if b.Error != nil && hasJSON(b.Output) {
			return b.Generation == a.Generation && b.Attempt.Attempt == a.Attempt.Attempt
		}
	}
	return false
}

// attemptResponseID names an attempt's response, so a live refresh keeps
// each one open or closed as the person left it.
func attemptResponseID(a store.AttemptRecord) string {
	return "attempt-response-" + strconv.Itoa(a.Generation) + "-" + strconv.Itoa(a.Attempt.Attempt)
}

// attemptInput is what the node's attempt was started with, the current
// one's or else the latest that kept one, and that attempt's number; ok
// is false when no attempt kept its input.
func attemptInput(n *NodeDetail) (in any, attempt int, ok bool) {
	for i := len(n.Attempts) - 1; i >= 0; i-- {
		a := n.Attempts[i]
		if a.Input == nil {
			continue
		}
		if !ok || (n.Node != nil && a.Generation == n.Node.Generation && a.Attempt.Attempt == n.Node.Attempt) {
			in, attempt, ok = a.Input, a.Attempt.Attempt, true
		}
	}
	return in, attempt, ok
}
