package server

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// runsPageRows is the runs list's page size.
const runsPageRows = 50

// handleRunsPage lists the tenant's runs newest first with the API's
// filters (status, definition, subject, parent_run_id, attr.NAME) plus
// attrs ("name=value" pairs), from and to (UTC times), paged by the same
// keyset cursor: every page is one indexed range scan, however many runs
// the tenant has.
func handleRunsPage(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		d := views.RunsData{Query: c.QueryParams()}
		f, err := runsPageFilter(c, &d)
		if err != nil {
			return formError(c, err, func(status int, msg string) error {
				d.Error = msg
				return render(c, status, views.RunsPage(shellFor(c, "Runs", "runs"), d))
			})
		}
		runs, err := s.RunList(c.Request().Context(), viewerOf(c).Tenant.ID, f)
		if err != nil {
			return err
		}
		var next string
		d.Runs, next = pageRuns(runs, d.From)
		if next != "" {
			d.NextURL = runsPageURL(viewerOf(c).Tenant.Slug, d.Query, next)
		}
		if d.Query.Get("cursor") != "" {
			d.FirstURL = runsPageURL(viewerOf(c).Tenant.Slug, d.Query, "")
		}
		return render(c, http.StatusOK, views.RunsPage(shellFor(c, "Runs", "runs"), d))
	}
}

// runsPageFilter reads the filter; one more row than a page is asked for
// to learn whether there is a next page.
func runsPageFilter(c echo.Context, d *views.RunsData) (store.RunFilter, error) {
	f, err := runFilter(c)
	if err != nil {
		return f, err
	}
	f.Limit = runsPageRows + 1
	if f.Attributes, err = attrsParam(d.Query.Get("attrs"), f.Attributes); err != nil {
		return f, err
	}
	if d.From, err = timeParam("from", d.Query.Get("from")); err != nil {
		return f, err
	}
	to, err := timeParam("to", d.Query.Get("to"))
	if err != nil {
		return f, err
	}
	if f.Before == nil && !to.IsZero() {
		f.Before = &store.RunCursor{CreatedAt: to, ID: uuid.Max}
	}
	return f, nil
}

// attrsParam adds "name=value" pairs (space or comma separated) to the
// attribute filter; a value that is a JSON number or boolean matches that
// JSON value, anything else matches the string.
func attrsParam(raw string, into map[string]any) (map[string]any, error) {
	for _, pair := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' }) {
		name, value, ok := strings.Cut(pair, "=")
		if !ok || name == "" {
			return nil, apperr.New(apperr.Invalid, "attributes are name=value pairs, not %q", pair)
		}
		if into == nil {
			into = map[string]any{}
		}
		v, err := jsonvalue.Decode([]byte(value))
		if err != nil || !scalar(v) {
			v = value
		}
		into[name] = v
	}
	return into, nil
}

func scalar(v any) bool {
	switch v.(type) {
	case int64, float64, bool:
		return true
	}
	return false
}

// timeParam parses a datetime-local value (UTC) or RFC 3339; empty is
// the zero time.
func timeParam(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, apperr.New(apperr.Invalid, "%s must be a time like 2006-01-02T15:04 (UTC)", name)
}

// pageRuns cuts the extra row into the next cursor, and stops at the
// first run older than from: the order is newest first, so no later run
// can match.
func pageRuns(runs []store.Run, from time.Time) ([]store.Run, string) {
	for i, r := range runs {
		if !from.IsZero() && r.CreatedAt.Before(from) {
			return runs[:i], ""
		}
	}
	if len(runs) <= runsPageRows {
		return runs, ""
	}
	runs = runs[:runsPageRows]
	last := runs[len(runs)-1]
	return runs, encodeCursor(store.RunCursor{CreatedAt: last.CreatedAt, ID: last.ID})
}

// runsPageURL is the list with the same filters and another cursor.
func runsPageURL(slug string, q url.Values, cursor string) string {
	out := url.Values{}
	for k, v := range q {
		if k != "cursor" && k != "limit" && len(v) > 0 && v[0] != "" {
			out[k] = v
		}
	}
	if cursor != "" {
		out.Set("cursor", cursor)
	}
	return "/t/" + slug + "/runs?" + out.Encode()
}
