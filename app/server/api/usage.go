package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/usage"
)

// UsageResponse is the answer of GET /api/v1/usage: the tenant's use over
// [from, to) in total and per day or per definition, and its quotas now.
type UsageResponse struct {
	From        string            `json:"from"`
	To          string            `json:"to"`
	GroupBy     string            `json:"group_by"`
	Total       store.Usage       `json:"total"`
	Days        []UsageDayJSON    `json:"days,omitempty"`
	Definitions []UsageDefinition `json:"definitions,omitempty"`
	Quota       usage.State       `json:"quota"`
}

// UsageDayJSON is one UTC day of use.
type UsageDayJSON struct {
	Day string `json:"day"`
	store.Usage
}

// UsageDefinition is one definition's use.
type UsageDefinition struct {
	Definition string `json:"definition"`
	store.Usage
}

// handleUsage reads the key's tenant's use: from and to are UTC days
// (YYYY-MM-DD, to excluded; the current month by default), group_by day
// (the default) or definition.
func handleUsage(u *usage.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, _ := httpx.PrincipalOf(c)
		from, to, err := usagePeriod(c.QueryParam("from"), c.QueryParam("to"), time.Now())
		if err != nil {
			return err
		}
		groupBy := c.QueryParam("group_by")
		if groupBy == "" {
			groupBy = usage.GroupByDay
		}
		ctx := c.Request().Context()
		r, err := u.Read(ctx, p.Key.TenantID, from, to, groupBy)
		if err != nil {
			return err
		}
		state, err := u.State(ctx, p.Key.TenantID)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, usageResponse(r, state))
	}
}

func usageResponse(r usage.Report, state usage.State) UsageResponse {
	out := UsageResponse{From: r.From.Format(time.DateOnly), To: r.To.Format(time.DateOnly),
		GroupBy: r.GroupBy, Total: r.Total, Quota: state}
	for _, d := range r.Days {
		out.Days = append(out.Days, UsageDayJSON{Day: d.Day.Format(time.DateOnly), Usage: d.Usage})
	}
	for _, d := range r.Definitions {
		out.Definitions = append(out.Definitions, UsageDefinition{Definition: d.Definition, Usage: d.Usage})
	}
	return out
}

// usagePeriod parses a period of UTC days; either end left out is the
// current month's.
func usagePeriod(fromQ, toQ string, now time.Time) (from, to time.Time, err error) {
	from = store.MonthStart(now)
	to = from.AddDate(0, 1, 0)
	if fromQ != "" {
		if from, err = time.Parse(time.DateOnly, fromQ); err != nil {
			return from, to, apperr.New(apperr.Invalid, "from must be a day, YYYY-MM-DD, not %q", fromQ)
		}
	}
	if toQ != "" {
		if to, err = time.Parse(time.DateOnly, toQ); err != nil {
			return from, to, apperr.New(apperr.Invalid, "to must be a day, YYYY-MM-DD, not %q", toQ)
		}
	}
	return from, to, usage.CheckRange(from, to, usage.GroupByDay)
}
