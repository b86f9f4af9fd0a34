package wftest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
)

const replayDef = `
key: claim
steps:
  - {ref: fetch, type: http, with: {url: "https://x.example"}, retry: {max_attempts: 3, initial_interval: 1s}}
  - {ref: big, type: condition, with: {expr: 'steps.fetch.output.n > 10'}}
  - {ref: ok, type: approval, with: {approvers: ['role:owner'], timeout: 72h}}
  - {ref: go, type: signal, with: {name: go}}
  - {ref: small, type: transform, with: {expr: '"small"'}}
edges:
  - {from: fetch, to: big}
  - {from: big, to: ok, on: "true"}
  - {from: big, to: small, on: "false"}
  - {from: ok, to: go, on: approved}
`

// A run replayed through its own definition decides the same; through a
// version whose condition changed it diverges at the first node that
// goes another way.
func TestReplayFindsTheFirstDivergence(t *testing.T) {
	t.Parallel()
	r := runner(t)
	m, err := Compile([]byte(replayDef))
	if err != nil {
		t.Fatal(err)
	}
	c := Case{
		Mocks: map[string]MockList{"fetch": {{Error: &MockError{Code: "e", Retryable: true}, After: "2s"}, {Output: map[string]any{"n": 20}, After: "5s"}}},
		Deliver: []Delivery{
			{At: "3h", Approval: &ApprovalInput{Node: "ok", Approved: true, By: "ada"}},
			{At: "5h", Signal: &SignalDelivery{Name: "go", Payload: map[string]any{"why": "ready"}}},
		},
	}
	o, err := r.Run(context.Background(), m, c, DefaultStart)
	if err != nil || o.Status != "succeeded" {
		t.Fatalf("recording: %v %+v", err, o)
	}
	rec := recorded(o)
	div, _, err := r.Replay(context.Background(), m, rec)
	if err != nil || div != nil {
		t.Fatalf("unchanged definition: %v, %v", div, err)
	}
	changed, err := Compile([]byte(strings.Replace(replayDef, "n > 10", "n > 100", 1)))
	if err != nil {
		t.Fatal(err)
	}
	div, _, err = r.Replay(context.Background(), changed, rec)
	if err != nil || div == nil {
		t.Fatalf("changed condition: no divergence (%v)", err)
	}
	if div.Node != "big" || div.Seq != 9 || div.Recorded != "running → succeeded (true)" || div.Replayed != "running → succeeded (false)" {
		t.Errorf("diverges %s", div)
	}
}

// recorded is the run as the API would return it.
func recorded(o *Outcome) *Recorded {
	st := o.State()
	rec := &Recorded{ID: RunID, Definition: "claim", Version: 1, Status: string(st.Run.Status), Input: st.Run.Input, History: o.History()}
	if !st.Run.FinishedAt.IsZero() {
		rec.FinishedAt = &st.Run.FinishedAt
	}
	for _, step := range o.manifest.Steps {
		n := st.Nodes[step.Ref]
		rn := RecordedNode{Node: n.ID, Ref: n.Ref, Type: string(step.Type), State: string(n.State), Output: n.Output, Error: n.Error}
		if !n.FinishedAt.IsZero() {
			rn.FinishedAt = &n.FinishedAt
		}
		rn.Attempts = attemptsOf(o.AttemptRecords(), n.ID)
		rec.Nodes = append(rec.Nodes, rn)
	}
	return rec
}

func attemptsOf(all []engine.Attempt, node string) []RecordedAttempt {
	last := map[int]engine.Attempt{}
	var order []int
	for _, a := range all {
		if a.Node != node {
			continue
		}
		if _, ok := last[a.Attempt]; !ok {
			order = append(order, a.Attempt)
		}
		last[a.Attempt] = a
	}
	var out []RecordedAttempt
	for _, k := range order {
		a := last[k]
		out = append(out, RecordedAttempt{Generation: a.Generation, Attempt: a.Attempt, StartedAt: ptr(a.StartedAt), FinishedAt: ptr(a.FinishedAt), Error: a.Error})
	}
	return out
}

func ptr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
