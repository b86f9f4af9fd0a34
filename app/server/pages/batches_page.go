package pages

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleRunsBatchForm starts a bulk operation from the runs list: on the
// selected runs (run_id), or on every run the list's filter matches
// (scope=filter), then shows its progress (post/redirect/get).
func handleRunsBatchForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		filter, _ := url.ParseQuery(c.FormValue("filter"))
		b, err := batchFromForm(c, s, filter)
		if err == nil {
			b, err = rs.Batches.Create(ctx, b)
		}
		if err != nil {
			return httpx.FormError(c, err, func(status int, msg string) error {
				d := views.RunsData{Query: filter, Now: time.Now(), CanOperate: v.Can(auth.PermRunsOperate)}
				if lerr := loadRunsPage(c, s, &d); lerr != nil {
					return lerr
				}
				d.Error = msg
				return httpx.Render(c, status, views.RunsPage(shellFor(c, "Runs", "runs"), d))
			})
		}
		path := "/batches/" + b.ID.String()
		if len(filter) > 0 {
			path += "?" + url.Values{"runs": {filter.Encode()}}.Encode()
		}
		return seeOther(c, path)
	}
}

func batchFromForm(c echo.Context, s *store.Store, filter url.Values) (store.Batch, error) {
	v := httpx.ViewerOf(c)
	req := httpx.BatchRequest{Action: c.FormValue("action"), Reason: strings.TrimSpace(c.FormValue("reason"))}
	if c.FormValue("scope") == "filter" {
		rq, err := httpx.RunQueryOf(filter)
		if err != nil {
			return store.Batch{}, err
		}
		req.Filter = &rq
	} else {
		form, err := c.FormParams()
		if err != nil {
			return store.Batch{}, apperr.New(apperr.Invalid, "malformed form")
		}
		for _, raw := range form["run_id"] {
			id, err := uuid.Parse(raw)
			if err != nil {
				return store.Batch{}, apperr.New(apperr.Invalid, "%q is not a run id", raw)
			}
			req.RunIDs = append(req.RunIDs, id)
		}
		if len(req.RunIDs) == 0 {
			return store.Batch{}, apperr.New(apperr.Invalid, "select runs, or every run matching the filter")
		}
	}
	return httpx.NewBatch(c.Request().Context(), s, v.Tenant.ID, req, v.Actor())
}

// handleBatchPage shows a bulk operation's progress.
func handleBatchPage(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		b, err := viewerBatch(c, s)
		if err != nil {
			return err
		}
		return renderBatch(c, http.StatusOK, b, runsBack(c.QueryParam("runs")), "")
	}
}

func renderBatch(c echo.Context, status int, b store.Batch, back, msg string) error {
	d := views.BatchData{Batch: b, Back: back, CanOperate: httpx.ViewerOf(c).Can(auth.PermRunsOperate), Error: msg}
	return httpx.Render(c, status, views.BatchPage(shellFor(c, "Bulk "+b.Action, "runs"), d))
}

// handleBatchStopForm stops a running bulk operation and shows it again
// (post/redirect/get); one that has already ended is shown with why.
func handleBatchStopForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, back := httpx.ViewerOf(c), runsBack(c.FormValue("runs"))
		b, err := viewerBatch(c, s)
		if err != nil {
			return err
		}
		if _, err := rs.Batches.Stop(c.Request().Context(), v.Tenant.ID, b.ID, v.Actor()); err != nil {
			return httpx.FormError(c, err, func(status int, msg string) error {
				if b, err = viewerBatch(c, s); err != nil {
					return err
				}
				return renderBatch(c, status, b, back, msg)
			})
		}
		path := "/batches/" + b.ID.String()
		if back != "" {
			path += "?" + url.Values{"runs": {back}}.Encode()
		}
		return seeOther(c, path)
	}
}

// handleBatchProgress answers the batch page's script: the batch as the
// API shows it.
func handleBatchProgress(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		b, err := viewerBatch(c, s)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, httpx.BatchJSONOf(b))
	}
}

func viewerBatch(c echo.Context, s *store.Store) (store.Batch, error) {
	id, err := httpx.PathUUID(c, "id", "batch")
	if err != nil {
		return store.Batch{}, err
	}
	return s.BatchGet(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID, id)
}

// runsBack is the runs list's query string the batch was started from,
// for the batch page's way back: its filter, as the list carries it.
func runsBack(raw string) string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return ""
	}
	return filterQuery(q).Encode()
}
