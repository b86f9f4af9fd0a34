package subscriptions

import (
	"context"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/webhook"
)

// Input is what creates a subscription.
type Input struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	FilterExpr  string   `json:"filter_expr,omitempty"`
	Description string   `json:"description,omitempty"`
}

// Limits of a subscription's fields.
const (
	maxURL         = 2048
	maxEvents      = 50
	maxDescription = 500
	maxFilter      = 2000
)

func (in Input) check() error {
	bad := func(field, msg string) error {
		return apperr.New(apperr.Invalid, "%s", field+": "+msg).WithDetails(map[string]any{"field": field})
	}
	u, err := url.Parse(in.URL)
	switch {
	case in.URL == "":
		return bad("url", "is required")
	case len(in.URL) > maxURL:
		return bad("url", "is longer than 2048 characters")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return bad("url", "must be an absolute http or https URL")
	case u.User != nil:
		return bad("url", "must not carry credentials: the signature authenticates deliveries")
	case len(in.Events) == 0:
		return bad("events", "name at least one event, or \"*\" for all")
	case len(in.Events) > maxEvents:
		return bad("events", "name at most 50 events")
	case len(in.Description) > maxDescription:
		return bad("description", "is longer than 500 characters")
	case len(in.FilterExpr) > maxFilter:
		return bad("filter_expr", "is longer than 2000 characters")
	}
	for _, e := range in.Events {
		if strings.TrimSpace(e) == "" || len(e) > 200 {
			return bad("events", "an event name is empty or longer than 200 characters")
		}
	}
	return nil
}

// Created is a new subscription with its secret, shown this once.
type Created struct {
	store.Subscription
	Secret string
}

// Create stores a subscription with a new signing secret.
func (c *Service) Create(ctx context.Context, tenantID uuid.UUID, in Input) (Created, error) {
	if c.cfg.Secrets == nil {
		return Created{}, apperr.New(apperr.Unavailable, "subscriptions need a secret key to seal their signing secrets (DUCTOR_SECRET_KEY)")
	}
	if err := in.check(); err != nil {
		return Created{}, err
	}
	if in.FilterExpr != "" {
		cache, err := c.exprs()
		if err != nil {
			return Created{}, err
		}
		if _, err := cache.Get(in.FilterExpr, expr.KindBool); err != nil {
			return Created{}, apperr.New(apperr.Invalid, "filter_expr: %s", err.Error()).WithDetails(map[string]any{"field": "filter_expr"})
		}
	}
	s := store.New(c.pool)
	n, err := s.SubscriptionCount(ctx, tenantID)
	if err != nil {
		return Created{}, err
	}
	if n >= MaxPerTenant {
		return Created{}, apperr.New(apperr.Unprocessable, "a tenant has at most %d subscriptions", MaxPerTenant)
	}
	id := uuid.New()
	secret := webhook.NewSecret()
	sub, err := s.SubscriptionAdd(ctx, store.Subscription{
		TenantID: tenantID, ID: id, Url: in.URL, Events: in.Events, FilterExpr: in.FilterExpr,
		Description: in.Description, Secret: c.cfg.Secrets.Seal([]byte(secret), aad(tenantID, id)),
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Subscription: sub, Secret: secret}, nil
}

// aad binds a sealed secret to its subscription.
func aad(tenantID, id uuid.UUID) string {
	return "subscription:" + tenantID.String() + ":" + id.String()
}

// Rotate gives a subscription a new secret, returned this once; the
// previous one still signs (a second signature in webhook-signature) for
// Config.RotateGrace.
func (c *Service) Rotate(ctx context.Context, tenantID, id uuid.UUID) (Created, error) {
	if c.cfg.Secrets == nil {
		return Created{}, apperr.New(apperr.Unavailable, "subscriptions need a secret key (DUCTOR_SECRET_KEY)")
	}
	secret := webhook.NewSecret()
	sub, err := store.New(c.pool).SubscriptionRotate(ctx, tenantID, id, c.cfg.Secrets.Seal([]byte(secret), aad(tenantID, id)), c.cfg.RotateGrace)
	if err != nil {
		return Created{}, err
	}
	return Created{Subscription: sub, Secret: secret}, nil
}

// Get reads a subscription.
func (c *Service) Get(ctx context.Context, tenantID, id uuid.UUID) (store.Subscription, error) {
	return store.New(c.pool).SubscriptionGet(ctx, tenantID, id)
}

// List lists a tenant's subscriptions by id, after after.
func (c *Service) List(ctx context.Context, tenantID, after uuid.UUID, max int) ([]store.Subscription, error) {
	return store.New(c.pool).SubscriptionList(ctx, tenantID, after, max)
}

// Delete deletes a subscription and its delivery log.
func (c *Service) Delete(ctx context.Context, tenantID, id uuid.UUID) error {
	return store.New(c.pool).SubscriptionDelete(ctx, tenantID, id)
}

// Enable enables a disabled subscription, its failures forgotten.
func (c *Service) Enable(ctx context.Context, tenantID, id uuid.UUID) (store.Subscription, error) {
	return store.New(c.pool).SubscriptionEnable(ctx, tenantID, id)
}

// Delivery is a delivery with its attempts.
type Delivery struct {
	store.SubscriptionDelivery
	Attempts []store.SubscriptionAttempt
}

// Deliveries lists a subscription's newest deliveries with their
// attempts.
func (c *Service) Deliveries(ctx context.Context, tenantID, subID uuid.UUID, max int) ([]Delivery, error) {
	s := store.New(c.pool)
	if _, err := s.SubscriptionGet(ctx, tenantID, subID); err != nil {
		return nil, err
	}
	ds, err := s.SubscriptionDeliveries(ctx, tenantID, subID, max)
	if err != nil {
		return nil, err
	}
	out := make([]Delivery, len(ds))
	for i, d := range ds {
		out[i].SubscriptionDelivery = d
		if out[i].Attempts, err = s.SubscriptionAttempts(ctx, tenantID, d.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Redeliver sends a finished delivery (delivered or failed) again, with
// the same webhook-id. A delivery still pending or being sent is a
// conflict.
func (c *Service) Redeliver(ctx context.Context, tenantID, subID, deliveryID uuid.UUID) error {
	s := store.New(c.pool)
	d, err := s.SubscriptionDeliveryGet(ctx, tenantID, deliveryID)
	if err != nil {
		return err
	}
	if d.SubscriptionID != subID {
		return apperr.New(apperr.NotFound, "delivery not found")
	}
	ok, err := s.SubscriptionRedeliver(ctx, tenantID, deliveryID)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.New(apperr.Conflict, "the delivery is %s: only a delivered or failed one can be sent again", d.Status)
	}
	c.metrics.redeliveries.Inc()
	return nil
}

// Outbound queues an event for every enabled subscription that takes its
// name, in the transaction that publishes or dispatches it. The filter is
// evaluated when the delivery is sent, outside any transaction.
func (c *Service) Outbound(ctx context.Context, tx pgx.Tx, e store.Event) error {
	s := store.New(tx)
	subs, err := s.SubscriptionsFor(ctx, e.TenantID, e.Name)
	if err != nil || len(subs) == 0 {
		return err
	}
	body, err := payload(e)
	if err != nil {
		return err
	}
	for _, sub := range subs {
		if err := s.SubscriptionDeliveryAdd(ctx, store.SubscriptionDelivery{
			TenantID: e.TenantID, ID: uuid.NewSHA1(sub.ID, e.ID[:]), SubscriptionID: sub.ID,
			EventID: e.ID, EventName: e.Name, Body: body,
		}); err != nil {
			return err
		}
	}
	return nil
}
