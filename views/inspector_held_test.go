package views

import (
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// A running node whose attempt waits for a pool slot shows as held, not
// running; without the wait, or in another state, its own state shows.
func TestHeldStateNamesAStepWaitingForASlot(t *testing.T) {
	slot := &store.PoolWait{Key: "db", Limit: 2}
	running := &engine.Node{State: engine.NodeRunning}
	for _, c := range []struct {
		n    *engine.Node
		slot *store.PoolWait
		want string
	}{
		{running, slot, "held"},
		{running, nil, "running"},
		{&engine.Node{State: engine.NodeSucceeded}, slot, "succeeded"},
		{nil, slot, "pending"},
	} {
		if got := heldState(c.n, c.slot); got != c.want {
			t.Errorf("heldState(%v, %v) = %q, want %q", c.n, c.slot, got, c.want)
		}
	}
}

// An event_set's wait says which of its events have come.
func TestWaitsForSaysWhatAnEventSetReceived(t *testing.T) {
	w := &engine.Waiting{Type: engine.WaitEventSet, Events: []string{"paid", "packed", "shipped"}, Received: map[string]any{"paid": 1, "packed": 2}}
	if got, want := waitsFor(w), "event_set paid, packed, shipped (2 of 3 received: packed, paid)"; got != want {
		t.Errorf("waitsFor = %q, want %q", got, want)
	}
}

// A case field without a title is labelled by its name in words.
func TestCaseFieldLabelsReadAsWords(t *testing.T) {
	for name, want := range map[string]string{
		"refund_amount": "Refund amount", "refundAmount": "Refund amount", "orderID": "Order ID", "note": "Note", "x": "X", "customer-email": "Customer email",
	} {
		if got := (CaseField{Name: name}).label(); got != want {
			t.Errorf("label of %q = %q, want %q", name, got, want)
		}
	}
	if got := (CaseField{Name: "a_b", Title: "Given"}).label(); got != "Given" {
		t.Errorf("a titled field is labelled %q", got)
	}
}

// Of a node's attempts, the last that failed with a response opens its
// response with the panel; the others, and one that failed without a
// response, stay closed.
func TestTheLastFailedAttemptsResponseOpens(t *testing.T) {
	fail := &engine.Error{Code: "http_status", Message: "503"}
	at := func(gen, n int, err *engine.Error, out any) store.AttemptRecord {
		return store.AttemptRecord{Attempt: engine.Attempt{Node: "fetch", Generation: gen, Attempt: n, Error: err, Output: out}}
	}
	body := map[string]any{"status": 503}
	n := &NodeDetail{Attempts: []store.AttemptRecord{at(0, 1, fail, body), at(0, 2, fail, body), at(1, 1, fail, nil), at(1, 2, nil, body)}}
	var open []string
	for _, a := range n.Attempts {
		if openResponse(n, a) {
			open = append(open, attemptResponseID(a))
		}
	}
	if len(open) != 1 || open[0] != "attempt-response-0-2" {
		t.Errorf("open responses %v, want attempt-response-0-2 alone", open)
	}
	if openResponse(&NodeDetail{Attempts: n.Attempts[3:]}, n.Attempts[3]) {
		t.Error("a succeeded attempt's output opens as a failed response")
	}
}
