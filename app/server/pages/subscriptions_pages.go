package pages

import (
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/views"
)

func needSubscriptions(d Deps) error {
	if d.Subscriptions == nil {
		return apperr.New(apperr.Unavailable, "subscriptions are not available on this server")
	}
	return nil
}

// handleSubscriptionsPage lists the subscriptions; after one was created
// (?secret=ID) it shows its secret, once.
func handleSubscriptionsPage(d Deps) echo.HandlerFunc {
	return func(c echo.Context) error {
		data := views.SubscriptionsData{}
		if id := c.QueryParam("secret"); id != "" {
			if f, ok := httpx.TakeFlash(c, "/subscriptions"); ok && f.ID == id {
				data.NewID, data.NewSecret = id, f.Secret
			} else {
				data.ShownBefore = id
			}
		}
		return renderSubscriptions(c, d, http.StatusOK, data)
	}
}

func renderSubscriptions(c echo.Context, d Deps, status int, data views.SubscriptionsData) error {
	if err := needSubscriptions(d); err != nil {
		return err
	}
	v := httpx.ViewerOf(c)
	list, err := d.Subscriptions.List(c.Request().Context(), v.Tenant.ID, uuid.Nil, subscriptions.MaxPerTenant)
	if err != nil {
		return err
	}
	data.Subscriptions, data.CanManage, data.Available = list, v.Can(auth.PermWebhooksManage), d.Secrets != nil
	return httpx.Render(c, status, views.SubscriptionsPage(shellFor(c, "Subscriptions", "triggers"), data))
}

func handleSubscriptionCreateForm(d Deps) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := needSubscriptions(d); err != nil {
			return err
		}
		var events []string
		for _, e := range strings.Split(c.FormValue("events"), ",") {
			if e = strings.TrimSpace(e); e != "" {
				events = append(events, e)
			}
		}
		created, err := d.Subscriptions.Create(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID, subscriptions.Input{
			URL: strings.TrimSpace(c.FormValue("url")), Events: events,
			FilterExpr: strings.TrimSpace(c.FormValue("filter_expr")), Description: strings.TrimSpace(c.FormValue("description")),
		})
		if err != nil {
			return httpx.FormError(c, err, func(status int, msg string) error {
				return renderSubscriptions(c, d, status, views.SubscriptionsData{Error: msg})
			})
		}
		return subscriptionSecretShown(c, created)
	}
}

// subscriptionSecretShown redirects to the list to show a new secret once.
func subscriptionSecretShown(c echo.Context, created subscriptions.Created) error {
	id := created.ID.String()
	httpx.SetFlash(c, "/subscriptions", httpx.Flash{ID: id, Secret: created.Secret})
	return seeOther(c, "/subscriptions?secret="+id)
}

// subscriptionForm handles a form on one subscription.
func subscriptionForm(d Deps, do func(c echo.Context, tenantID, id uuid.UUID) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := needSubscriptions(d); err != nil {
			return err
		}
		id, err := httpx.PathUUID(c, "id", "subscription")
		if err != nil {
			return err
		}
		return do(c, httpx.ViewerOf(c).Tenant.ID, id)
	}
}

// handleSubscriptionPage shows a subscription and its newest deliveries,
// each with its attempts.
func handleSubscriptionPage(d Deps) echo.HandlerFunc {
	return subscriptionForm(d, func(c echo.Context, tenantID, id uuid.UUID) error {
		ctx := c.Request().Context()
		sub, err := d.Subscriptions.Get(ctx, tenantID, id)
		if err != nil {
			return err
		}
		ds, err := d.Subscriptions.Deliveries(ctx, tenantID, id, 100)
		if err != nil {
			return err
		}
		data := views.SubscriptionData{Subscription: sub, CanManage: httpx.ViewerOf(c).Can(auth.PermWebhooksManage)}
		for _, x := range ds {
			data.Deliveries = append(data.Deliveries, views.DeliveryRow{Delivery: x.SubscriptionDelivery, Attempts: x.Attempts})
		}
		return httpx.Render(c, http.StatusOK, views.SubscriptionPage(shellFor(c, "Subscription", "triggers"), data))
	})
}

func handleSubscriptionRotateForm(d Deps) echo.HandlerFunc {
	return subscriptionForm(d, func(c echo.Context, tenantID, id uuid.UUID) error {
		created, err := d.Subscriptions.Rotate(c.Request().Context(), tenantID, id)
		if err != nil {
			return err
		}
		return subscriptionSecretShown(c, created)
	})
}

func handleSubscriptionEnableForm(d Deps) echo.HandlerFunc {
	return subscriptionForm(d, func(c echo.Context, tenantID, id uuid.UUID) error {
		if _, err := d.Subscriptions.Enable(c.Request().Context(), tenantID, id); err != nil {
			return err
		}
		return seeOther(c, "/subscriptions/"+id.String())
	})
}

func handleSubscriptionDeleteForm(d Deps) echo.HandlerFunc {
	return subscriptionForm(d, func(c echo.Context, tenantID, id uuid.UUID) error {
		if err := d.Subscriptions.Delete(c.Request().Context(), tenantID, id); err != nil {
			return err
		}
		return seeOther(c, "/subscriptions")
	})
}

func handleSubscriptionRedeliverForm(d Deps) echo.HandlerFunc {
	return subscriptionForm(d, func(c echo.Context, tenantID, id uuid.UUID) error {
		delivery, err := httpx.PathUUID(c, "delivery", "delivery")
		if err != nil {
			return err
		}
		if err := d.Subscriptions.Redeliver(c.Request().Context(), tenantID, id, delivery); err != nil {
			return err
		}
		return seeOther(c, "/subscriptions/"+id.String())
	})
}
