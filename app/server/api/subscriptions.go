package api

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
)

// SubscriptionJSON is an outbound webhook subscription as the API shows
// it; Secret only in the answer that creates or rotates it.
type SubscriptionJSON struct {
	ID             string     `json:"id"`
	URL            string     `json:"url"`
	Events         []string   `json:"events"`
	FilterExpr     string     `json:"filter_expr"`
	Description    string     `json:"description"`
	Secret         string     `json:"secret,omitempty"`
	Failures       int        `json:"failures"`
	Disabled       bool       `json:"disabled"`
	DisabledAt     *time.Time `json:"disabled_at"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
	PreviousUntil  *time.Time `json:"previous_secret_until"`
	CreatedAt      time.Time  `json:"created_at"`
}

func subscriptionJSON(s store.Subscription) SubscriptionJSON {
	out := SubscriptionJSON{
		ID: s.ID.String(), URL: s.Url, Events: s.Events, FilterExpr: s.FilterExpr, Description: s.Description,
		Failures: int(s.Failures), Disabled: s.DisabledAt != nil, DisabledAt: s.DisabledAt, DisabledReason: s.DisabledReason,
		CreatedAt: s.CreatedAt,
	}
	if s.PreviousUntil != nil && s.PreviousUntil.After(time.Now()) {
		out.PreviousUntil = s.PreviousUntil
	}
	return out
}

// SubscriptionDeliveryJSON is one event's delivery to a subscription,
// with its attempts: the delivery log.
type SubscriptionDeliveryJSON struct {
	ID         string                    `json:"id"`
	EventID    string                    `json:"event_id"`
	Event      string                    `json:"event"`
	Status     string                    `json:"status"`
	Attempts   []SubscriptionAttemptJSON `json:"attempts"`
	NextAt     *time.Time                `json:"next_attempt_at"`
	CreatedAt  time.Time                 `json:"created_at"`
	FinishedAt *time.Time                `json:"finished_at"`
}

// SubscriptionAttemptJSON is one request of a delivery.
type SubscriptionAttemptJSON struct {
	Attempt   int       `json:"attempt"`
	At        time.Time `json:"at"`
	Status    int       `json:"status"`
	LatencyMS int       `json:"latency_ms"`
	Response  string    `json:"response_excerpt"`
	Error     string    `json:"error,omitempty"`
}

func deliveryJSON(d subscriptions.Delivery) SubscriptionDeliveryJSON {
	out := SubscriptionDeliveryJSON{
		ID: d.ID.String(), EventID: d.EventID.String(), Event: d.EventName, Status: d.Status,
		Attempts: make([]SubscriptionAttemptJSON, len(d.Attempts)), CreatedAt: d.CreatedAt, FinishedAt: d.FinishedAt,
	}
	if d.Status == "pending" {
		next := d.NextAt
		out.NextAt = &next
	}
	for i, a := range d.Attempts {
		out.Attempts[i] = SubscriptionAttemptJSON{
			Attempt: int(a.Attempt), At: a.At, Status: int(a.StatusCode), LatencyMS: int(a.LatencyMs),
			Response: a.ResponseExcerpt, Error: a.Error,
		}
	}
	return out
}

// needSubscriptions answers 503 in a server built without them.
func needSubscriptions(svc *subscriptions.Service) error {
	if svc == nil {
		return apperr.New(apperr.Unavailable, "subscriptions are not available on this server")
	}
	return nil
}

// handleSubscriptionCreate creates a subscription: 201 with its secret,
// shown this once.
func handleSubscriptionCreate(svc *subscriptions.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := needSubscriptions(svc); err != nil {
			return err
		}
		var in subscriptions.Input
		if err := httpx.BindJSON(c, &in); err != nil {
			return err
		}
		created, err := svc.Create(c.Request().Context(), httpx.TenantOf(c), in)
		if err != nil {
			return err
		}
		out := subscriptionJSON(created.Subscription)
		out.Secret = created.Secret
		return c.JSON(http.StatusCreated, out)
	}
}

// handleSubscriptionList lists the tenant's subscriptions (?limit=, at
// most 100, a tenant's most).
func handleSubscriptionList(svc *subscriptions.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := needSubscriptions(svc); err != nil {
			return err
		}
		limit, err := httpx.LimitParam(c)
		if err != nil {
			return err
		}
		list, err := svc.List(c.Request().Context(), httpx.TenantOf(c), uuid.Nil, min(limit, subscriptions.MaxPerTenant))
		if err != nil {
			return err
		}
		out := make([]SubscriptionJSON, len(list))
		for i, s := range list {
			out[i] = subscriptionJSON(s)
		}
		return c.JSON(http.StatusOK, map[string]any{"subscriptions": out})
	}
}

// subscriptionAction handles a route on one subscription.
func subscriptionAction(svc *subscriptions.Service, do func(c echo.Context, id uuid.UUID) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := needSubscriptions(svc); err != nil {
			return err
		}
		id, err := httpx.PathUUID(c, "id", "subscription")
		if err != nil {
			return err
		}
		return do(c, id)
	}
}

func handleSubscriptionGet(svc *subscriptions.Service) echo.HandlerFunc {
	return subscriptionAction(svc, func(c echo.Context, id uuid.UUID) error {
		s, err := svc.Get(c.Request().Context(), httpx.TenantOf(c), id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, subscriptionJSON(s))
	})
}

func handleSubscriptionDelete(svc *subscriptions.Service) echo.HandlerFunc {
	return subscriptionAction(svc, func(c echo.Context, id uuid.UUID) error {
		if err := svc.Delete(c.Request().Context(), httpx.TenantOf(c), id); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"id": id, "deleted": true})
	})
}

// handleSubscriptionRotate gives a subscription a new secret, shown this
// once; the previous one still signs alongside for a day.
func handleSubscriptionRotate(svc *subscriptions.Service) echo.HandlerFunc {
	return subscriptionAction(svc, func(c echo.Context, id uuid.UUID) error {
		created, err := svc.Rotate(c.Request().Context(), httpx.TenantOf(c), id)
		if err != nil {
			return err
		}
		out := subscriptionJSON(created.Subscription)
		out.Secret = created.Secret
		return c.JSON(http.StatusOK, out)
	})
}

// handleSubscriptionEnable enables a subscription disabled after failures.
func handleSubscriptionEnable(svc *subscriptions.Service) echo.HandlerFunc {
	return subscriptionAction(svc, func(c echo.Context, id uuid.UUID) error {
		s, err := svc.Enable(c.Request().Context(), httpx.TenantOf(c), id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, subscriptionJSON(s))
	})
}

// handleSubscriptionDeliveries lists a subscription's newest deliveries
// with their attempts (?limit=, at most 100).
func handleSubscriptionDeliveries(svc *subscriptions.Service) echo.HandlerFunc {
	return subscriptionAction(svc, func(c echo.Context, id uuid.UUID) error {
		limit, err := httpx.LimitParam(c)
		if err != nil {
			return err
		}
		ds, err := svc.Deliveries(c.Request().Context(), httpx.TenantOf(c), id, min(limit, 100))
		if err != nil {
			return err
		}
		out := make([]SubscriptionDeliveryJSON, len(ds))
		for i, d := range ds {
			out[i] = deliveryJSON(d)
		}
		return c.JSON(http.StatusOK, map[string]any{"deliveries": out})
	})
}

// handleSubscriptionRedeliver sends a finished delivery again: 202.
func handleSubscriptionRedeliver(svc *subscriptions.Service) echo.HandlerFunc {
	return subscriptionAction(svc, func(c echo.Context, id uuid.UUID) error {
		delivery, err := httpx.PathUUID(c, "delivery", "delivery")
		if err != nil {
			return err
		}
		if err := svc.Redeliver(c.Request().Context(), httpx.TenantOf(c), id, delivery); err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]any{"id": delivery, "status": "pending"})
	})
}
