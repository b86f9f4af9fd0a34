package pages

import (
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/usage"
	"github.com/ductor/ductor/views"
)

// handleUsagePage shows a month of the tenant's use (?month=YYYY-MM, this
// month by default), a chart a metric, and its quotas now.
func handleUsagePage(u *usage.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		month := store.MonthStart(time.Now())
		if q := c.QueryParam("month"); q != "" {
			m, err := time.Parse("2006-01", q)
			if err != nil {
				return apperr.New(apperr.Invalid, "month must be YYYY-MM, not %q", q)
			}
			month = m
		}
		r, err := u.Read(ctx, v.Tenant.ID, month, month.AddDate(0, 1, 0), usage.GroupByDay)
		if err != nil {
			return err
		}
		state, err := u.State(ctx, v.Tenant.ID)
		if err != nil {
			return err
		}
		d := views.NewUsageData(month, r.Days)
		d.Quotas = quotaLines(state)
		return httpx.Render(c, 200, views.UsagePage(shellFor(c, "Usage", "usage"), d))
	}
}

func quotaLines(st usage.State) []views.UsageQuota {
	out := make([]views.UsageQuota, len(st.Quotas))
	for i, q := range st.Quotas {
		line := views.UsageQuota{Name: q.Quota, Used: strconv.FormatInt(q.Used, 10), Limit: "none", State: q.State}
		if q.Limit != nil {
			line.Limit = strconv.FormatInt(*q.Limit, 10)
			line.Percent = 100
			if *q.Limit > 0 {
				line.Percent = int(min(100, q.Used*100 / *q.Limit))
			}
		}
		out[i] = line
	}
	return out
}
