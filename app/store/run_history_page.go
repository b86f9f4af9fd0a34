package store

import (
	"context"
	"fmt"
	"math"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/queries"
)

// HistoryKind is a kind of transition the history can be filtered by,
// told from the transition's own states and detail.
type HistoryKind struct {
	Name, Label string
}

// HistoryKinds are the kinds RunHistoryPage filters by: a node started
// (into running), succeeded, failed, was retried (a retry's backoff, or
// an operator's retry), began to wait (for anything, or for a signal or
// an event), was skipped or cancelled; or the run's own status changed.
var HistoryKinds = []HistoryKind{
	{"started", "step started"},
	{"succeeded", "step succeeded"},
	{"failed", "step failed"},
	{"retried", "step retried"},
	{"waiting", "step waits"},
	{"signal", "waits for a signal or event"},
	{"skipped", "step skipped"},
	{"cancelled", "step cancelled"},
	{"run", "run status"},
}

// IsHistoryKind reports whether name is one of HistoryKinds.
func IsHistoryKind(name string) bool {
	for _, k := range HistoryKinds {
		if k.Name == name {
			return true
		}
	}
	return false
}

// HistoryPage asks for one page of a run's transitions: those of Node
// ("" every node and the run) of Kind ("" any), after seq After oldest
// first or, Desc, before seq Before (0: from the newest) newest first.
type HistoryPage struct {
	Node, Kind    string
	Desc          bool
	After, Before int64
	Limit         int
}

// RunHistoryPage returns one page of a run's transitions, by keyset on
// their seqs, in the order asked.
func (s *Store) RunHistoryPage(ctx context.Context, tenantID, runID uuid.UUID, p HistoryPage) ([]engine.Transition, error) {
	var out []engine.Transition
	add := func(seq int64, r queries.RunHistoryPageAscRow) {
		out = append(out, engine.Transition{
			Seq: seq, At: r.At, Node: r.Node, From: r.FromState, To: r.ToState,
			Generation: int(r.Generation), Attempt: int(r.Attempt), Detail: r.Detail,
		})
	}
	if !p.Desc {
		rows, err := s.q.RunHistoryPageAsc(ctx, queries.RunHistoryPageAscParams{
			TenantID: tenantID, RunID: runID, AfterSeq: p.After, Node: p.Node, Kind: p.Kind, MaxRows: int32(p.Limit),
		})
		if err != nil {
			return nil, fmt.Errorf("load history: %w", err)
		}
		for _, r := range rows {
			add(r.Seq, r)
		}
		return out, nil
	}
	before := p.Before
	if before <= 0 {
		before = math.MaxInt64
	}
	rows, err := s.q.RunHistoryPageDesc(ctx, queries.RunHistoryPageDescParams{
		TenantID: tenantID, RunID: runID, BeforeSeq: before, Node: p.Node, Kind: p.Kind, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, fmt.Errorf("load history: %w", err)
	}
	for _, r := range rows {
		add(r.Seq, queries.RunHistoryPageAscRow(r))
	}
	return out, nil
}
