package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/queries"
)

// Subscription is an outbound webhook subscription (its secrets sealed).
type Subscription = queries.Subscription

// SubscriptionDelivery is one event for one subscription.
type SubscriptionDelivery = queries.SubscriptionDelivery

// SubscriptionAttempt is one request of a delivery, for its log.
type SubscriptionAttempt = queries.SubscriptionAttempt

func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}

// SubscriptionAdd stores a new subscription.
func (s *Store) SubscriptionAdd(ctx context.Context, sub Subscription) (Subscription, error) {
	out, err := s.q.SubscriptionInsert(ctx, queries.SubscriptionInsertParams{
		TenantID: sub.TenantID, ID: sub.ID, Url: sub.Url, Events: sub.Events, FilterExpr: sub.FilterExpr,
		Description: sub.Description, Secret: sub.Secret,
	})
	if err != nil {
		return Subscription{}, fmt.Errorf("store subscription: %w", err)
	}
	return out, nil
}

// SubscriptionGet reads one subscription.
func (s *Store) SubscriptionGet(ctx context.Context, tenantID, id uuid.UUID) (Subscription, error) {
	out, err := s.q.SubscriptionGet(ctx, queries.SubscriptionGetParams{TenantID: tenantID, ID: id})
	return out, missing(err, "subscription")
}

// SubscriptionList lists a tenant's subscriptions by id, after after.
func (s *Store) SubscriptionList(ctx context.Context, tenantID, after uuid.UUID, max int) ([]Subscription, error) {
	return s.q.SubscriptionList(ctx, queries.SubscriptionListParams{TenantID: tenantID, After: after, Max: int32(max)})
}

// SubscriptionCount counts a tenant's subscriptions.
func (s *Store) SubscriptionCount(ctx context.Context, tenantID uuid.UUID) (int64, error) {
	return s.q.SubscriptionCount(ctx, tenantID)
}

// SubscriptionsFor lists the enabled subscriptions an event of name goes
// to.
func (s *Store) SubscriptionsFor(ctx context.Context, tenantID uuid.UUID, name string) ([]Subscription, error) {
	return s.q.SubscriptionsForEvent(ctx, queries.SubscriptionsForEventParams{TenantID: tenantID, Name: name})
}

// SubscriptionDelete deletes a subscription with its deliveries.
func (s *Store) SubscriptionDelete(ctx context.Context, tenantID, id uuid.UUID) error {
	n, err := s.q.SubscriptionDelete(ctx, queries.SubscriptionDeleteParams{TenantID: tenantID, ID: id})
	if err == nil && n == 0 {
		err = pgx.ErrNoRows
	}
	return missing(err, "subscription")
}

// SubscriptionRotate replaces the sealed secret, the previous one still
// signing for grace.
func (s *Store) SubscriptionRotate(ctx context.Context, tenantID, id uuid.UUID, secret []byte, grace time.Duration) (Subscription, error) {
	out, err := s.q.SubscriptionRotate(ctx, queries.SubscriptionRotateParams{TenantID: tenantID, ID: id, Secret: secret, Grace: interval(grace)})
	return out, missing(err, "subscription")
}

// SubscriptionEnable enables a disabled subscription again.
func (s *Store) SubscriptionEnable(ctx context.Context, tenantID, id uuid.UUID) (Subscription, error) {
	out, err := s.q.SubscriptionEnable(ctx, queries.SubscriptionEnableParams{TenantID: tenantID, ID: id})
	return out, missing(err, "subscription")
}

// SubscriptionDeliveryAdd queues an event for a subscription; an event
// already queued for it queues nothing.
func (s *Store) SubscriptionDeliveryAdd(ctx context.Context, d SubscriptionDelivery) error {
	return s.q.SubscriptionDeliveryInsert(ctx, queries.SubscriptionDeliveryInsertParams{
		TenantID: d.TenantID, ID: d.ID, SubscriptionID: d.SubscriptionID, EventID: d.EventID, EventName: d.EventName, Body: d.Body,
	})
}

// SubscriptionDeliveriesClaim claims up to max due deliveries, at most one
// per subscription and perTenant being sent per tenant, leased for lease.
func (s *Store) SubscriptionDeliveriesClaim(ctx context.Context, max, perTenant int, lease time.Duration) ([]SubscriptionDelivery, error) {
	return s.q.SubscriptionDeliveryClaim(ctx, queries.SubscriptionDeliveryClaimParams{Max: int32(max), PerTenant: int64(perTenant), Lease: interval(lease)})
}

// SubscriptionDeliveriesClaimUnguarded is the claim without its lock
// and its guards, which the delivery checker runs to show that it finds
// deliveries claimed twice; production never calls it.
func (s *Store) SubscriptionDeliveriesClaimUnguarded(ctx context.Context, max int, lease time.Duration) ([]SubscriptionDelivery, error) {
	return s.q.SubscriptionDeliveryClaimUnguarded(ctx, queries.SubscriptionDeliveryClaimUnguardedParams{Max: int32(max), Lease: interval(lease)})
}

// SubscriptionOutcome is what an attempt of a delivery came to.
type SubscriptionOutcome struct {
	Attempt SubscriptionAttempt
	// Status is the delivery's next status: pending (again after Delay),
	// delivered, failed or filtered.
	Status string
	Delay  time.Duration
}

// SubscriptionDeliveryFinish records an attempt and the delivery's next
// status; false when the attempt's claim had run out and another took
// the delivery meanwhile (the attempt is logged all the same).
func (s *Store) SubscriptionDeliveryFinish(ctx context.Context, o SubscriptionOutcome) (bool, error) {
	a := o.Attempt
	if a.Attempt > 0 {
		if err := s.q.SubscriptionAttemptInsert(ctx, queries.SubscriptionAttemptInsertParams{
			TenantID: a.TenantID, DeliveryID: a.DeliveryID, Attempt: a.Attempt, StatusCode: a.StatusCode,
			LatencyMs: a.LatencyMs, ResponseExcerpt: a.ResponseExcerpt, Error: a.Error,
		}); err != nil {
			return false, err
		}
	}
	n, err := s.q.SubscriptionDeliveryFinish(ctx, queries.SubscriptionDeliveryFinishParams{
		Status: o.Status, Delay: interval(o.Delay), TenantID: a.TenantID, ID: a.DeliveryID, Attempts: a.Attempt,
	})
	return n > 0, err
}

// SubscriptionSucceeded clears a subscription's run of failures.
func (s *Store) SubscriptionSucceeded(ctx context.Context, tenantID, id uuid.UUID) error {
	return s.q.SubscriptionSucceeded(ctx, queries.SubscriptionSucceededParams{TenantID: tenantID, ID: id})
}

// SubscriptionFailed counts a delivery that ran out of attempts and
// disables the subscription at disableAfter in a row; disabled reports
// whether this call disabled it.
func (s *Store) SubscriptionFailed(ctx context.Context, tenantID, id uuid.UUID, disableAfter int, reason string) (failures int, disabled bool, err error) {
	row, err := s.q.SubscriptionFailed(ctx, queries.SubscriptionFailedParams{
		TenantID: tenantID, ID: id, DisableAfter: int32(disableAfter), Reason: reason,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return int(row.Failures), row.DisabledNow, err
}

// SubscriptionDeliveryGet reads one delivery.
func (s *Store) SubscriptionDeliveryGet(ctx context.Context, tenantID, id uuid.UUID) (SubscriptionDelivery, error) {
	out, err := s.q.SubscriptionDeliveryGet(ctx, queries.SubscriptionDeliveryGetParams{TenantID: tenantID, ID: id})
	return out, missing(err, "delivery")
}

// SubscriptionDeliveries lists a subscription's newest deliveries.
func (s *Store) SubscriptionDeliveries(ctx context.Context, tenantID, subID uuid.UUID, max int) ([]SubscriptionDelivery, error) {
	return s.q.SubscriptionDeliveryList(ctx, queries.SubscriptionDeliveryListParams{TenantID: tenantID, SubscriptionID: subID, Max: int32(max)})
}

// SubscriptionAttempts lists a delivery's attempts in order.
func (s *Store) SubscriptionAttempts(ctx context.Context, tenantID, deliveryID uuid.UUID) ([]SubscriptionAttempt, error) {
	return s.q.SubscriptionAttemptList(ctx, queries.SubscriptionAttemptListParams{TenantID: tenantID, DeliveryID: deliveryID})
}

// SubscriptionRedeliver sends a finished delivery again now; false when
// it is still pending or being sent.
func (s *Store) SubscriptionRedeliver(ctx context.Context, tenantID, id uuid.UUID) (bool, error) {
	n, err := s.q.SubscriptionDeliveryRedeliver(ctx, queries.SubscriptionDeliveryRedeliverParams{TenantID: tenantID, ID: id})
	return n > 0, err
}

// missing is notFound for an error that may be nil.
func missing(err error, what string) error {
	if err == nil {
		return nil
	}
	return notFound(err, what)
}
