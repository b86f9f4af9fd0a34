package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/queries"
)

// Webhook is an inbound webhook: deliveries signed with its secret become
// events of its name. Secrets stay sealed here (see package secrets).
type Webhook struct {
	TenantID       uuid.UUID
	ID             string
	Event          string
	Scheme         string
	Secret         []byte // sealed
	SecretHint     string
	PreviousSecret []byte // sealed; accepted until PreviousUntil
	PreviousUntil  *time.Time
	Deliveries     int64
	LastDeliveryAt *time.Time
	LastOutcome    string
	LastStatus     int
	LastEventID    *uuid.UUID
	CreatedAt      time.Time
}

// WebhookAAD binds a webhook's sealed secret to its tenant and id (the
// additional data it is sealed with).
func WebhookAAD(tenantID uuid.UUID, id string) string {
	return "webhook/" + tenantID.String() + "/" + id
}

// RotationGrace is how long a rotated-out secret is still accepted.
const RotationGrace = 24 * time.Hour

// WebhookCreate stores a webhook; an id already taken is a conflict.
func (s *Store) WebhookCreate(ctx context.Context, w Webhook) (Webhook, error) {
	row, err := s.q.WebhookInsert(ctx, queries.WebhookInsertParams{
		TenantID: w.TenantID, ID: w.ID, Event: w.Event, Scheme: w.Scheme, Secret: w.Secret, SecretHint: w.SecretHint,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Webhook{}, apperr.New(apperr.Conflict, "webhook %q already exists", w.ID)
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("store webhook: %w", err)
	}
	return webhookFromRow(row), nil
}

// WebhookGet returns a tenant's webhook.
func (s *Store) WebhookGet(ctx context.Context, tenantID uuid.UUID, id string) (Webhook, error) {
	row, err := s.q.WebhookGet(ctx, queries.WebhookGetParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Webhook{}, notFound(err, "webhook "+id)
	}
	return webhookFromRow(row), nil
}

// WebhookList lists a tenant's webhooks by id, after the given one.
func (s *Store) WebhookList(ctx context.Context, tenantID uuid.UUID, after string, limit int) ([]Webhook, error) {
	rows, err := s.q.WebhookList(ctx, queries.WebhookListParams{TenantID: tenantID, After: after, Max: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	out := make([]Webhook, len(rows))
	for i, r := range rows {
		out[i] = webhookFromRow(r)
	}
	return out, nil
}

// WebhookRotate replaces a webhook's secret; the previous one is still
// accepted for RotationGrace.
func (s *Store) WebhookRotate(ctx context.Context, tenantID uuid.UUID, id string, sealed []byte, hint string) (Webhook, error) {
	row, err := s.q.WebhookRotate(ctx, queries.WebhookRotateParams{
		TenantID: tenantID, ID: id, Secret: sealed, SecretHint: hint,
		Grace: pgtype.Interval{Microseconds: RotationGrace.Microseconds(), Valid: true},
	})
	if err != nil {
		return Webhook{}, notFound(err, "webhook "+id)
	}
	return webhookFromRow(row), nil
}

// WebhookDelete deletes a webhook.
func (s *Store) WebhookDelete(ctx context.Context, tenantID uuid.UUID, id string) error {
	n, err := s.q.WebhookDelete(ctx, queries.WebhookDeleteParams{TenantID: tenantID, ID: id})
	if err != nil {
		return fmt.Errorf("delete webhook %s: %w", id, err)
	}
	if n == 0 {
		return apperr.New(apperr.NotFound, "webhook %s not found", id)
	}
	return nil
}

// Delivery is a webhook delivery's result: its outcome, whether it was
// refused and why (Reason), the status answered, the event it made (nil:
// none) and the runs that event started, and how many deliveries the
// record stands for (at least 1: failures not recorded each time are
// counted with the next record).
type Delivery struct {
	Outcome string
	Refused bool
	Reason  string
	Status  int
	EventID *uuid.UUID
	RunIDs  []uuid.UUID
	Count   int64
}

// WebhookDeliveryLog is how many accepted and how many refused delivery
// results each webhook keeps in its log.
const WebhookDeliveryLog = 100

// LoggedDelivery is a delivery result of a webhook's log; Seq orders the
// log (newer is higher).
type LoggedDelivery struct {
	Delivery
	Seq int64
	At  time.Time
}

// WebhookDelivered records a delivery's result as the webhook's last and
// in its log, which keeps the webhook's last WebhookDeliveryLog accepted
// and refused results each, in one transaction.
func (s *Store) WebhookDelivered(ctx context.Context, tenantID uuid.UUID, id string, d Delivery) error {
	err := s.InTx(ctx, func(tx *Store) error {
		n := max(d.Count, 1)
		err := tx.q.WebhookRecordDelivery(ctx, queries.WebhookRecordDeliveryParams{
			TenantID: tenantID, ID: id, Outcome: d.Outcome, Status: int32(d.Status), EventID: nullUUID(d.EventID), Count: n,
		})
		if err != nil {
			return err
		}
		runs := d.RunIDs
		if runs == nil {
			runs = []uuid.UUID{}
		}
		err = tx.q.WebhookDeliveryInsert(ctx, queries.WebhookDeliveryInsertParams{
			TenantID: tenantID, WebhookID: id, Refused: d.Refused, Outcome: d.Outcome, Reason: d.Reason,
			Status: int32(d.Status), Count: n, EventID: nullUUID(d.EventID), RunIds: runs,
		})
		if err != nil {
			return err
		}
		return tx.q.WebhookDeliveryPrune(ctx, queries.WebhookDeliveryPruneParams{
			TenantID: tenantID, WebhookID: id, Refused: d.Refused, Skip: WebhookDeliveryLog - 1,
		})
	})
	if err != nil {
		return fmt.Errorf("record a delivery of %s: %w", id, err)
	}
	return nil
}

// WebhookDeliveries lists a webhook's delivery log, newest first: at
// most limit results older than seq before (0: from the newest), only
// the refused ones or only the accepted ones when refused is not nil.
func (s *Store) WebhookDeliveries(ctx context.Context, tenantID uuid.UUID, id string, refused *bool, before int64, limit int) ([]LoggedDelivery, error) {
	p := queries.WebhookDeliveryListParams{TenantID: tenantID, WebhookID: id, Before: before, MaxRows: int32(limit)}
	if before <= 0 {
		p.Before = math.MaxInt64
	}
	if refused != nil {
		p.Refused = pgtype.Bool{Bool: *refused, Valid: true}
	}
	rows, err := s.q.WebhookDeliveryList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list the deliveries of %s: %w", id, err)
	}
	out := make([]LoggedDelivery, len(rows))
	for i, r := range rows {
		out[i] = LoggedDelivery{Seq: r.Seq, At: r.At, Delivery: Delivery{
			Outcome: r.Outcome, Refused: r.Refused, Reason: r.Reason, Status: int(r.Status),
			EventID: uuidPtr(r.EventID), RunIDs: r.RunIds, Count: r.Count,
		}}
	}
	return out, nil
}

func webhookFromRow(r queries.Webhook) Webhook {
	return Webhook{
		TenantID: r.TenantID, ID: r.ID, Event: r.Event, Scheme: r.Scheme, Secret: r.Secret, SecretHint: r.SecretHint,
		PreviousSecret: r.PreviousSecret, PreviousUntil: r.PreviousUntil, Deliveries: r.Deliveries,
		LastDeliveryAt: r.LastDeliveryAt, LastOutcome: r.LastOutcome, LastStatus: int(r.LastStatus),
		LastEventID: uuidPtr(r.LastEventID), CreatedAt: r.CreatedAt,
	}
}
