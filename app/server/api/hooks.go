package api

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/webhook"
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
	deliveryTooLarge     = "too_large"
)

// Hooks receives webhook deliveries: no API key, the signature is the
// credential. Failed deliveries (unknown webhook, bad, missing or stale
// signature, a body too large to verify) are counted as failed
// authentications are, per client address and webhook (see
// hooks_budget.go): past its budget a failure is answered 429 with
// Retry-After, and a request that cannot succeed is refused so before any
// lookup, while a delivery that verifies is always served. Failed results
// are written to their webhook sparingly (see deliveryRecorder).
type Hooks struct {
	store    *store.Store
	runs     *runs.Service
	box      *secrets.Box
	log      *slog.Logger
	proxies  httpx.TrustedProxies
	failures *httpx.FailureLimiter
	known    *knownHooks
	recorder *deliveryRecorder
	// refusedEvery bounds the ductor.webhook.refused events of a webhook
	// (see hooks_refused.go).
	refusedEvery time.Duration
}

// NewHooks builds the receiver of webhook deliveries, with its own
// budget of failed deliveries per client.
func NewHooks(d Deps) Hooks {
	return Hooks{
		store: d.Store, runs: d.Runs, box: d.Secrets, log: d.Logger, proxies: d.TrustedProxies,
		failures: httpx.NewFailureLimiter(d.AuthFailuresPerMinute, d.AuthFailureBurst),
		known:    newKnownHooks(), recorder: newDeliveryRecorder(failedRecordEvery),
		refusedEvery: cmp.Or(d.WebhookRefusedEvery, DefaultWebhookRefusedEvery),
	}
}

// HandleHookDelivery verifies a delivery to /hooks/{tenant slug}/{id} and
// turns it into an event of the webhook's name: 202 {"event_id"}; a
// repeated delivery (the same id, or for GitHub the same body) answers
// 200 with the first event and makes no other, and 409 when its body
// differs from the first's; a bad, missing or stale signature is 401; a
// body over MaxBodyBytes 413; a body that is not JSON 400; a failure past
// its budget 429; the database unreachable 503.
func (h Hooks) HandleHookDelivery(c echo.Context) error {
	ctx, addr := c.Request().Context(), h.proxies.ClientAddr(c.Request())
	slug, id := c.Param("tenant"), c.Param("id")
	if err := h.precheck(c, addr, slug, id); err != nil {
		h.runs.Events.WebhookDelivered(deliveryRateLimited)
		return err
	}
	w, err := h.find(ctx, slug, id)
	if apperr.Is(err, apperr.NotFound) {
		h.known.forget(slug, id)
		h.failures.Fail(unknownHookBudget(addr))
		h.runs.Events.WebhookDelivered(deliveryNotFound)
	}
	if err != nil {
		return err
	}
	h.known.add(slug, id, w.TenantID)
	budget := hookBudget(addr, w.TenantID, w.ID)
	body, outcome, err := readDelivery(c, webhook.Scheme(w.Scheme))
	if outcome != "" {
		return h.refuse(c, addr, w, budget, outcome, err)
	} else if err != nil {
		return err
	}
	now, err := h.store.Now(ctx)
	if err != nil {
		return err
	}
	deliveryID, err := h.verify(ctx, w, c.Request().Header, body, now)
	if err != nil {
		outcome := deliveryBadSignature
		if errors.Is(err, webhook.ErrStale) {
			outcome = deliveryStale
		}
		return h.refuse(c, addr, w, budget, outcome, apperr.New(apperr.Unauthorized, "webhook signature: %v", err))
	}
	data, err := jsonvalue.Decode(body)
	if err != nil {
		h.recordFailure(ctx, addr, w, deliveryInvalidBody, deliveryInvalidBody, http.StatusBadRequest)
		return apperr.New(apperr.Invalid, "the delivery's body is not JSON")
	}
	return h.publish(c, w, deliveryID, body, data)
}

// readDelivery reads a delivery's body, refusing one that carries no
// signature for the scheme before reading anything, and one over
// MaxBodyBytes without reading past it. A refusal names its outcome; an
// error reading is none.
func readDelivery(c echo.Context, s webhook.Scheme) ([]byte, string, error) {
	r := c.Request()
	if !webhook.Signed(s, r.Header) {
		return nil, deliveryBadSignature, apperr.New(apperr.Unauthorized, "webhook signature: %v", webhook.ErrMissing)
	}
	tooLarge := apperr.New(apperr.TooLarge, "delivery body exceeds %d bytes", httpx.MaxBodyBytes)
	if r.ContentLength > httpx.MaxBodyBytes {
		return nil, deliveryTooLarge, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, httpx.MaxBodyBytes))
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return nil, deliveryTooLarge, tooLarge
	} else if err != nil {
		return nil, "", apperr.Wrap(err, apperr.Invalid, "read the delivery")
	}
	return body, "", nil
}

// refuse answers a failed delivery: err, counted and written to the
// webhook as the recorder says, or 429 once the failure's budget is
// spent (counted, not written); either is reported by a
// ductor.webhook.refused event as hooks_refused.go says.
func (h Hooks) refuse(c echo.Context, addr string, w store.Webhook, budget, outcome string, err error) error {
	ctx := c.Request().Context()
	if spent := h.failures.Check(c, budget); spent != nil {
		h.runs.Events.WebhookDelivered(deliveryRateLimited)
		h.refused(ctx, refusal{hook: w, addr: addr, reason: deliveryRateLimited, status: http.StatusTooManyRequests})
		return spent
	}
	h.failures.Fail(budget)
	status, _ := httpx.ToBody(err)
	h.recordFailure(ctx, addr, w, outcome, refusalReason(outcome, err), status)
	return err
}

// The shapes of tenant slugs and webhook ids (as the schema checks them).
var (
	hookSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	hookID   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
)

// find looks the webhook up: 404 when its tenant or it does not exist,
// and the store's error otherwise (503 while the database is
// unreachable).
func (h Hooks) find(ctx context.Context, slug, id string) (store.Webhook, error) {
	if h.box == nil {
		return store.Webhook{}, apperr.New(apperr.Unavailable, "webhooks need DUCTOR_SECRET_KEY")
	}
	notFound := apperr.New(apperr.NotFound, "webhook not found")
	if !hookSlug.MatchString(slug) || !hookID.MatchString(id) {
		return store.Webhook{}, notFound // no such path can exist: no lookup
	}
	t, err := h.store.TenantGetBySlug(ctx, slug)
	if apperr.Is(err, apperr.NotFound) {
		return store.Webhook{}, notFound
	} else if err != nil {
		return store.Webhook{}, err
	}
	w, err := h.store.WebhookGet(ctx, t.ID, id)
	if apperr.Is(err, apperr.NotFound) {
		return store.Webhook{}, notFound
	}
	return w, err
}

// verify checks the signature against the webhook's secret (and the
// previous one, during a rotation's grace), timestamps against now, the
// database's clock.
func (h Hooks) verify(ctx context.Context, w store.Webhook, hdr http.Header, body []byte, now time.Time) (string, error) {
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

// publish stores the delivery as an event, keyed by its delivery id, or
// by the body's SHA-256 when it has none (GitHub's is not signed): a
// GitHub delivery resent, under whatever X-GitHub-Delivery, is a
// duplicate for as long as its event is kept. A delivery id already used for
// a different body is refused: a sender retries a delivery with the same
// body, so another body under the same id is a bug or a forgery, and
// answering it as a duplicate would drop it without a word.
func (h Hooks) publish(c echo.Context, w store.Webhook, id string, body []byte, data any) error {
	ctx := runs.WithCaller(c.Request().Context(), callerSpan(c))
	if id == "" {
		sum := sha256.Sum256(body)
		id = hex.EncodeToString(sum[:])
	}
	e, created, err := h.runs.Events.Publish(ctx, store.Event{
		TenantID: w.TenantID, Name: w.Event, Data: data, IdempotencyKey: "webhook:" + w.ID + ":" + id, MatchRequest: true,
	})
	if apperr.Is(err, apperr.IdempotencyMismatch) {
		h.runs.Events.WebhookDelivered(deliveryIDReused)
		h.refused(ctx, refusal{hook: w, addr: h.proxies.ClientAddr(c.Request()), reason: deliveryIDReused, status: http.StatusConflict,
			write: &store.Delivery{Outcome: deliveryIDReused, Refused: true, Reason: deliveryIDReused, Status: http.StatusConflict,
				Count: h.recorder.succeeded(hookKey{w.TenantID, w.ID}, time.Now())}})
		return apperr.New(apperr.IdempotencyMismatch, "delivery id %q was already used for a different body", id)
	}
	if err != nil {
		return err
	}
	outcome, status := deliveryAccepted, http.StatusAccepted
	if !created {
		outcome, status = deliveryDuplicate, http.StatusOK
	}
	h.runs.Events.WebhookDelivered(outcome)
	n := h.recorder.succeeded(hookKey{w.TenantID, w.ID}, time.Now())
	h.write(ctx, w, store.Delivery{Outcome: outcome, Status: status, EventID: &e.ID, RunIDs: h.startedBy(ctx, e), Count: n})
	return c.JSON(status, map[string]any{"event_id": e.ID, "duplicate": !created})
}

// maxDeliveryRuns bounds the runs a delivery's log entry names.
const maxDeliveryRuns = 20

// startedBy lists the runs the event's triggers started (in its
// transaction, so all of them by now), newest first, for the delivery's
// log entry; failing to is logged and lists none.
func (h Hooks) startedBy(ctx context.Context, e store.Event) []uuid.UUID {
	rs, err := h.store.RunList(ctx, e.TenantID, store.RunFilter{Attributes: map[string]any{"event_id": e.ID.String()}, Limit: maxDeliveryRuns})
	if err != nil {
		h.log.WarnContext(ctx, "list the runs of a webhook delivery", "event_id", e.ID, "err", err)
		return nil
	}
	ids := make([]uuid.UUID, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}

// recordFailure counts a failed delivery, writes it to the webhook when
// the recorder says so and reports it (hooks_refused.go).
func (h Hooks) recordFailure(ctx context.Context, addr string, w store.Webhook, outcome, reason string, status int) {
	h.runs.Events.WebhookDelivered(outcome)
	r := refusal{hook: w, addr: addr, reason: reason, status: status}
	if ok, n := h.recorder.failed(hookKey{w.TenantID, w.ID}, time.Now()); ok {
		r.write = &store.Delivery{Outcome: outcome, Refused: true, Reason: reason, Status: status, Count: n}
	}
	h.refused(ctx, r)
}

// write keeps a delivery's result on the webhook; failing to is logged,
// not answered.
func (h Hooks) write(ctx context.Context, w store.Webhook, d store.Delivery) {
	if err := h.store.WebhookDelivered(ctx, w.TenantID, w.ID, d); err != nil {
		h.log.WarnContext(ctx, "record a webhook delivery", "webhook_id", w.ID, "err", err)
	}
}
