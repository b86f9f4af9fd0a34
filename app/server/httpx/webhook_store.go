package httpx

import (
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
)

// HookURL is where a webhook's deliveries go: under DUCTOR_BASE_URL, or
// the address the request came to.
func HookURL(c echo.Context, base, slug, id string) string {
	if base == "" {
		base = c.Scheme() + "://" + c.Request().Host
	}
	return base + "/hooks/" + slug + "/" + id
}

// NeedBox answers 503 when no secrets box is configured.
func NeedBox(box *secrets.Box) error {
	if box == nil {
		return apperr.New(apperr.Unavailable, "webhooks need DUCTOR_SECRET_KEY, which seals their secrets")
	}
	return nil
}

// WebhookCreate stores a new webhook and its audit entry in one
// transaction, as WebhookRotate and WebhookDelete do their changes.
func WebhookCreate(c echo.Context, s *store.Store, w store.Webhook) (out store.Webhook, err error) {
	err = s.InTx(c.Request().Context(), func(tx *store.Store) error {
		if out, err = tx.WebhookCreate(c.Request().Context(), w); err != nil {
			return err
		}
		return AuditAPI(c, tx, store.AuditWebhookCreate, out.ID, map[string]any{"event": out.Event, "scheme": out.Scheme})
	})
	return out, err
}

// WebhookRotate replaces a webhook's secret, audited.
func WebhookRotate(c echo.Context, s *store.Store, tenantID uuid.UUID, id string, sealed []byte, hint string) (out store.Webhook, err error) {
	err = s.InTx(c.Request().Context(), func(tx *store.Store) error {
		if out, err = tx.WebhookRotate(c.Request().Context(), tenantID, id, sealed, hint); err != nil {
			return err
		}
		return AuditAPI(c, tx, store.AuditWebhookRotate, out.ID, nil)
	})
	return out, err
}

// WebhookDelete deletes a webhook, audited.
func WebhookDelete(c echo.Context, s *store.Store, tenantID uuid.UUID, id string) error {
	return s.InTx(c.Request().Context(), func(tx *store.Store) error {
		if err := tx.WebhookDelete(c.Request().Context(), tenantID, id); err != nil {
			return err
		}
		return AuditAPI(c, tx, store.AuditWebhookDelete, id, nil)
	})
}
