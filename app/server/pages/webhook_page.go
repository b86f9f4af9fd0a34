package pages

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleWebhookPage shows a webhook and its delivery log, newest first
// (?result=accepted or refused keeps one kind): every result the log
// keeps, accepted or refused with why, and the runs an accepted one
// started.
func handleWebhookPage(d Deps) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, ctx := httpx.ViewerOf(c), c.Request().Context()
		data := views.WebhookData{Result: c.QueryParam("result")}
		var refused *bool
		switch data.Result {
		case "":
		case "accepted", "refused":
			r := data.Result == "refused"
			refused = &r
		default:
			return apperr.New(apperr.Invalid, `result must be "accepted" or "refused"`)
		}
		w, err := d.Store.WebhookGet(ctx, v.Tenant.ID, c.Param("id"))
		if err != nil {
			return err
		}
		data.Webhook, data.URL = w, httpx.HookURL(c, d.BaseURL, v.Tenant.Slug, w.ID)
		if data.Deliveries, err = d.Store.WebhookDeliveries(ctx, v.Tenant.ID, w.ID, refused, 0, 2*store.WebhookDeliveryLog); err != nil {
			return err
		}
		return httpx.Render(c, http.StatusOK, views.WebhookPage(shellFor(c, "Webhook "+w.ID, "triggers"), data))
	}
}
