package sdk

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The tenant's own settings and reports: its secrets (docs/secrets.md),
// its subscriptions to events (docs/notifications.md) and its usage
// (docs/usage.md).

// Tenant is the part of the client that manages the tenant's secrets
// and subscriptions and reads its usage (Client.Tenant).
type Tenant struct{ c *Client }

// Tenant manages the tenant's secrets and subscriptions and reads its
// usage.
func (c *Client) Tenant() *Tenant { return &Tenant{c: c} }

// Secret is a tenant secret's metadata; nothing reads its value back.
type Secret struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Version counts the values set: 1 when created, one more at each
	// rotation.
	Version    int        `json:"version"`
	CreatedAt  time.Time  `json:"created_at"`
	CreatedBy  string     `json:"created_by"` // key:PREFIX or user:EMAIL
	UpdatedAt  time.Time  `json:"updated_at"`
	UpdatedBy  string     `json:"updated_by"`
	LastUsedAt *time.Time `json:"last_used_at"`
	// UsedBy is only filled by GetSecret: the published definition
	// versions that reference the secret, newest first.
	UsedBy []SecretUse `json:"used_by,omitempty"`
	// Created is false when PutSecret rotated an existing secret.
	Created bool `json:"-"`
}

// SecretUse is a published definition version that references a secret.
type SecretUse struct {
	Key     string `json:"key"`
	Version int    `json:"version"`
}

// SecretPage is a page of secrets by name.
type SecretPage struct {
	Secrets    []Secret `json:"secrets"`
	NextCursor string   `json:"next_cursor"`
}

// PutSecret creates the secret name, or rotates it to value (an empty
// description keeps the one it had); steps that reference it send the
// new value from their next attempt on.
func (t *Tenant) PutSecret(ctx context.Context, name, value, description string) (Secret, error) {
	body := map[string]string{"value": value}
	if description != "" {
		body["description"] = description
	}
	var out Secret
	status, err := t.c.do(ctx, http.MethodPut, secretPath(name), body, &out)
	out.Created = status == http.StatusCreated
	return out, err
}

// ListSecrets lists the tenant's secrets by name, without values.
func (t *Tenant) ListSecrets(ctx context.Context, p Page) (SecretPage, error) {
	var out SecretPage
	_, err := t.c.do(ctx, http.MethodGet, "/secrets?"+p.query(url.Values{}).Encode(), nil, &out)
	return out, err
}

// GetSecret reads a secret's metadata.
func (t *Tenant) GetSecret(ctx context.Context, name string) (Secret, error) {
	var out Secret
	_, err := t.c.do(ctx, http.MethodGet, secretPath(name), nil, &out)
	return out, err
}

// DeleteSecret deletes a secret: steps that reference it fail with
// secret_not_found from their next attempt on.
func (t *Tenant) DeleteSecret(ctx context.Context, name string) error {
	_, err := t.c.do(ctx, http.MethodDelete, secretPath(name), nil, nil)
	return err
}

func secretPath(name string) string { return "/secrets/" + url.PathEscape(name) }

// UsageQuery selects the whole UTC days of a usage report and how it is
// grouped; zero fields take the server's defaults (the current month,
// by day).
type UsageQuery struct {
	From, To time.Time // days; To is excluded
	GroupBy  string    // day or definition
}

// Usage is metered use: runs started and by final status, step attempts
// and their worker time, events, signals, webhook deliveries and the net
// change of stored bytes.
type Usage struct {
	RunsStarted       int64 `json:"runs_started"`
	RunsSucceeded     int64 `json:"runs_succeeded"`
	RunsFailed        int64 `json:"runs_failed"`
	RunsCancelled     int64 `json:"runs_cancelled"`
	RunsTimedOut      int64 `json:"runs_timed_out"`
	RunsTerminated    int64 `json:"runs_terminated"`
	Steps             int64 `json:"steps"`
	StepMicroseconds  int64 `json:"step_microseconds"`
	Events            int64 `json:"events"`
	Signals           int64 `json:"signals"`
	WebhookDeliveries int64 `json:"webhook_deliveries"`
	StoredBytes       int64 `json:"stored_bytes"`
	// StepsByType breaks Steps and StepMicroseconds down by step type
	// ("task", "http", "transform", …; a scatter child counts as its
	// template's type).
	StepsByType map[string]StepTypeUsage `json:"steps_by_type,omitempty"`
}

// StepTypeUsage is the steps of one step type and their worker time.
type StepTypeUsage struct {
	Steps            int64 `json:"steps"`
	StepMicroseconds int64 `json:"step_microseconds"`
}

// UsageDay is one day's use.
type UsageDay struct {
	Day string `json:"day"` // YYYY-MM-DD
	Usage
}

// UsageByDefinition is one definition's use.
type UsageByDefinition struct {
	Definition string `json:"definition"`
	Usage
}

// UsageReport is the tenant's use over days [From, To): in total, and
// per day (Days) or per definition (Definitions) that used anything.
type UsageReport struct {
	From        string              `json:"from"`
	To          string              `json:"to"`
	GroupBy     string              `json:"group_by"`
	Total       Usage               `json:"total"`
	Days        []UsageDay          `json:"days"`
	Definitions []UsageByDefinition `json:"definitions"`
	Quota       QuotaState          `json:"quota"`
}

// QuotaState is the tenant's quotas and their use now.
type QuotaState struct {
	Tier   string    `json:"tier"`
	Period time.Time `json:"period"` // the start of the current month
	Quotas []Quota   `json:"quotas"`
}

// Quota is one quota's use. Limit is 0 when there is none.
type Quota struct {
	Quota     string     `json:"quota"` // monthly_steps, monthly_runs, waiting_runs or stored_bytes
	Used      int64      `json:"used"`
	Limit     int64      `json:"limit"`
	SoftLimit int64      `json:"soft_limit"`
	State     string     `json:"state"` // ok, warning or exceeded
	ResetsAt  *time.Time `json:"resets_at"`
}

// Usage reads the tenant's metered use and its quota state.
func (t *Tenant) Usage(ctx context.Context, q UsageQuery) (UsageReport, error) {
	v := url.Values{}
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.DateOnly))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.DateOnly))
	}
	if q.GroupBy != "" {
		v.Set("group_by", q.GroupBy)
	}
	var out UsageReport
	_, err := t.c.do(ctx, http.MethodGet, "/usage?"+v.Encode(), nil, &out)
	return out, err
}

// SubscriptionRequest subscribes a URL to events.
type SubscriptionRequest struct {
	URL    string   `json:"url"`
	Events []string `json:"events"` // event names, or "*" for all
	// FilterExpr is a CEL expression over event (the event's data); a
	// delivery is sent only when it is true.
	FilterExpr  string `json:"filter_expr,omitempty"`
	Description string `json:"description,omitempty"`
}

// Subscription posts the events it names to its URL, signed with its
// secret.
type Subscription struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	FilterExpr  string   `json:"filter_expr"`
	Description string   `json:"description"`
	// Secret (whsec_…) is only in the answers of CreateSubscription and
	// RotateSubscription.
	Secret string `json:"secret,omitempty"`
	// Failures counts deliveries in a row that ran out of attempts.
	Failures       int        `json:"failures"`
	Disabled       bool       `json:"disabled"`
	DisabledAt     *time.Time `json:"disabled_at"`
	DisabledReason string     `json:"disabled_reason"`
	// PreviousSecretUntil is until when the previous secret still signs,
	// after a rotation.
	PreviousSecretUntil *time.Time `json:"previous_secret_until"`
	CreatedAt           time.Time  `json:"created_at"`
}

// Delivery is one event sent (or to send) to a subscription, with its
// attempts.
type Delivery struct {
	ID            string            `json:"id"`
	EventID       string            `json:"event_id"` // every attempt's webhook-id
	Event         string            `json:"event"`
	Status        string            `json:"status"` // pending, sending, delivered, failed or filtered
	NextAttemptAt *time.Time        `json:"next_attempt_at"`
	CreatedAt     time.Time         `json:"created_at"`
	FinishedAt    *time.Time        `json:"finished_at"`
	Attempts      []DeliveryAttempt `json:"attempts"`
}

// DeliveryAttempt is one attempt of a delivery: the HTTP status
// answered (0 when there was no answer, and Error says why), its latency
// and the first 1024 bytes of the answer.
type DeliveryAttempt struct {
	Attempt         int       `json:"attempt"`
	At              time.Time `json:"at"`
	Status          int       `json:"status"`
	LatencyMS       int       `json:"latency_ms"`
	ResponseExcerpt string    `json:"response_excerpt"`
	Error           string    `json:"error"`
}

// CreateSubscription subscribes a URL to events; the answer holds the
// signing secret, shown only then.
func (t *Tenant) CreateSubscription(ctx context.Context, s SubscriptionRequest) (Subscription, error) {
	var out Subscription
	_, err := t.c.do(ctx, http.MethodPost, "/subscriptions", s, &out)
	return out, err
}

// ListSubscriptions lists the tenant's subscriptions by id, at most limit
// (0: the server's default), without their secrets.
func (t *Tenant) ListSubscriptions(ctx context.Context, limit int) ([]Subscription, error) {
	var out struct {
		Subscriptions []Subscription `json:"subscriptions"`
	}
	_, err := t.c.do(ctx, http.MethodGet, "/subscriptions"+limitQuery(limit), nil, &out)
	return out.Subscriptions, err
}

// GetSubscription reads a subscription.
func (t *Tenant) GetSubscription(ctx context.Context, id string) (Subscription, error) {
	var out Subscription
	_, err := t.c.do(ctx, http.MethodGet, subscriptionPath(id), nil, &out)
	return out, err
}

// DeleteSubscription deletes a subscription and its delivery log.
func (t *Tenant) DeleteSubscription(ctx context.Context, id string) error {
	_, err := t.c.do(ctx, http.MethodDelete, subscriptionPath(id), nil, nil)
	return err
}

// RotateSubscription gives a subscription a new secret, which the answer
// holds; for 24 hours deliveries are signed with the previous one too.
func (t *Tenant) RotateSubscription(ctx context.Context, id string) (Subscription, error) {
	var out Subscription
	_, err := t.c.do(ctx, http.MethodPost, subscriptionPath(id)+"/rotate", nil, &out)
	return out, err
}

// EnableSubscription enables a subscription disabled after failed
// deliveries, its failures forgotten.
func (t *Tenant) EnableSubscription(ctx context.Context, id string) (Subscription, error) {
	var out Subscription
	_, err := t.c.do(ctx, http.MethodPost, subscriptionPath(id)+"/enable", nil, &out)
	return out, err
}

// SubscriptionDeliveries reads a subscription's newest deliveries, at
// most limit (0: the server's default), each with its attempts.
func (t *Tenant) SubscriptionDeliveries(ctx context.Context, id string, limit int) ([]Delivery, error) {
	var out struct {
		Deliveries []Delivery `json:"deliveries"`
	}
	_, err := t.c.do(ctx, http.MethodGet, subscriptionPath(id)+"/deliveries"+limitQuery(limit), nil, &out)
	return out.Deliveries, err
}

// Redeliver sends a delivered or failed delivery once more, with the same
// webhook-id; one still pending or being sent is an [APIError] with
// status 409.
func (t *Tenant) Redeliver(ctx context.Context, id, delivery string) error {
	_, err := t.c.do(ctx, http.MethodPost, subscriptionPath(id)+"/deliveries/"+url.PathEscape(delivery)+"/redeliver", nil, nil)
	return err
}

func subscriptionPath(id string) string { return "/subscriptions/" + url.PathEscape(id) }

func limitQuery(limit int) string {
	if limit > 0 {
		return "?limit=" + strconv.Itoa(limit)
	}
	return ""
}
