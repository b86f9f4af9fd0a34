package shell

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// loadSignals gives the engine the run's buffered signals; the run row
// counts them, so a run without any costs no query.
func loadSignals(ctx context.Context, s *store.Store, run store.Run, st *engine.State) error {
	if run.State.BufferedSignals == 0 {
		return nil
	}
	sigs, err := s.SignalsBuffered(ctx, run.TenantID, run.ID)
	st.Signals = sigs
	return err
}

// saveWaiting persists what a decision changed about waiting: signal rows
// (consumed, buffered, rejected), the events nodes consumed, and the event
// names each event, event_set or digest node listens for while it waits.
func saveWaiting(ctx context.Context, s *store.Store, run store.Run, m *definition.Manifest, d *engine.Decision) error {
	if len(d.Signals) > 0 {
		chain, err := s.RunChainRoot(ctx, run.TenantID, run.ID)
		if err != nil {
			return err
		}
		if err := s.SignalsApply(ctx, run.TenantID, chain, d.Signals); err != nil {
			return err
		}
	}
	for _, u := range d.Events {
		id, err := uuid.Parse(u.EventID)
		if err != nil {
			return fmt.Errorf("event id %q: %w", u.EventID, err)
		}
		if err := s.EventUse(ctx, run.TenantID, run.ID, u.Node, id); err != nil {
			return err
		}
	}
	return saveEventWaits(ctx, s, run, m, d.Nodes)
}

func saveEventWaits(ctx context.Context, s *store.Store, run store.Run, m *definition.Manifest, nodes []*engine.Node) error {
	steps := stepsByRef(m)
	for _, n := range nodes {
		st, ok := steps[n.Ref]
		if !ok || !listensForEvents(st.Type) {
			continue
		}
		var names []string
		if n.State == engine.NodeWaiting {
			names = eventNames(st)
		}
		if err := s.EventWaitSet(ctx, run.TenantID, run.ID, n.ID, names); err != nil {
			return err
		}
	}
	return nil
}

func listensForEvents(t definition.StepType) bool {
	return t == definition.TypeEvent || t == definition.TypeEventSet || t == definition.TypeDigest
}

// eventNames are the event names a step listens for.
func eventNames(st *definition.Step) []string {
	if st.Type != definition.TypeEventSet {
		name, _ := st.With["name"].(string)
		return []string{name}
	}
	var names []string
	list, _ := st.With["events"].([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			if name, _ := m["name"].(string); name != "" {
				names = append(names, name)
			}
		}
	}
	return names
}

func stepsByRef(m *definition.Manifest) map[string]*definition.Step {
	out := make(map[string]*definition.Step, len(m.Steps))
	for i := range m.Steps {
		out[m.Steps[i].Ref] = &m.Steps[i]
	}
	return out
}

// interaction opens or withdraws an approval or a case.
func (b *commandBatch) interaction(ctx context.Context, cmd engine.Command) error {
	switch v := cmd.(type) {
	case engine.OpenApproval:
		a := store.Approval{
			TenantID: b.run.TenantID, ID: store.ApprovalID(v.Key), RunID: b.run.ID, Node: v.Node, Title: v.Title,
			Description: v.Description, Approvers: normalizeAudience(v.Approvers), MinApprovals: v.MinApprovals,
		}
		if !v.ExpiresAt.IsZero() {
			a.ExpiresAt = &v.ExpiresAt
		}
		return b.s.ApprovalOpen(ctx, a)
	case engine.OpenCase:
		return b.s.CaseCreate(ctx, store.Case{
			TenantID: b.run.TenantID, ID: store.CaseID(v.Key), RunID: b.run.ID, Node: v.Node, Title: v.Title,
			Assignees: normalizeAudience(v.Assignees), Fields: v.Fields, AwaitingStatus: v.AwaitingStatus,
		})
	case engine.CloseInteraction:
		if err := b.s.ApprovalClose(ctx, b.run.TenantID, store.ApprovalID(v.Key)); err != nil {
			return err
		}
		return b.s.CaseClose(ctx, b.run.TenantID, store.CaseID(v.Key))
	}
	return fmt.Errorf("run %s: %T is not an interaction", b.run.ID, cmd)
}

// normalizeAudience lower-cases emails (as logins record them) and keeps
// role:NAME and key:NAME entries as they are.
func normalizeAudience(who []string) []string {
	out := make([]string, 0, len(who))
	for _, w := range who {
		if e, err := store.NormalizeEmail(w); err == nil && !isRole(w) {
			w = e
		}
		out = append(out, w)
	}
	return out
}

func isRole(w string) bool { return strings.HasPrefix(w, "role:") || strings.HasPrefix(w, "key:") }
