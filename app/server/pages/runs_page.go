package pages

import (
	"net/http"
	"net/url"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

const (
	// runsPageRows is the runs list's page size.
	runsPageRows = 50
	// runsPickerKeys bounds the definition keys the picker offers.
	runsPickerKeys = 200
	// runsBatchRows is how many recent bulk operations the list shows.
	runsBatchRows = 3
)

// handleRunsPage lists the tenant's runs newest first with the list's
// filters (RunQuery) and its total (counted up to 1,000, estimated past
// that), paged by
// keyset cursors both ways: every page is one indexed range scan, however
// many runs the tenant has. Operators select runs, or every run the
// filter matches, for a bulk cancel or retry.
func handleRunsPage(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		d := views.RunsData{Query: c.QueryParams(), Now: time.Now(), CanOperate: v.Can(auth.PermRunsOperate)}
		err := loadRunsPage(c, s, &d)
		if err != nil {
			return httpx.FormError(c, err, func(status int, msg string) error {
				d.Error = msg
				return httpx.Render(c, status, views.RunsPage(shellFor(c, "Runs", "runs"), d))
			})
		}
		if d.Batches, err = s.BatchList(ctx, v.Tenant.ID, runsBatchRows); err != nil {
			return err
		}
		return httpx.Render(c, http.StatusOK, views.RunsPage(shellFor(c, "Runs", "runs"), d))
	}
}

// loadRunsPage reads the picker's keys, the page and the total.
func loadRunsPage(c echo.Context, s *store.Store, d *views.RunsData) error {
	ctx, v := c.Request().Context(), httpx.ViewerOf(c)
	defs, err := s.DefinitionList(ctx, v.Tenant.ID, "", runsPickerKeys)
	if err != nil {
		return err
	}
	for _, def := range defs {
		d.Definitions = append(d.Definitions, def.Key)
	}
	rq, err := httpx.RunQueryOf(d.Query)
	if err != nil {
		return err
	}
	f, err := rq.Filter(ctx, s, v.Tenant.ID)
	if err != nil {
		return err
	}
	cur, err := httpx.CursorParam(d.Query.Get("cursor"))
	if err != nil {
		return err
	}
	page, err := httpx.LoadRunPage(ctx, s, v.Tenant.ID, f, cur, runsPageRows)
	if err != nil {
		return err
	}
	d.Runs, d.Paged = page.Runs, cur != nil
	slug := v.Tenant.Slug
	d.NextURL, d.PrevURL = runsPageURL(slug, d.Query, page.Next), runsPageURL(slug, d.Query, page.Prev)
	if cur != nil {
		d.FirstURL = "/t/" + slug + "/runs?" + filterQuery(d.Query).Encode()
	}
	d.Filter = filterQuery(d.Query).Encode()
	d.Total, d.TotalEstimated, err = httpx.RunTotal(ctx, s, v.Tenant.ID, f)
	return err
}

// filterQuery is the query without paging: what a bulk operation by
// filter and the page links carry.
func filterQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		if k != "cursor" && k != "limit" && k != "done" && len(v) > 0 && v[0] != "" {
			out[k] = v
		}
	}
	return out
}

// runsPageURL is the list with the same filters and another cursor; ""
// when there is no such page (no cursor).
func runsPageURL(slug string, q url.Values, cursor string) string {
	if cursor == "" {
		return ""
	}
	out := filterQuery(q)
	out.Set("cursor", cursor)
	return "/t/" + slug + "/runs?" + out.Encode()
}

// exactCountCap bounds the exact count a bulk operation's confirmation
// asks for: the list itself counts up to 1,000 and estimates past that.
const exactCountCap = 100_000

// handleRunsCount counts the runs the list's filter matches, exactly up
// to exactCountCap, for the confirmation of a bulk operation by filter,
// which must not act on "about" a number.
func handleRunsCount(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		rq, err := httpx.RunQueryOf(c.QueryParams())
		if err != nil {
			return err
		}
		f, err := rq.Filter(ctx, s, v.Tenant.ID)
		if err != nil {
			return err
		}
		n, err := s.RunCount(ctx, v.Tenant.ID, f, exactCountCap+1)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, map[string]any{"count": min(n, exactCountCap), "more": n > exactCountCap})
	}
}
