package views

import (
	"fmt"
	"strings"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
)

// The inspector's words for control flow beyond edges: what a step's
// join, end_run, loop or early completion is set to, and what happened.

// ControlFact is one fact the node panel shows about a step's control
// flow.
type ControlFact struct{ Label, Text string }

// controlFacts describes the step's join, end_run, complete_when and
// repeat, for the node panel.
func controlFacts(st *definition.Step, inEdges int) []ControlFact {
	if st == nil {
		return nil
	}
	var out []ControlFact
	if j := joinText(st, inEdges); j != "" {
		out = append(out, ControlFact{"Join", j})
	}
	if st.EndRun != "" {
		out = append(out, ControlFact{"Ends the run", "as " + string(st.EndRun) + " once this step succeeds"})
	}
	if src, _ := st.With["complete_when"].(string); src != "" {
		out = append(out, ControlFact{"Completes early", "when " + src})
	}
	if rep, _ := st.With["repeat"].(map[string]any); rep != nil {
		out = append(out, ControlFact{"Loop", fmt.Sprintf("until %v, at most %v iterations", rep["until_expr"], rep["max_iterations"])})
	}
	return out
}

func joinText(st *definition.Step, inEdges int) string {
	var s string
	switch st.Join {
	case definition.JoinAny:
		s = fmt.Sprintf("any: ready on the first of %d incoming edges", inEdges)
	case definition.JoinAtLeast:
		s = fmt.Sprintf("at least %d of %d incoming edges", st.JoinAtLeast, inEdges)
	default:
		return ""
	}
	if st.JoinCancelRest {
		s += ", then the unfinished rest is cancelled"
	}
	return s
}

// graphTags is the short label above a step's box in the run graph.
func graphTags(st *definition.Step) string {
	var tags []string
	switch {
	case st.Join == definition.JoinAny && st.JoinCancelRest:
		tags = append(tags, "race")
	case st.Join == definition.JoinAny:
		tags = append(tags, "any")
	case st.Join == definition.JoinAtLeast && st.JoinCancelRest:
		tags = append(tags, fmt.Sprintf("≥%d ✂", st.JoinAtLeast))
	case st.Join == definition.JoinAtLeast:
		tags = append(tags, fmt.Sprintf("≥%d", st.JoinAtLeast))
	}
	if src, _ := st.With["complete_when"].(string); src != "" {
		tags = append(tags, "early")
	}
	if rep, _ := st.With["repeat"].(map[string]any); rep != nil {
		tags = append(tags, fmt.Sprintf("↻ ≤%v", rep["max_iterations"]))
	}
	if st.EndRun != "" {
		tags = append(tags, "■ "+string(st.EndRun))
	}
	return strings.Join(tags, " · ")
}

// earlyText says how a scatter completed early, or "".
func earlyText(s *engine.ScatterState) string {
	if s == nil || !s.CompletedEarly {
		return ""
	}
	return fmt.Sprintf("complete_when held once %d of %d children had finished (%d succeeded, %d failed); %d unfinished children were cancelled",
		s.Checked, s.Total, s.Succeeded, s.Failed, s.Cancelled)
}

// cancellable reports whether an operator can cancel the node of a run
// in status now.
func cancellable(status engine.RunStatus, n *engine.Node) bool {
	return n != nil && !status.Terminal() && (n.State == engine.NodeRunning || n.State == engine.NodeWaiting)
}

func cancelConfirm(id string) string {
	return "Cancel " + id + "? Its work is withdrawn and it fails with code cancelled; its error and done edges and its on_error policy apply."
}
