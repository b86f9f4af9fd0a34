package httpx

import (
	"context"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/server/httpx/paging"
	"github.com/ductor/ductor/app/store"
)

// PageCursor is where a page of the runs list starts: before a run (the
// next, older page) or after it (the previous, newer page).
type PageCursor struct {
	at    store.RunCursor
	newer bool
}

// RunPage is one page of runs, newest first, with the cursors of the
// pages beside it ("": none).
type RunPage struct {
	Runs       []store.Run
	Next, Prev string
}

// LoadRunPage reads the page of runs matching f that cur points at
// (nil: the newest), at most limit of them, asking for one more to learn
// whether the page beyond exists.
func LoadRunPage(ctx context.Context, s *store.Store, tenantID uuid.UUID, f store.RunFilter, cur *PageCursor, limit int) (RunPage, error) {
	f.Limit = limit + 1
	if cur != nil && cur.newer {
		runs, err := s.RunListNewer(ctx, tenantID, f, cur.at)
		if err != nil {
			return RunPage{}, err
		}
		p := RunPage{Runs: runs}
		if len(runs) > limit {
			p.Runs = runs[1:]
			p.Prev = encodePageCursor(p.Runs[0], true)
		}
		if len(p.Runs) > 0 {
			p.Next = encodePageCursor(p.Runs[len(p.Runs)-1], false)
		}
		return p, nil
	}
	if cur != nil && (f.Before == nil || before(cur.at, *f.Before)) {
		f.Before = &cur.at
	}
	runs, err := s.RunList(ctx, tenantID, f)
	if err != nil {
		return RunPage{}, err
	}
	p := RunPage{Runs: runs}
	if len(runs) > limit {
		p.Runs = runs[:limit]
		p.Next = encodePageCursor(p.Runs[limit-1], false)
	}
	if cur != nil && len(p.Runs) > 0 {
		p.Prev = encodePageCursor(p.Runs[0], true)
	}
	return p, nil
}

func before(a, b store.RunCursor) bool {
	return a.CreatedAt.Before(b.CreatedAt) || (a.CreatedAt.Equal(b.CreatedAt) && a.ID.String() < b.ID.String())
}

func encodePageCursor(r store.Run, newer bool) string {
	return paging.EncodeTime(r.CreatedAt, r.ID, newer)
}

func decodeCursor(s string) (PageCursor, error) {
	at, id, newer, err := paging.DecodeTime(s)
	if err != nil {
		return PageCursor{}, err
	}
	return PageCursor{at: store.RunCursor{CreatedAt: at, ID: id}, newer: newer}, nil
}

// CursorParam reads ?cursor= (empty: nil).
func CursorParam(v string) (*PageCursor, error) {
	if v == "" {
		return nil, nil
	}
	c, err := decodeCursor(v)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// countCap is where a total stops being counted: past it, the list shows
// the planner's estimate.
const countCap = 1_000

// RunTotal counts the runs f matches exactly up to countCap and past it
// asks the planner: the total, and whether it is an estimate.
func RunTotal(ctx context.Context, s *store.Store, tenantID uuid.UUID, f store.RunFilter) (int, bool, error) {
	n, err := s.RunCount(ctx, tenantID, f, countCap+1)
	if err != nil || n <= countCap {
		return n, false, err
	}
	est, err := s.RunEstimate(ctx, tenantID, f)
	return max(est, n), true, err
}
