package api

import (
	"net/http"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/webhook"
)

// WebhookJSON is a webhook as the API shows it; Secret only in the answer
// that creates or rotates it.
type WebhookJSON struct {
	ID           string        `json:"id"`
	Event        string        `json:"event"`
	Scheme       string        `json:"scheme"`
	URL          string        `json:"url"`
	Secret       string        `json:"secret,omitempty"`
	SecretHint   string        `json:"secret_hint"`
	Deliveries   int64         `json:"deliveries"`
	LastDelivery *DeliveryJSON `json:"last_delivery"`
	CreatedAt    time.Time     `json:"created_at"`
}

// DeliveryJSON is the result of a webhook's last delivery.
type DeliveryJSON struct {
	At      time.Time  `json:"at"`
	Outcome string     `json:"outcome"`
	Status  int        `json:"status"`
	EventID *uuid.UUID `json:"event_id"`
}

func webhookJSON(c echo.Context, base string, slug string, w store.Webhook) WebhookJSON {
	out := WebhookJSON{
		ID: w.ID, Event: w.Event, Scheme: w.Scheme, URL: httpx.HookURL(c, base, slug, w.ID), SecretHint: w.SecretHint,
		Deliveries: w.Deliveries, CreatedAt: w.CreatedAt,
	}
	if w.LastDeliveryAt != nil {
		out.LastDelivery = &DeliveryJSON{At: *w.LastDeliveryAt, Outcome: w.LastOutcome, Status: w.LastStatus, EventID: w.LastEventID}
	}
	return out
}

// handleWebhookCreate creates a webhook: 201 with its URL and its secret,
// shown this once.
func handleWebhookCreate(s *store.Store, box *secrets.Box, base string) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			ID     string `json:"id"`
			Event  string `json:"event"`
			Scheme string `json:"scheme"`
		}
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		scheme, err := webhook.ParseScheme(req.Scheme)
		switch {
		case err != nil:
			return apperr.New(apperr.Invalid, "%v", err)
		case !definition.IDPattern.MatchString(req.ID):
			return apperr.New(apperr.Invalid, "id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}, not %q", req.ID)
		case req.Event == "" || len(req.Event) > 128:
			return apperr.New(apperr.Invalid, "event is required (at most 128 characters)")
		}
		if err := httpx.NeedBox(box); err != nil {
			return err
		}
		tenantID, secret := httpx.TenantOf(c), webhook.NewSecret()
		w, err := httpx.WebhookCreate(c, s, store.Webhook{
			TenantID: tenantID, ID: req.ID, Event: req.Event, Scheme: string(scheme),
			Secret: box.Seal([]byte(secret), store.WebhookAAD(tenantID, req.ID)), SecretHint: webhook.Hint(secret),
		})
		if err != nil {
			return err
		}
		return answerSecret(c, s, base, w, secret, http.StatusCreated)
	}
}

func answerSecret(c echo.Context, s *store.Store, base string, w store.Webhook, secret string, status int) error {
	t, err := s.TenantGetByID(c.Request().Context(), w.TenantID)
	if err != nil {
		return err
	}
	out := webhookJSON(c, base, t.Slug, w)
	out.Secret = secret
	return c.JSON(status, out)
}

// handleWebhookRotate gives a webhook a new secret, shown this once; the
// previous one is still accepted for a day.
func handleWebhookRotate(s *store.Store, box *secrets.Box, base string) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.NeedBox(box); err != nil {
			return err
		}
		tenantID, id, secret := httpx.TenantOf(c), c.Param("id"), webhook.NewSecret()
		w, err := httpx.WebhookRotate(c, s, tenantID, id, box.Seal([]byte(secret), store.WebhookAAD(tenantID, id)), webhook.Hint(secret))
		if err != nil {
			return err
		}
		return answerSecret(c, s, base, w, secret, http.StatusOK)
	}
}

func handleWebhookList(s *store.Store, base string) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		list, resp, err := httpx.KeyedPage(c, func(after string, n int) ([]store.Webhook, error) {
			return s.WebhookList(ctx, httpx.TenantOf(c), after, n)
		}, func(w store.Webhook) string { return w.ID })
		if err != nil {
			return err
		}
		t, err := s.TenantGetByID(ctx, httpx.TenantOf(c))
		if err != nil {
			return err
		}
		out := make([]WebhookJSON, len(list))
		for i, w := range list {
			out[i] = webhookJSON(c, base, t.Slug, w)
		}
		resp["webhooks"] = out
		return c.JSON(http.StatusOK, resp)
	}
}

func handleWebhookGet(s *store.Store, base string) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		w, err := s.WebhookGet(ctx, httpx.TenantOf(c), c.Param("id"))
		if err != nil {
			return err
		}
		t, err := s.TenantGetByID(ctx, w.TenantID)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, webhookJSON(c, base, t.Slug, w))
	}
}

func handleWebhookDelete(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.WebhookDelete(c, s, httpx.TenantOf(c), c.Param("id")); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"id": c.Param("id"), "deleted": true})
	}
}

// WebhookDeliveryJSON is one result of a webhook's delivery log.
type WebhookDeliveryJSON struct {
	Seq    int64     `json:"seq"`
	At     time.Time `json:"at"`
	Result string    `json:"result"` // accepted or refused
	// Outcome is accepted, duplicate, bad_signature, stale_timestamp,
	// invalid_body, too_large or id_reused; Reason why a refused one was.
	Outcome string      `json:"outcome"`
	Reason  string      `json:"reason,omitempty"`
	Status  int         `json:"status"`
	Count   int64       `json:"count"`
	EventID *uuid.UUID  `json:"event_id"`
	RunIDs  []uuid.UUID `json:"run_ids"`
}

// handleWebhookDeliveries lists a webhook's delivery log, newest first:
// ?result=accepted or refused keeps one kind, ?limit bounds the answer.
func handleWebhookDeliveries(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, tenant := c.Request().Context(), httpx.TenantOf(c)
		limit, err := httpx.LimitParam(c)
		if err != nil {
			return err
		}
		refused, err := deliveryResultParam(c.QueryParam("result"))
		if err != nil {
			return err
		}
		w, err := s.WebhookGet(ctx, tenant, c.Param("id"))
		if err != nil {
			return err
		}
		ds, err := s.WebhookDeliveries(ctx, tenant, w.ID, refused, 0, limit)
		if err != nil {
			return err
		}
		out := make([]WebhookDeliveryJSON, len(ds))
		for i, d := range ds {
			out[i] = webhookDeliveryJSON(d)
		}
		return c.JSON(http.StatusOK, map[string]any{"deliveries": out})
	}
}

// deliveryResultParam reads ?result: accepted, refused or neither (nil).
func deliveryResultParam(v string) (*bool, error) {
	switch v {
	case "":
		return nil, nil
	case "accepted", "refused":
		refused := v == "refused"
		return &refused, nil
	}
	return nil, apperr.New(apperr.Invalid, `result must be "accepted" or "refused"`)
}

func webhookDeliveryJSON(d store.LoggedDelivery) WebhookDeliveryJSON {
	out := WebhookDeliveryJSON{
		Seq: d.Seq, At: d.At, Result: "accepted", Outcome: d.Outcome, Reason: d.Reason, Status: d.Status,
		Count: d.Count, EventID: d.EventID, RunIDs: d.RunIDs,
	}
	if d.Refused {
		out.Result = "refused"
	}
	if out.RunIDs == nil {
		out.RunIDs = []uuid.UUID{}
	}
	return out
}
