package server

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

const (
	defaultPage = 50
	maxPage     = 500
)

// handleRunList lists runs newest first with filters status, definition,
// subject, parent_run_id and attr.NAME=VALUE, paged by an opaque cursor,
// as summaries (see RunSummaryJSON).
func handleRunList(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		f, err := runFilter(c)
		if err != nil {
			return err
		}
		include, err := includeParam(c)
		if err != nil {
			return err
		}
		f.Limit++
		runs, err := s.RunList(c.Request().Context(), tenantOf(c), f)
		if err != nil {
			return err
		}
		resp := map[string]any{}
		if len(runs) == f.Limit {
			runs = runs[:f.Limit-1]
			last := runs[len(runs)-1]
			resp["next_cursor"] = encodeCursor(store.RunCursor{CreatedAt: last.CreatedAt, ID: last.ID})
		}
		out := make([]RunSummaryJSON, len(runs))
		for i, r := range runs {
			out[i] = runSummary(r, include)
		}
		resp["runs"] = out
		return c.JSON(http.StatusOK, resp)
	}
}

func runFilter(c echo.Context) (store.RunFilter, error) {
	q := c.QueryParams()
	f := store.RunFilter{Status: q.Get("status"), Definition: q.Get("definition"), Subject: q.Get("subject")}
	if p := q.Get("parent_run_id"); p != "" {
		id, err := uuid.Parse(p)
		if err != nil {
			return f, apperr.New(apperr.Invalid, "parent_run_id %q is not a run id", p)
		}
		f.ParentID = &id
	}
	for name, values := range q {
		if attr, ok := strings.CutPrefix(name, "attr."); ok && attr != "" {
			if f.Attributes == nil {
				f.Attributes = map[string]any{}
			}
			f.Attributes[attr] = values[0]
		}
	}
	var err error
	if f.Limit, err = limitParam(c); err != nil {
		return f, err
	}
	if cur := q.Get("cursor"); cur != "" {
		rc, err := decodeCursor(cur)
		if err != nil {
			return f, err
		}
		f.Before = &rc
	}
	return f, nil
}

func limitParam(c echo.Context) (int, error) {
	v := c.QueryParam("limit")
	if v == "" {
		return defaultPage, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPage {
		return 0, apperr.New(apperr.Invalid, "limit must be between 1 and %d", maxPage)
	}
	return n, nil
}

// pageParams reads after (a sequence number) and limit.
func pageParams(c echo.Context) (int64, int, error) {
	limit, err := limitParam(c)
	if err != nil {
		return 0, 0, err
	}
	v := c.QueryParam("after")
	if v == "" {
		return 0, limit, nil
	}
	after, err := strconv.ParseInt(v, 10, 64)
	if err != nil || after < 0 {
		return 0, 0, apperr.New(apperr.Invalid, "after must be a sequence number")
	}
	return after, limit, nil
}

func encodeCursor(rc store.RunCursor) string {
	raw := fmt.Sprintf("%d:%s", rc.CreatedAt.UnixMicro(), rc.ID)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeCursor(s string) (store.RunCursor, error) {
	bad := apperr.New(apperr.Invalid, "malformed cursor")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return store.RunCursor{}, bad
	}
	ts, id, ok := strings.Cut(string(raw), ":")
	micros, err1 := strconv.ParseInt(ts, 10, 64)
	uid, err2 := uuid.Parse(id)
	if !ok || err1 != nil || err2 != nil {
		return store.RunCursor{}, bad
	}
	return store.RunCursor{CreatedAt: time.UnixMicro(micros).UTC(), ID: uid}, nil
}
