package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/webhook"
	"github.com/ductor/ductor/workers"
)

// Outcomes of a webhook delivery (recorded on the webhook and counted).
const (
	deliveryAccepted     = "accepted"
	deliveryDuplicate    = "duplicate"
	deliveryIDReused     = "id_reused"
	deliveryBadSignature = "bad_signature"
	deliveryStale        = "stale_timestamp"
	deliveryInvalidBody  = "invalid_body"
	deliveryNotFound     = "not_found"
	deliveryRateLimited  = "rate_limited"
)

// hooks receives webhook deliveries: no API key, the signature is the
// credential. Failed deliveries (unknown webhook, bad, missing or stale
// signature) are counted per client address as failed authentications
// are: past the budget the address gets 429 with Retry-After before any
// lookup. Failed results are written to their webhook sparingly (see
// deliveryRecorder).
type hooks struct {
	store    *store.Store
	runs     *workers.Coordinator
	box      *secrets.Box
	log      *slog.Logger
	failures *failureLimiter
	recorder *deliveryRecorder
}

func newHooks(d Deps) hooks {
	return hooks{
		store: d.Store, runs: d.Runs, box: d.Secrets, log: d.Logger,
		failures: newFailureLimiter(d.AuthFailuresPerMinute, d.AuthFailureBurst),
		recorder: newDeliveryRecorder(failedRecordEvery),
	}
}

// handleHookDelivery verifies a delivery to /hooks/{tenant slug}/{id} and
// turns it into an event of the webhook's name: 202 {"event_id"}; a
// repeated delivery id answers 200 with the first event and makes no
// other, and 409 when its body differs from the first's; a bad, missing or stale signature is 401; a body that is not
// JSON is 400; an address past its budget of failures is 429.
func (h hooks) handleHookDelivery(c echo.Context) error {
	ctx, addr := c.Request().Context(), clientAddr(c.Request())
	if err := h.failures.check(c, addr); err != nil {
		h.runs.WebhookDelivered(deliveryRateLimited)
		return err
	}
	w, err := h.find(ctx, c.Param("tenant"), c.Param("id"))
	if apperr.Is(err, apperr.NotFound) {
		h.failures.fail(addr)
		h.runs.WebhookDelivered(deliveryNotFound)
	}
	if err != nil {
		return err
	}
	body, err := io.ReadAll(c.Request().Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return apperr.New(apperr.TooLarge, "delivery body exceeds %d bytes", tooBig.Limit)
	} else if err != nil {
		return apperr.Wrap(err, apperr.Invalid, "read the delivery")
	}
	id, err := h.verify(ctx, w, c.Request().Header, body)
	if err != nil {
		outcome := deliveryBadSignature
		if errors.Is(err, webhook.ErrStale) {
			outcome = deliveryStale
		}
		h.failures.fail(addr)
		h.recordFailure(ctx, w, outcome, http.StatusUnauthorized)
		return apperr.New(apperr.Unauthorized, "webhook signature: %v", err)
	}
	data, err := jsonvalue.Decode(body)
	if err != nil {
		h.recordFailure(ctx, w, deliveryInvalidBody, http.StatusBadRequest)
		return apperr.New(apperr.Invalid, "the delivery's body is not JSON")
	}
	return h.publish(c, w, id, body, data)
}

func (h hooks) find(ctx context.Context, slug, id string) (store.Webhook, error) {
	if h.box == nil {
		return store.Webhook{}, apperr.New(apperr.Unavailable, "webhooks need DUCTOR_SECRET_KEY")
	}
	t, err := h.store.TenantGetBySlug(ctx, slug)
	if err != nil {
		return store.Webhook{}, apperr.New(apperr.NotFound, "webhook not found")
	}
	w, err := h.store.WebhookGet(ctx, t.ID, id)
	if err != nil {
		return store.Webhook{}, apperr.New(apperr.NotFound, "webhook not found")
	}
	return w, nil
}

// verify checks the signature against the webhook's secret (and the
// previous one, during a rotation's grace), timestamps against the
// database's clock.
func (h hooks) verify(ctx context.Context, w store.Webhook, hdr http.Header, body []byte) (string, error) {
	now, err := h.store.Now(ctx)
	if err != nil {
		return "", err
	}
	var keys []string
	aad := store.WebhookAAD(w.TenantID, w.ID)
	if plain, err := h.box.Open(w.Secret, aad); err == nil {
		keys = append(keys, string(plain))
	}
	if w.PreviousSecret != nil && w.PreviousUntil != nil && now.Before(*w.PreviousUntil) {
		if plain, err := h.box.Open(w.PreviousSecret, aad); err == nil {
			keys = append(keys, string(plain))
		}
	}
	if len(keys) == 0 {
		h.log.ErrorContext(ctx, "a webhook's secret does not open: was DUCTOR_SECRET_KEY changed?", "tenant_id", w.TenantID, "webhook_id", w.ID)
	}
	return webhook.Verify(webhook.Scheme(w.Scheme), keys, hdr, body, now)
}

// publish stores the delivery as an event, keyed by its delivery id (the
// body's hash when the sender gives none). A delivery id already used for
// a different body is refused: a sender retries a delivery with the same
// body, so another body under the same id is a bug or a forgery, and
// answering it as a duplicate would drop it without a word.
func (h hooks) publish(c echo.Context, w store.Webhook, id string, body []byte, data any) error {
	ctx := workers.WithCaller(c.Request().Context(), callerSpan(c))
	if id == "" {
		sum := sha256.Sum256(body)
		id = hex.EncodeToString(sum[:])
	}
	e, created, err := h.runs.Publish(ctx, store.Event{
		TenantID: w.TenantID, Name: w.Event, Data: data, IdempotencyKey: "webhook:" + w.ID + ":" + id, MatchRequest: true,
	})
	if apperr.Is(err, apperr.IdempotencyMismatch) {
		h.runs.WebhookDelivered(deliveryIDReused)
		h.write(ctx, w, store.Delivery{Outcome: deliveryIDReused, Status: http.StatusConflict,
			Count: h.recorder.succeeded(hookKey{w.TenantID, w.ID}, time.Now())})
		return apperr.New(apperr.IdempotencyMismatch, "delivery id %q was already used for a different body", id)
	}
	if err != nil {
		return err
	}
	outcome, status := deliveryAccepted, http.StatusAccepted
	if !created {
		outcome, status = deliveryDuplicate, http.StatusOK
	}
	h.runs.WebhookDelivered(outcome)
	n := h.recorder.succeeded(hookKey{w.TenantID, w.ID}, time.Now())
	h.write(ctx, w, store.Delivery{Outcome: outcome, Status: status, EventID: &e.ID, Count: n})
	return c.JSON(status, map[string]any{"event_id": e.ID, "duplicate": !created})
}

// recordFailure counts a failed delivery and writes it to the webhook
// when the recorder says so.
func (h hooks) recordFailure(ctx context.Context, w store.Webhook, outcome string, status int) {
	h.runs.WebhookDelivered(outcome)
	if ok, n := h.recorder.failed(hookKey{w.TenantID, w.ID}, time.Now()); ok {
		h.write(ctx, w, store.Delivery{Outcome: outcome, Status: status, Count: n})
	}
}

// write keeps a delivery's result on the webhook; failing to is logged,
// not answered.
func (h hooks) write(ctx context.Context, w store.Webhook, d store.Delivery) {
	if err := h.store.WebhookDelivered(ctx, w.TenantID, w.ID, d); err != nil {
		h.log.WarnContext(ctx, "record a webhook delivery", "webhook_id", w.ID, "err", err)
	}
}
