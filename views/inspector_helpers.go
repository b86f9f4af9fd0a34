package views

import (
	"encoding/json"
	"time"

	"github.com/ductor/ductor/app/engine"
)

// nodeStates are the states children can be filtered by.
var nodeStates = []string{"pending", "ready", "running", "waiting", "succeeded", "failed", "skipped", "cancelled"}

// nodeTook is how long a node ran, or has been running for.
func nodeTook(n *engine.Node, now time.Time) string {
	if n == nil || n.StartedAt.IsZero() {
		return ""
	}
	if !n.FinishedAt.IsZero() && !n.FinishedAt.Before(n.StartedAt) {
		return shortDuration(n.FinishedAt.Sub(n.StartedAt))
	}
	if n.State.Terminal() || now.Before(n.StartedAt) {
		return ""
	}
	return shortDuration(now.Sub(n.StartedAt)) + " so far"
}

// retryable reports whether an operator can retry the node in a run of
// status: a failed node, or one an operator cancelled, while the run has
// not succeeded, been terminated or timed out.
func retryable(status engine.RunStatus, n *NodeDetail) bool {
	if n == nil || n.Node == nil {
		return false
	}
	switch status {
	case engine.RunSucceeded, engine.RunTerminated, engine.RunTimedOut:
		return false
	}
	switch n.Node.State {
	case engine.NodeFailed:
		return true
	case engine.NodeCancelled:
		return !n.IsChild() || n.Node.Error != nil
	}
	return false
}

// oneLine is a short one-line preview of a value, for a table cell.
func oneLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	if r := []rune(string(b)); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return string(b)
}

// failedScatters are the run's scatters with failed children, listed
// with a failed run's error (a gather that raised, a step that read a
// failed child's output) so each failure is one click from the run.
func failedScatters(d InspectorData) []InspectorStep {
	var out []InspectorStep
	for _, st := range d.Steps {
		if st.Node != nil && st.Node.Scatter != nil && st.Node.Scatter.Failed > 0 {
			out = append(out, st)
		}
	}
	return out
}

func childrenWord(n int) string {
	if n == 1 {
		return "child"
	}
	return "children"
}
