package httpx

import (
	"context"
	"reflect"
	"slices"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// A human_loop case's data is for the people the case is assigned to
// (its assignees: an email, or role:NAME for every member with that
// role). The inbox and the case's download show it only to them, and
// every view of a run keeps to the same rule: to anyone else,
//
//   - the output of the case's node is replaced by RedactedCaseData, and
//     so are its attempts' outputs;
//   - so is the entry of the run's default output (the sinks' outputs by
//     ref) under that node's ref;
//   - and so is any object or list, at any depth of any node's output or
//     the run's output, equal to the data of such a case of the run or of
//     another run of its tree (a parent, a child at any depth): the run's
//     output when output_expr is the case's data, a subworkflow step
//     whose output is its child run's, a step that passed the data on
//     unchanged; in the run's input (the caller's), another run's only:
//     a child run's input may be its parent's case data.
//
// A value computed from case data (one field of it, a transformed copy)
// is not recognised: what a definition derives from a case is its
// author's choice. A value that merely equals the case's data is
// redacted as well, which tells nothing either way.
//
// An API key is not a person and never an assignee: a key reads case
// data only when it holds the scope that reads cases themselves
// (approvals:write, which GET /api/v1/cases/{id} needs, or admin); with
// runs:read alone it gets the values redacted.
//
// Routes load a CaseGuard for the run and the caller (GuardFor, or
// GuardRuns for a page of runs) and pass each value through it before
// they answer.

// CaseRedactedReason says why a value was left out.
const CaseRedactedReason = "case data restricted to assignees"

// RedactedCaseData stands in for case data the caller may not read.
var RedactedCaseData = map[string]any{"$redacted": CaseRedactedReason}

// CaseReader is who asks for a run's values, as the case data rule sees
// them.
type CaseReader struct {
	who []string // a person's Audience
	all bool     // reads every case's data
}

// CaseReaderOf is the caller of a dashboard or API route.
func CaseReaderOf(c echo.Context) CaseReader {
	if p, ok := PrincipalOf(c); ok {
		return CaseReader{all: auth.Allows(p.Key.Scopes, auth.ScopeApprovalsWrite)}
	}
	v := ViewerOf(c)
	return CaseReader{who: store.Audience(v.User.Email, string(v.Role))}
}

// MayRead reports whether the reader may read the case's data.
func (r CaseReader) MayRead(k store.Case) bool {
	return r.all || slices.ContainsFunc(k.Assignees, func(a string) bool { return slices.Contains(r.who, a) })
}

// CaseGuard redacts, in one run's values, the case data its reader may
// not read. The zero guard redacts nothing.
type CaseGuard struct {
	nodes map[string]bool // the run's nodes whose output is redacted
	own   []any           // the objects and lists of the run's hidden cases
	tree  []any           // those of the other runs of its tree
}

// GuardFor loads the guard of a run for the route's caller.
func GuardFor(c echo.Context, s *store.Store, run store.Run) (CaseGuard, error) {
	return LoadCaseGuard(c.Request().Context(), s, CaseReaderOf(c), run)
}

// LoadCaseGuard loads the guard of a run for the reader.
func LoadCaseGuard(ctx context.Context, s *store.Store, r CaseReader, run store.Run) (CaseGuard, error) {
	list, err := guardsFor(ctx, s, r, []store.Run{run})
	if err != nil {
		return CaseGuard{}, err
	}
	return list[0], nil
}

// GuardRuns is the runs with their outputs as the route's caller may see
// them, their cases read in one query.
func GuardRuns(c echo.Context, s *store.Store, runs []store.Run) ([]store.Run, error) {
	guards, err := guardsFor(c.Request().Context(), s, CaseReaderOf(c), runs)
	if err != nil {
		return nil, err
	}
	out := make([]store.Run, len(runs))
	for i, run := range runs {
		out[i] = guards[i].Run(run)
	}
	return out, nil
}

// guardsFor reads the cases of the runs' trees and keeps, for each run,
// those the reader may not read.
func guardsFor(ctx context.Context, s *store.Store, r CaseReader, runs []store.Run) ([]CaseGuard, error) {
	out := make([]CaseGuard, len(runs))
	if r.all || len(runs) == 0 {
		return out, nil
	}
	var roots []uuid.UUID
	for _, run := range runs {
		if !slices.Contains(roots, run.RootRunID) {
			roots = append(roots, run.RootRunID)
		}
	}
	cases, err := s.CasesOfTrees(ctx, runs[0].TenantID, roots)
	if err != nil {
		return nil, err
	}
	for i, run := range runs {
		out[i] = guardOf(run, cases, r)
	}
	return out, nil
}

// guardOf keeps, of the cases of run's tree, those the reader may not
// read.
func guardOf(run store.Run, cases []store.TreeCase, r CaseReader) CaseGuard {
	g := CaseGuard{nodes: map[string]bool{}}
	for _, k := range cases {
		if k.Root != run.RootRunID || r.MayRead(k.Case) {
			continue
		}
		switch {
		case !composite(k.Data):
		case k.RunID == run.ID:
			g.own = append(g.own, k.Data)
		default:
			g.tree = append(g.tree, k.Data)
		}
		if k.RunID == run.ID {
			g.nodes[k.Node] = true
		}
	}
	return g
}

// composite reports whether v is a non-empty JSON object or list: only
// those are looked for beyond the case's own node (a bare number or
// string would match unrelated values).
func composite(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return len(v) > 0
	case []any:
		return len(v) > 0
	}
	return false
}

// Node is the output v of node id as the reader may see it.
func (g CaseGuard) Node(id string, v any) any {
	if v != nil && g.nodes[id] {
		return RedactedCaseData
	}
	return redactIn(v, slices.Concat(g.own, g.tree))
}

// RunOutput is the run's output v as the reader may see it.
func (g CaseGuard) RunOutput(v any) any {
	all := slices.Concat(g.own, g.tree)
	m, ok := v.(map[string]any)
	if !ok || len(g.nodes) == 0 {
		return redactIn(v, all)
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		out[k] = redactIn(val, all)
		if val != nil && g.nodes[k] {
			out[k] = RedactedCaseData
		}
	}
	return redactIn(out, all)
}

// redactIn is v with every object or list equal to one of hidden
// replaced, at any depth; v itself is left as it was.
func redactIn(v any, hidden []any) any {
	if len(hidden) == 0 || !composite(v) {
		return v
	}
	if slices.ContainsFunc(hidden, func(d any) bool { return reflect.DeepEqual(d, v) }) {
		return RedactedCaseData
	}
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = redactIn(e, hidden)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactIn(e, hidden)
		}
		return out
	}
	return v
}

// Nodes is the nodes with their outputs as the reader may see them,
// copied where they change.
func (g CaseGuard) Nodes(list []*engine.Node) []*engine.Node {
	if len(g.nodes) == 0 && len(g.own) == 0 && len(g.tree) == 0 {
		return list
	}
	out := make([]*engine.Node, len(list))
	for i, n := range list {
		out[i] = n
		if n != nil && n.Output != nil {
			c := *n
			c.Output = g.Node(n.ID, n.Output)
			out[i] = &c
		}
	}
	return out
}

// Attempts is the attempts with their inputs and outputs as the reader
// may see them: an input may carry case data from the steps before.
func (g CaseGuard) Attempts(list []store.AttemptRecord) []store.AttemptRecord {
	out := slices.Clone(list)
	for i := range out {
		out[i].Output = g.Node(out[i].Node, out[i].Output)
		out[i].Input = redactIn(out[i].Input, slices.Concat(g.own, g.tree))
	}
	return out
}

// Run is the run with its input and output as the reader may see them:
// the input is the caller's, only another run's case data is looked for
// in it (a child run's input may be its parent's case data).
func (g CaseGuard) Run(r store.Run) store.Run {
	r.State.Input, r.State.Output = redactIn(r.State.Input, g.tree), g.RunOutput(r.State.Output)
	return r
}

// Detail is the inspector's selected node as the reader may see it.
func (g CaseGuard) Detail(d *views.NodeDetail) {
	if d == nil {
		return
	}
	d.Node = g.Nodes([]*engine.Node{d.Node})[0]
	d.Children, d.Attempts = g.Nodes(d.Children), g.Attempts(d.Attempts)
}
