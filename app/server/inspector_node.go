package server

import (
	"context"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// loadNodeDetail reads the selected step: its attempts, the approval or
// case it waits on, and one page of its children when it fans out.
func loadNodeDetail(c echo.Context, s *store.Store, run store.Run, m *definition.Manifest, byRef map[string]*engine.Node, ref string) (*views.NodeDetail, error) {
	ctx := c.Request().Context()
	st, ok := m.Step(ref)
	if !ok {
		return nil, apperr.New(apperr.NotFound, "run has no step %q", ref)
	}
	d := &views.NodeDetail{Ref: ref, Type: string(st.Type), Node: byRef[ref], Step: st, InEdges: inEdges(m, ref),
		Settings: st.With, ChildAfter: -1, ChildNext: -1}
	if d.Node == nil {
		return d, nil
	}
	attempts, err := s.RunAttemptsOf(ctx, run.TenantID, run.ID, []string{ref})
	if err != nil {
		return nil, err
	}
	d.Attempts = attempts
	d.Node = startedOnWorker(d.Node, attempts)
	if err := loadInteraction(ctx, s, run, d); err != nil {
		return nil, err
	}
	if d.IsScatter() {
		return d, loadChildren(c, s, run, d)
	}
	return d, nil
}

func inEdges(m *definition.Manifest, ref string) int {
	n := 0
	for _, e := range m.Edges {
		if e.To == ref {
			n++
		}
	}
	return n
}

// loadInteraction finds the approval or case of an approval or
// human_loop step (its latest, when it was retried).
func loadInteraction(ctx context.Context, s *store.Store, run store.Run, d *views.NodeDetail) error {
	switch definition.StepType(d.Type) {
	case definition.TypeApproval:
		list, err := s.ApprovalsOfRun(ctx, run.TenantID, run.ID)
		for i := range list {
			if list[i].Node == d.Ref {
				d.Approval = &list[i]
			}
		}
		return err
	case definition.TypeHumanLoop:
		list, err := s.CasesOfRun(ctx, run.TenantID, run.ID)
		for i := range list {
			if list[i].Node == d.Ref {
				d.Case = &list[i]
			}
		}
		return err
	}
	return nil
}

// loadChildren reads one page of a scatter's children in item order
// (?after=INDEX, ?live=1 for the unfinished ones) and their counts.
func loadChildren(c echo.Context, s *store.Store, run store.Run, d *views.NodeDetail) error {
	ctx := c.Request().Context()
	if v := c.QueryParam("after"); v != "" {
		after, err := strconv.Atoi(v)
		if err != nil || after < -1 {
			return apperr.New(apperr.Invalid, "after must be a child index")
		}
		d.ChildAfter = after
	}
	d.LiveOnly = c.QueryParam("live") == "1"
	var err error
	if d.ChildCounts, err = s.RunChildNodeCounts(ctx, run.TenantID, run.ID, d.Ref); err != nil {
		return err
	}
	d.Children, err = childrenPageOf(ctx, s, run, d)
	if len(d.Children) > childrenPage {
		d.Children = d.Children[:childrenPage]
		d.ChildNext = d.Children[childrenPage-1].Child.Index
	}
	return err
}

// childrenPageOf reads up to one more child than a page. The index range
// of all children is dense, so a page is one range; the unfinished ones
// are sparse, so their range widens until the page fills or it passes the
// last child.
func childrenPageOf(ctx context.Context, s *store.Store, run store.Run, d *views.NodeDetail) ([]*engine.Node, error) {
	from, total := d.ChildAfter+1, d.Node.Scatter.Total
	if !d.LiveOnly {
		return s.RunNodesChildren(ctx, run.TenantID, run.ID, engine.Need{Scatter: d.Ref, From: from, To: from + childrenPage + 1})
	}
	var out []*engine.Node
	for span := 512; len(out) <= childrenPage && from < total; span *= 2 {
		got, err := s.RunNodesChildren(ctx, run.TenantID, run.ID, engine.Need{Scatter: d.Ref, From: from, To: from + span, Live: true})
		if err != nil {
			return nil, err
		}
		out, from = append(out, got...), from+span
	}
	return out, nil
}

// startedOnWorker is n with its started_at the time its current attempt
// started on a worker, when one did: the tick that dispatched it may have
// run well before (a backoff, a scatter's interval_ms, a queue).
func startedOnWorker(n *engine.Node, attempts []store.AttemptRecord) *engine.Node {
	for _, a := range attempts {
		if a.Generation == n.Generation && a.Attempt.Attempt == n.Attempt && !a.StartedAt.IsZero() {
			c := *n
			c.StartedAt = a.StartedAt
			return &c
		}
	}
	return n
}
