package api

import (
	"context"
	"errors"
	"time"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/sysevents"
	"github.com/ductor/ductor/app/webhook"
)

// DefaultWebhookRefusedEvery is how often, at most, one webhook's refused
// deliveries are reported by a ductor.webhook.refused event.
const DefaultWebhookRefusedEvery = time.Minute

// A refused delivery to a known webhook (bad, missing or stale signature,
// a body too large or not JSON, a delivery id reused for another body, a
// failure past its budget) is reported to the webhook's tenant by a
// ductor.webhook.refused event, at most one per webhook per
// Deps.WebhookRefusedEvery across every process: the window is a row of
// webhook_refusal, decided by one conditional upsert. A flood of forged
// deliveries touches that row at most once per process per
// min(failedRecordEvery, the window) (the recorder counts the rest in
// memory), and each event carries how many refusals went unreported
// since the one before. The event is stored in the transaction that
// writes the refusal to the webhook, when one is written.

// refusalReason is the event's reason for a refusal of outcome.
func refusalReason(outcome string, err error) string {
	if outcome == deliveryBadSignature && errors.Is(err, webhook.ErrMissing) {
		return "missing_signature"
	}
	return outcome
}

// refusal is one refused delivery to a known webhook.
type refusal struct {
	hook   store.Webhook
	addr   string
	reason string
	status int
	// write is the refusal's record on the webhook, nil when it is not
	// written this time.
	write *store.Delivery
}

// refused counts a refusal and, when this process's turn to count at
// the database has come (or the refusal is written to the webhook),
// counts it there and stores the event if the window allows, in one
// transaction with the write.
func (h Hooks) refused(ctx context.Context, r refusal) {
	k := hookKey{r.hook.TenantID, r.hook.ID}
	try, before := h.recorder.refusal(k, time.Now(), r.write != nil, min(failedRecordEvery, h.refusedEvery))
	if !try {
		return
	}
	err := h.store.InTx(ctx, func(tx *store.Store) error {
		if r.write != nil {
			if err := tx.WebhookDelivered(ctx, r.hook.TenantID, r.hook.ID, *r.write); err != nil {
				return err
			}
		}
		rep, err := tx.WebhookRefusalReport(ctx, r.hook.TenantID, r.hook.ID, before, h.refusedEvery)
		if err != nil || !rep.Reported {
			return err
		}
		e := sysevents.Refused(sysevents.WebhookRefusal{
			Webhook: r.hook.ID, Event: r.hook.Event, Reason: r.reason, Status: r.status, RemoteAddr: r.addr,
			At: rep.At.UTC().Format(time.RFC3339Nano), Suppressed: rep.Suppressed,
		})
		_, err = tx.SystemEventAdd(ctx, r.hook.TenantID, e.ID, e.Name, e.Data)
		return err
	})
	if err != nil {
		h.recorder.uncounted(k, before+1)
		h.log.WarnContext(ctx, "record a refused webhook delivery", "webhook_id", r.hook.ID, "err", err)
	}
}
