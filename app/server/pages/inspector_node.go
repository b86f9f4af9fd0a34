package pages

import (
	"context"
	"strconv"
	"strings"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// loadNodeDetail reads the selected node: a step, or a scatter child
// named REF[KEY]. A step gets its attempts, the approval or case it waits
// on and, when it fans out, its children's counts and one page of them;
// a child gets its attempts and its own transitions.
func loadNodeDetail(c echo.Context, s *store.Store, run store.Run, m *definition.Manifest, byRef map[string]*engine.Node, ref string) (*views.NodeDetail, error) {
	ctx := c.Request().Context()
	st, ok := m.Step(ref)
	if !ok {
		return loadChildDetail(ctx, s, run, m, ref)
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
	d.Attempts, d.Node = attempts, startedOnWorker(d.Node, attempts)
	if st.Type == definition.TypeSubworkflow {
		d.ChildRun = childRunOf(ctx, s, run, st, d.Node)
	}
	if err := loadInteraction(ctx, s, run, d); err != nil {
		return nil, err
	}
	approvalDecider(httpx.ViewerOf(c), d)
	if d.IsScatter() {
		return d, loadChildren(c, s, run, d)
	}
	return d, nil
}

// loadChildDetail reads one scatter child: ?node=resize[402].
func loadChildDetail(ctx context.Context, s *store.Store, run store.Run, m *definition.Manifest, id string) (*views.NodeDetail, error) {
	scatter, _, ok := strings.Cut(id, "[")
	st, isStep := m.Step(scatter)
	if !ok || !isStep || !strings.HasSuffix(id, "]") {
		return nil, apperr.New(apperr.NotFound, "run has no step %q", id)
	}
	nodes, err := s.RunNodesByName(ctx, run.TenantID, run.ID, []string{id})
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 || nodes[0].Child == nil {
		return nil, apperr.New(apperr.NotFound, "run has no node %q", id)
	}
	d := &views.NodeDetail{Ref: id, Type: childType(st), Node: nodes[0], Scatter: scatter, Step: st, ChildAfter: -1, ChildNext: -1}
	if d.Attempts, err = s.RunAttemptsOf(ctx, run.TenantID, run.ID, []string{id}); err != nil {
		return nil, err
	}
	d.Node = startedOnWorker(d.Node, d.Attempts)
	if with, _ := st.With["mode"].(string); with == "child_workflow" {
		d.ChildRun = childRunOf(ctx, s, run, st, d.Node)
	}
	d.History, err = s.RunNodeHistory(ctx, run.TenantID, run.ID, id, 0, nodeHistoryRows)
	return d, err
}

// childType is what a scatter's children run: its do template's type.
func childType(st *definition.Step) string {
	if st.ForEach != "" {
		return string(st.Type)
	}
	if mode, _ := st.With["mode"].(string); mode == "child_workflow" {
		return string(definition.TypeSubworkflow)
	}
	if do, ok := st.With["do"].(map[string]any); ok {
		if t, ok := do["type"].(string); ok {
			return t
		}
	}
	return string(st.Type)
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

// loadChildren reads a scatter's counts by state and one page of its
// children in item order: ?state=STATE&q=KEY filter them, ?after=INDEX
// pages.
func loadChildren(c echo.Context, s *store.Store, run store.Run, d *views.NodeDetail) error {
	ctx := c.Request().Context()
	if v := c.QueryParam("after"); v != "" {
		after, err := strconv.Atoi(v)
		if err != nil || after < -1 {
			return apperr.New(apperr.Invalid, "after must be a child index")
		}
		d.ChildAfter = after
	}
	var err error
	if d.ChildState, err = httpx.ChildStateParam(c.QueryParam("state")); err != nil {
		return err
	}
	d.ChildKey = strings.TrimSpace(c.QueryParam("q"))
	if d.ChildCounts, err = s.RunChildNodeCounts(ctx, run.TenantID, run.ID, d.Ref); err != nil {
		return err
	}
	d.Children, err = s.RunNodesChildrenFiltered(ctx, run.TenantID, run.ID, store.ChildFilter{
		Scatter: d.Ref, After: int64(d.ChildAfter), State: d.ChildState, Key: d.ChildKey, Limit: childrenPage + 1,
	})
	if len(d.Children) > childrenPage {
		d.Children = d.Children[:childrenPage]
		d.ChildNext = d.Children[childrenPage-1].Child.Index
	}
	return err
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
