package pages

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

const (
	historyPage     = 50
	childrenPage    = 50
	childRunRows    = 10
	signalRows      = 100
	nodeHistoryRows = 100
)

// actionNotices confirm a finished operator action (?done=NAME after the
// redirect).
var actionNotices = map[string]string{
	"cancel": "Cancel requested: the run stops at its next tick.",
	"signal": "Signal sent.",
	"retry":  "Retry requested.",
	"can":    "Continue-as-new requested.",
	// Cancelling one node: runs_cancel_node.go.
	"cancel-node": "Cancel requested: the node stops at the run's next tick.",
	// Retrying a scatter's failed children: inspector_retry_children.go.
	"retry-children":      "Retry of the failed children requested (up to 500 at a time).",
	"retry-children-none": "No failed child to retry.",
	// Deciding the step's approval: inspector_approval.go.
	"approve": "Approved: your decision is recorded.",
	"reject":  "Rejected: your decision is recorded.",
}

// hereKeys are the query parameters that make up the inspector's
// selection, kept across actions.
var hereKeys = []string{"node", "state", "q", "after", "history", "history_before", "history_step", "history_kind", "history_order", "layout"}

// handleInspector shows one run: graph, steps, the selected node (a step,
// or a scatter child by its id: ?node=resize[402]), history, signals,
// lineage and, to operators, the actions.
func handleInspector(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		d, err := loadInspector(c, s, rs)
		if err != nil {
			return err
		}
		d.Notice = actionNotices[c.QueryParam("done")]
		return renderInspector(c, http.StatusOK, d)
	}
}

func renderInspector(c echo.Context, status int, d views.InspectorData) error {
	return httpx.Render(c, status, views.InspectorPage(shellFor(c, "Run "+d.Run.ID.String()[:8], "runs"), d))
}

// hereOf is the selection in q.
func hereOf(q url.Values) url.Values {
	out := url.Values{}
	for _, k := range hereKeys {
		if v := q.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	return out
}

// loadInspector reads everything the page shows; each list is bounded
// (history and children are paged, child runs cut at a few rows).
func loadInspector(c echo.Context, s *store.Store, rs *runs.Service) (views.InspectorData, error) {
	ctx, v := c.Request().Context(), httpx.ViewerOf(c)
	id, err := httpx.PathUUID(c, "id", "run")
	if err != nil {
		return views.InspectorData{}, err
	}
	run, err := s.RunGet(ctx, v.Tenant.ID, id)
	if err != nil {
		return views.InspectorData{}, err
	}
	g, err := httpx.GuardFor(c, s, run)
	if err != nil {
		return views.InspectorData{}, err
	}
	run = g.Run(run)
	d := views.InspectorData{Run: run, CanOperate: v.Can(auth.PermRunsOperate), Now: time.Now(), Here: hereOf(c.QueryParams())}
	m, err := rs.Manifest(ctx, run)
	if err != nil {
		return d, err
	}
	nodes, err := s.RunNodesSteps(ctx, run.TenantID, run.ID)
	if err != nil {
		return d, err
	}
	nodes = g.Nodes(nodes)
	byRef := map[string]*engine.Node{}
	for _, n := range nodes {
		byRef[n.ID] = n
	}
	waits, err := httpx.WorkerWaits(ctx, s, run, nodes)
	if err != nil {
		return d, err
	}
	slots, err := httpx.SlotWaits(ctx, s, run, nodes)
	if err != nil {
		return d, err
	}
	if d.Flow, err = httpx.FlowWait(ctx, s, run); err != nil {
		return d, err
	}
	d.Graph, d.Steps = views.LayoutRun(m, byRef, c.QueryParam("layout")), inspectorSteps(m, byRef, waits, slots)
	d.StepRuns = stepRuns(ctx, s, run, m, byRef)
	if ref := c.QueryParam("node"); ref != "" {
		if d.Selected, err = loadNodeDetail(c, s, run, m, byRef, ref); err != nil {
			return d, err
		}
		g.Detail(d.Selected)
		d.Selected.Worker, d.Selected.Slot = waits[ref], slots[ref]
		if w := d.Selected.Slot; w != nil {
			if d.Selected.SlotHolders, err = s.PoolHolders(ctx, run.TenantID, w.Key, views.SlotHolderRows); err != nil {
				return d, err
			}
		}
	}
	if err := loadHistory(c, s, &d); err != nil {
		return d, err
	}
	return d, loadRunSide(ctx, s, &d)
}

func inspectorSteps(m *definition.Manifest, byRef map[string]*engine.Node, waits map[string]*store.WorkerWait, slots map[string]*store.PoolWait) []views.InspectorStep {
	out := make([]views.InspectorStep, 0, len(m.Order))
	for _, ref := range m.Order {
		st, _ := m.Step(ref)
		out = append(out, views.InspectorStep{Ref: ref, Type: string(st.Type), Node: byRef[ref], Worker: waits[ref], Slot: slots[ref]})
	}
	return out
}

// stepRuns finds the child run of each subworkflow step that started
// one.
func stepRuns(ctx context.Context, s *store.Store, run store.Run, m *definition.Manifest, byRef map[string]*engine.Node) map[string]string {
	out := map[string]string{}
	for i := range m.Steps {
		st := &m.Steps[i]
		if st.Type != definition.TypeSubworkflow {
			continue
		}
		if id := childRunOf(ctx, s, run, st, byRef[st.Ref]); id != "" {
			out[st.Ref] = id
		}
	}
	return out
}

// childRunOf is the run a subworkflow node (or a child_workflow scatter
// child) started: the one it waits for, or the one its key names once it
// is over (a loop's last iteration is not known then); "" when it started
// none.
func childRunOf(ctx context.Context, s *store.Store, run store.Run, st *definition.Step, n *engine.Node) string {
	id := ""
	switch {
	case n == nil || n.Attempt == 0:
		return ""
	case n.Waiting != nil && n.Waiting.ChildKey != "":
		id = engine.ChildRunID(n.Waiting.ChildKey)
	case n.Child == nil && st.With["repeat"] != nil:
		return ""
	default:
		id = engine.ChildRunID(engine.NodeKey(run.ID.String(), n))
	}
	uid, err := uuid.Parse(id)
	if err != nil {
		return ""
	}
	if _, err := s.RunGet(ctx, run.TenantID, uid); err != nil {
		return ""
	}
	return id
}

// loadHistory reads one page of transitions by keyset on their seqs:
// ?history=SEQ starts the page after SEQ in the page's order,
// ?history_before=SEQ ends it before SEQ, ?history=end is the last page;
// ?history_step and ?history_kind filter it, ?history_order=newest puts
// the newest first.
func loadHistory(c echo.Context, s *store.Store, d *views.InspectorData) error {
	ctx := c.Request().Context()
	d.HistoryStep, d.HistoryKind = c.QueryParam("history_step"), c.QueryParam("history_kind")
	if d.HistoryKind != "" && !store.IsHistoryKind(d.HistoryKind) {
		return apperr.New(apperr.Invalid, "history_kind must be one of the history's kinds")
	}
	switch o := c.QueryParam("history_order"); o {
	case "", "oldest":
	case "newest":
		d.HistoryNewest = true
	default:
		return apperr.New(apperr.Invalid, "history_order must be oldest or newest")
	}
	seq := func(name string) (int64, error) {
		v := c.QueryParam(name)
		if v == "" {
			return 0, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, apperr.New(apperr.Invalid, "%s must be a sequence number", name)
		}
		return n, nil
	}
	after, end := int64(0), c.QueryParam("history") == "end"
	var before int64
	var err error
	if !end {
		if after, err = seq("history"); err != nil {
			return err
		}
	}
	if before, err = seq("history_before"); err != nil {
		return err
	}
	p := store.HistoryPage{Node: d.HistoryStep, Kind: d.HistoryKind, Limit: historyPage + 1}
	// A page read backwards (the one before a seq, or the last) is read
	// in the other order and turned round.
	backwards := end || before > 0
	p.Desc = d.HistoryNewest != backwards
	switch {
	case end:
	case before > 0 && p.Desc:
		p.Before = before
	case before > 0:
		p.After = before
	case p.Desc:
		p.Before = after
	default:
		p.After = after
	}
	ts, err := s.RunHistoryPage(ctx, d.Run.TenantID, d.Run.ID, p)
	if err != nil {
		return err
	}
	more := len(ts) > historyPage
	if more {
		ts = ts[:historyPage]
	}
	if backwards {
		slices.Reverse(ts)
	}
	d.History = ts
	d.HistoryFirst, d.HistoryPrev, d.HistoryNext, d.HistoryLast, d.HistoryFailure = false, -1, -1, false, -1
	onFirst := (!backwards && after == 0) || (backwards && !more)
	onLast := (!backwards && !more) || end
	if len(ts) > 0 {
		if !onFirst {
			d.HistoryFirst, d.HistoryPrev = true, ts[0].Seq
		}
		if !onLast {
			d.HistoryNext, d.HistoryLast = ts[len(ts)-1].Seq, true
		}
	}
	if d.Run.Status == engine.RunFailed {
		seq, err := s.RunHistoryFirstFailure(ctx, d.Run.TenantID, d.Run.ID)
		if err != nil {
			return err
		}
		if seq > 0 && !slices.ContainsFunc(ts, func(t engine.Transition) bool { return t.Seq == seq }) {
			// The page that shows it with a few transitions before it.
			d.HistoryFailure = max(seq-5, 0)
			if d.HistoryNewest {
				d.HistoryFailure = seq + 5
			}
		}
	}
	return nil
}

// loadRunSide reads the run's signals and child runs.
func loadRunSide(ctx context.Context, s *store.Store, d *views.InspectorData) error {
	var err error
	if d.Signals, err = s.SignalsList(ctx, d.Run.TenantID, d.Run.ID); err != nil {
		return err
	}
	d.Signals = d.Signals[max(0, len(d.Signals)-signalRows):] // the latest
	if d.ChildCounts, err = s.RunChildCounts(ctx, d.Run.TenantID, d.Run.ID); err != nil || len(d.ChildCounts) == 0 {
		return err
	}
	d.ChildRuns, err = s.RunList(ctx, d.Run.TenantID, store.RunFilter{ParentID: &d.Run.ID, Limit: childRunRows})
	return err
}
