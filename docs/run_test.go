package docs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testwait"
)

// apiRun is the part of a run the harness reads.
type apiRun struct {
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Output json.RawMessage `json:"output"`
	Error  json.RawMessage `json:"error"`
	Nodes  []struct {
		Node    string          `json:"node"`
		State   string          `json:"state"`
		Error   json.RawMessage `json:"error"`
		Waiting *struct {
			Type       string `json:"type"`
			Name       string `json:"name"`
			ApprovalID string `json:"approval_id"`
			CaseID     string `json:"case_id"`
		} `json:"waiting"`
	} `json:"nodes"`
}

func (r apiRun) terminal() bool {
	switch r.Status {
	case "succeeded", "failed", "cancelled", "timed_out", "terminated":
		return true
	}
	return false
}

func (r apiRun) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s %s output=%s error=%s", r.ID, r.Status, r.Output, r.Error)
	for _, n := range r.Nodes {
		fmt.Fprintf(&b, "\n  %s %s", n.Node, n.State)
		if len(n.Error) > 0 && string(n.Error) != "null" {
			fmt.Fprintf(&b, " %s", n.Error)
		}
	}
	return b.String()
}

// runDeadline bounds one example's run.
const runDeadline = 60 * time.Second

// runExample starts a run of the example's version with the marker's
// input, answers what it waits for, and checks how it ends.
func (h *harness) runExample(t *testing.T, key string, dec *deciders, e example, version int) {
	m := e.marker
	var started struct {
		ID string `json:"id"`
	}
	for name, value := range m.Secrets {
		if code := h.call(t, key, "PUT", "/secrets/"+name, "application/json", string(mustJSON(map[string]any{"value": value})), nil); code/100 != 2 {
			t.Errorf("%s: set secret %s: %d", e.where(), name, code)
			return
		}
	}
	body := map[string]any{"definition": e.key, "version": version, "input": h.withEcho(m.Input)}
	if code := h.postJSON(t, key, "/runs", body, &started); code/100 != 2 {
		t.Errorf("%s: start: %d", e.where(), code)
		return
	}
	d := &deliveries{sent: map[string]bool{}, deciders: dec}
	var run apiRun
	testwait.Until(context.Background(), runDeadline, func() bool {
		run = apiRun{}
		h.call(t, key, "GET", "/runs/"+started.ID, "", "", &run)
		if run.terminal() {
			return true
		}
		if run.Status == "waiting" {
			h.deliver(t, key, m, run, d)
		}
		return false
	})
	h.check(t, e, run)
}

func (h *harness) check(t *testing.T, e example, run apiRun) {
	m := e.marker
	if run.Status != m.Status {
		t.Errorf("%s: the run ended %q, the marker says %q\n%s", e.where(), run.Status, m.Status, run)
		return
	}
	if m.Output == nil {
		return
	}
	got, want := decodeExact(run.Output), decodeExact(mustJSON(m.Output))
	if !sameJSON(got, want) {
		t.Errorf("%s: output %s, the marker says %s", e.where(), run.Output, mustJSON(m.Output))
	}
}

// decodeExact decodes JSON keeping numbers as written.
func decodeExact(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	_ = dec.Decode(&v)
	return v
}

// sameJSON compares decoded JSON values, numbers by their exact value
// (29 and 29.0 are the same number; 2^53 and 2^53+1 are not).
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, okx := new(big.Rat).SetString(x.String())
		ry, oky := new(big.Rat).SetString(y.String())
		return okx && oky && rx.Cmp(ry) == 0
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// deliveries remembers what was sent to one run.
type deliveries struct {
	sent     map[string]bool
	deciders *deciders
}

func (d *deliveries) once(what string) bool {
	if d.sent[what] {
		return false
	}
	d.sent[what] = true
	return true
}

// deliver answers each waiting node: its signal, its events, a decision
// on its approval, an update of its case.
func (h *harness) deliver(t *testing.T, key string, m *runMarker, run apiRun, d *deliveries) {
	for _, n := range run.Nodes {
		w := n.Waiting
		if n.State != "waiting" || w == nil {
			continue
		}
		switch w.Type {
		case "signal":
			for i, s := range m.Signals {
				if s.Name == w.Name && d.once(fmt.Sprint("signal", i)) {
					body := map[string]any{"request_id": fmt.Sprintf("docs-%d", i), "name": s.Name, "payload": s.Payload}
					h.postJSON(t, key, "/runs/"+run.ID+"/signals", body, nil)
					break
				}
			}
		case "event", "digest", "event_set":
			for i, ev := range m.Events {
				if (ev.Name == w.Name || w.Type == "event_set") && d.once(fmt.Sprint("event", i)) {
					h.postJSON(t, key, "/events", map[string]any{"name": ev.Name, "data": ev.Data}, nil)
				}
			}
		case "approval":
			if m.Approve != nil && w.ApprovalID != "" && d.once("approval"+w.ApprovalID) {
				h.decide(t, key, d.deciders, w.ApprovalID, *m.Approve)
			}
		case "interaction":
			if m.Case != nil && w.CaseID != "" && d.once("case"+w.CaseID) {
				raw, _ := json.Marshal(map[string]any{"status": m.Case.Status, "data": m.Case.Data})
				h.call(t, key, "PATCH", "/cases/"+w.CaseID, "application/json", string(raw), nil)
			}
		}
	}
}

// decide approves or rejects as the key the approval names (key:NAME).
func (h *harness) decide(t *testing.T, key string, dec *deciders, id string, approve bool) {
	var list struct {
		Approvals []struct {
			ID        string   `json:"id"`
			Approvers []string `json:"approvers"`
		} `json:"approvals"`
	}
	h.call(t, key, "GET", "/approvals?status=pending", "", "", &list)
	for _, a := range list.Approvals {
		if a.ID != id {
			continue
		}
		for _, who := range a.Approvers {
			if name, ok := strings.CutPrefix(who, "key:"); ok {
				decision := map[bool]string{true: "approve", false: "reject"}[approve]
				h.postJSON(t, dec.key(t, name), "/approvals/"+id+"/decision", map[string]any{"decision": decision}, nil)
				return
			}
		}
		t.Errorf("approval %s names no key:NAME approver, so no API key (and not the docs test) may decide it: %v", id, a.Approvers)
		return
	}
}
