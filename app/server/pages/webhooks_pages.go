package pages

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/webhook"
	"github.com/ductor/ductor/views"
)

// handleWebhooksPage lists the webhooks; after one was created or
// rotated (?secret=ID) it shows that secret, once.
func handleWebhooksPage(d Deps) echo.HandlerFunc {
	return func(c echo.Context) error {
		data := views.WebhooksData{}
		if id := c.QueryParam("secret"); id != "" {
			if f, ok := httpx.TakeFlash(c, "/webhooks"); ok && f.ID == id {
				data.NewID, data.NewSecret = id, f.Secret
			} else {
				data.ShownBefore = id
			}
		}
		return renderWebhooks(c, d, http.StatusOK, data)
	}
}

// renderWebhooks lists the webhooks, each with the runs its last
// delivery's event started.
func renderWebhooks(c echo.Context, d Deps, status int, data views.WebhooksData) error {
	v, ctx := httpx.ViewerOf(c), c.Request().Context()
	list, err := d.Store.WebhookList(ctx, v.Tenant.ID, "", httpx.MaxPage)
	if err != nil {
		return err
	}
	for _, w := range list {
		row := views.WebhookRow{Webhook: w, URL: httpx.HookURL(c, d.BaseURL, v.Tenant.Slug, w.ID)}
		if w.LastEventID != nil {
			attrs := map[string]any{"event_id": w.LastEventID.String()}
			if row.Runs, err = d.Store.RunList(ctx, v.Tenant.ID, store.RunFilter{Attributes: attrs, Limit: 5}); err != nil {
				return err
			}
		}
		data.Webhooks = append(data.Webhooks, row)
	}
	data.CanManage = v.Can(auth.PermWebhooksManage)
	return httpx.Render(c, status, views.WebhooksPage(shellFor(c, "Webhooks", "triggers"), data))
}

// handleWebhookCreateForm creates a webhook and redirects to the list,
// which shows its secret once.
func handleWebhookCreateForm(d Deps) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
		id, event := strings.TrimSpace(c.FormValue("id")), strings.TrimSpace(c.FormValue("event"))
		scheme, err := webhook.ParseScheme(c.FormValue("scheme"))
		switch {
		case err != nil:
			err = apperr.New(apperr.Invalid, "%v", err)
		case !definition.IDPattern.MatchString(id):
			err = apperr.New(apperr.Invalid, "the id must be letters, digits, dots, dashes or underscores")
		case event == "" || len(event) > 128:
			err = apperr.New(apperr.Invalid, "the event name is required (at most 128 characters)")
		default:
			err = httpx.NeedBox(d.Secrets)
		}
		secret := webhook.NewSecret()
		if err == nil {
			_, err = httpx.WebhookCreate(c, d.Store, store.Webhook{
				TenantID: v.Tenant.ID, ID: id, Event: event, Scheme: string(scheme),
				Secret: d.Secrets.Seal([]byte(secret), store.WebhookAAD(v.Tenant.ID, id)), SecretHint: webhook.Hint(secret),
			})
		}
		if err != nil {
			return httpx.FormError(c, err, func(status int, msg string) error {
				return renderWebhooks(c, d, status, views.WebhooksData{Error: msg})
			})
		}
		return secretShown(c, id, secret)
	}
}

func handleWebhookRotateForm(d Deps) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.NeedBox(d.Secrets); err != nil {
			return err
		}
		v, id, secret := httpx.ViewerOf(c), c.Param("id"), webhook.NewSecret()
		sealed := d.Secrets.Seal([]byte(secret), store.WebhookAAD(v.Tenant.ID, id))
		if _, err := httpx.WebhookRotate(c, d.Store, v.Tenant.ID, id, sealed, webhook.Hint(secret)); err != nil {
			return err
		}
		return secretShown(c, id, secret)
	}
}

func handleWebhookDeleteForm(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.WebhookDelete(c, s, httpx.ViewerOf(c).Tenant.ID, c.Param("id")); err != nil {
			return err
		}
		return seeOther(c, "/webhooks")
	}
}

// secretShown redirects to the list to show a webhook's new secret once.
func secretShown(c echo.Context, id, secret string) error {
	httpx.SetFlash(c, "/webhooks", httpx.Flash{ID: id, Secret: secret})
	return seeOther(c, "/webhooks?secret="+url.QueryEscape(id))
}
