package wftest

import (
	"context"
	"fmt"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
)

// Recorded is a finished run as the API returns it: its input and status,
// its step nodes and scatter children with their attempts, and its
// history.
type Recorded struct {
	ID          string              `json:"id"`
	Definition  string              `json:"definition"`
	Version     int                 `json:"version"`
	Status      string              `json:"status"`
	Input       any                 `json:"input"`
	CancelledBy string              `json:"cancelled_by"`
	FinishedAt  *time.Time          `json:"finished_at"`
	Nodes       []RecordedNode      `json:"nodes"`
	History     []engine.Transition `json:"-"`
}

// RecordedNode is one step node of a recorded run.
type RecordedNode struct {
	Node       string            `json:"node"`
	Ref        string            `json:"ref"`
	Type       string            `json:"type"`
	State      string            `json:"state"`
	Output     any               `json:"output"`
	Error      *engine.Error     `json:"error"`
	FinishedAt *time.Time        `json:"finished_at"`
	Attempts   []RecordedAttempt `json:"attempts"`
}

// RecordedAttempt is one attempt of a worker step.
type RecordedAttempt struct {
	Generation int           `json:"generation"`
	Attempt    int           `json:"attempt"`
	StartedAt  *time.Time    `json:"started_at"`
	FinishedAt *time.Time    `json:"finished_at"`
	Error      *engine.Error `json:"error"`
}

// Divergence is the first point where a replay decided differently from
// the recorded run: the transition (Seq, At) of Node that was recorded,
// and what the replay did instead.
type Divergence struct {
	Seq      int64
	At       time.Time
	Node     string
	Recorded string
	Replayed string
}

func (d *Divergence) String() string {
	node := d.Node
	if node == "" {
		node = "the run"
	}
	return fmt.Sprintf("%s diverges at transition %d (%s): recorded %s, replayed %s",
		node, d.Seq, d.At.Format(time.RFC3339Nano), d.Recorded, d.Replayed)
}

// Replay runs m with what the recorded run received (its workers'
// results, the signals, events, approvals and case updates its nodes
// consumed, at the times they were consumed) and compares the two
// histories node by node. It returns nil when m decides as the recorded
// run did.
func (r *Runner) Replay(ctx context.Context, m *definition.Manifest, rec *Recorded) (*Divergence, *Outcome, error) {
	if len(rec.History) == 0 {
		return nil, nil, fmt.Errorf("run %s has no history", rec.ID)
	}
	start := rec.History[0].At
	c := replayCase(m, rec)
	o, err := r.Run(ctx, m, c, start)
	if err != nil {
		return nil, nil, err
	}
	return diverges(rec.History, o.History()), o, nil
}

// replayCase turns what the recorded run received into mocks and
// deliveries.
func replayCase(m *definition.Manifest, rec *Recorded) Case {
	c := Case{Name: "replay " + rec.ID, Input: rec.Input, Mocks: map[string]MockList{}}
	for _, n := range rec.Nodes {
		step, ok := m.Step(n.Ref)
		if !ok {
			continue
		}
		if n.Node != n.Ref {
			if l := replayChildMocks(step, n); len(l) > 0 {
				c.Mocks[n.Node] = l
			}
			continue
		}
		if l := replayMocks(step, n); len(l) > 0 {
			c.Mocks[n.Ref] = l
		}
		c.Deliver = append(c.Deliver, replayDeliveries(step, n)...)
	}
	if rec.Status == string(engine.RunCancelled) && rec.FinishedAt != nil {
		c.Deliver = append(c.Deliver, Delivery{At: rec.FinishedAt.Format(time.RFC3339Nano), Cancel: "replayed cancel"})
	}
	return c
}

// replayMocks are a worker step's attempts, each taking as long as it
// took, the last one ending with the node's output or error.
func replayMocks(step *definition.Step, n RecordedNode) MockList {
	if step.Type == definition.TypeSubworkflow {
		return MockList{endMock(n)}
	}
	if !worker(step.Type) {
		return nil
	}
	return attemptMocks(n)
}

// attemptMocks replays a worker node's attempts.
func attemptMocks(n RecordedNode) MockList {
	var l MockList
	for i, a := range n.Attempts {
		m := Mock{}
		if a.Error != nil || i < len(n.Attempts)-1 {
			m.Error = mockError(a.Error)
		} else {
			m = endMock(n)
		}
		if a.StartedAt != nil && a.FinishedAt != nil {
			m.After = a.FinishedAt.Sub(*a.StartedAt).String()
		}
		l = append(l, m)
	}
	if len(l) == 0 && n.State == string(engine.NodeSucceeded) {
		l = MockList{endMock(n)}
	}
	return l
}

// replayChildMocks answer a scatter child: its attempts for an inline
// task or http template, its end for a child run.
func replayChildMocks(scatter *definition.Step, n RecordedNode) MockList {
	if scatter.Type != definition.TypeScatter {
		return nil
	}
	if mode, _ := scatter.With["mode"].(string); mode == "child_workflow" {
		return MockList{endMock(n)}
	}
	return attemptMocks(n)
}

func endMock(n RecordedNode) Mock {
	if n.Error != nil {
		return Mock{Error: mockError(n.Error)}
	}
	return Mock{Output: n.Output}
}

func mockError(e *engine.Error) *MockError {
	if e == nil {
		return &MockError{Code: "task_failed", Message: "a failed attempt, replayed", Retryable: true}
	}
	return &MockError{Code: e.Code, Message: e.Message, Retryable: e.Retryable}
}

// replayDeliveries are what a parking node consumed, delivered when it
// consumed it.
func replayDeliveries(step *definition.Step, n RecordedNode) []Delivery {
	if n.State != string(engine.NodeSucceeded) || n.FinishedAt == nil {
		return nil
	}
	at := n.FinishedAt.Format(time.RFC3339Nano)
	out, _ := n.Output.(map[string]any)
	name, _ := step.With["name"].(string)
	switch step.Type {
	case definition.TypeSignal:
		return []Delivery{{At: at, Signal: &SignalDelivery{Name: name, Payload: n.Output}}}
	case definition.TypeEvent:
		return []Delivery{{At: at, Event: &EventDelivery{Name: name, Data: n.Output}}}
	case definition.TypeDigest:
		return digestDeliveries(n, name, out)
	case definition.TypeApproval:
		return approvalDeliveries(step, n, at, out)
	case definition.TypeHumanLoop:
		status, _ := step.With["awaiting_status"].(string)
		return []Delivery{{At: at, Case: &CaseInput{Node: n.Node, Status: orText(status, "resolved"), Data: n.Output}}}
	}
	return nil
}

// digestDeliveries sends a digest's items just before it ended.
func digestDeliveries(n RecordedNode, name string, out map[string]any) []Delivery {
	items, _ := out["items"].([]any)
	at := n.FinishedAt.Add(-time.Millisecond).Format(time.RFC3339Nano)
	var ds []Delivery
	for _, it := range items {
		ds = append(ds, Delivery{At: at, Event: &EventDelivery{Name: name, Data: it}})
	}
	return ds
}

// approvalDeliveries decides an approval as it was decided: a rejection,
// or as many approvals as it needed; a timeout needs none.
func approvalDeliveries(step *definition.Step, n RecordedNode, at string, out map[string]any) []Delivery {
	if timedOut, _ := out["timed_out"].(bool); timedOut {
		return nil
	}
	approved, _ := out["approved"].(bool)
	by, _ := out["by"].(string)
	comment, _ := out["comment"].(string)
	d := Delivery{At: at, Approval: &ApprovalInput{Node: n.Node, Approved: approved, By: by, Comment: comment}}
	count := 1
	if need, ok := step.With["min_approvals"].(int64); ok && approved && need > 1 {
		count = int(need)
	}
	ds := make([]Delivery, count)
	for i := range ds {
		ds[i] = d
	}
	return ds
}

// diverges compares the histories node by node: the k-th transition of
// each node (and of the run) must match, an end's outcome included, whatever the interleaving
// between nodes. It returns the first recorded transition without its
// match, or the first replayed one the run never made.
func diverges(rec, rep []engine.Transition) *Divergence {
	byNode := map[string][]engine.Transition{}
	for _, t := range rep {
		byNode[t.Node] = append(byNode[t.Node], t)
	}
	seen := map[string]int{}
	for _, t := range rec {
		k := seen[t.Node]
		seen[t.Node]++
		got := byNode[t.Node]
		if k >= len(got) {
			return &Divergence{Seq: t.Seq, At: t.At, Node: t.Node, Recorded: edge(t), Replayed: "nothing"}
		}
		if edge(got[k]) != edge(t) {
			return &Divergence{Seq: t.Seq, At: t.At, Node: t.Node, Recorded: edge(t), Replayed: edge(got[k])}
		}
	}
	for _, t := range rep {
		if seen[t.Node]--; seen[t.Node] < 0 {
			return &Divergence{Seq: t.Seq, At: t.At, Node: t.Node, Recorded: "nothing", Replayed: edge(t)}
		}
	}
	return nil
}

// edge is a transition as compared: its states, and for an end its
// detail (the outcome: true, approved, success…).
func edge(t engine.Transition) string {
	s := t.From + " → " + t.To
	if (engine.NodeState(t.To).Terminal() || engine.RunStatus(t.To).Terminal()) && t.Detail != "" {
		s += " (" + t.Detail + ")"
	}
	return s
}
