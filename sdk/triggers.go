package sdk

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Schedules and webhooks: what starts runs without a caller (see
// docs/triggers.md), and cancelling one node.

// ScheduleSpec says when a schedule acts: Cron or Interval.
type ScheduleSpec struct {
	Cron     string     `json:"cron,omitempty"`
	Interval string     `json:"interval,omitempty"` // a duration, at least 1s
	Offset   string     `json:"offset,omitempty"`
	Timezone string     `json:"timezone,omitempty"`
	Jitter   string     `json:"jitter,omitempty"`
	StartAt  *time.Time `json:"start_at,omitempty"`
	EndAt    *time.Time `json:"end_at,omitempty"`
}

// Schedule starts runs of a definition by its spec.
type Schedule struct {
	ID             string       `json:"id,omitempty"`
	Definition     string       `json:"definition"`
	Version        int          `json:"version,omitempty"`
	Spec           ScheduleSpec `json:"spec"`
	Input          any          `json:"input,omitempty"`
	Overlap        string       `json:"overlap,omitempty"` // skip (default), buffer_one, buffer_all, cancel_other, terminate_other, allow_all
	CatchupWindow  string       `json:"catchup_window,omitempty"`
	PauseOnFailure bool         `json:"pause_on_failure,omitempty"`
	Paused         bool         `json:"paused,omitempty"`
	Note           string       `json:"note,omitempty"`
}

// ScheduleInfo is a schedule as the API shows it: its settings, its
// next action and its recent actions, as JSON.
type ScheduleInfo = json.RawMessage

// Triggers is the part of the client that manages what starts runs by
// itself: schedules and webhooks (Client.Triggers).
type Triggers struct{ c *Client }

// Triggers manages the tenant's schedules and webhooks.
func (c *Client) Triggers() *Triggers { return &Triggers{c: c} }

// CreateSchedule creates a schedule and answers it.
func (t *Triggers) CreateSchedule(ctx context.Context, s Schedule) (ScheduleInfo, error) {
	var out ScheduleInfo
	_, err := t.c.do(ctx, http.MethodPost, "/schedules", s, &out)
	return out, err
}

// ListSchedules lists the tenant's schedules.
func (t *Triggers) ListSchedules(ctx context.Context, p Page) (json.RawMessage, error) {
	var out json.RawMessage
	_, err := t.c.do(ctx, http.MethodGet, "/schedules?"+p.query(url.Values{}).Encode(), nil, &out)
	return out, err
}

// GetSchedule reads a schedule with its recent actions.
func (t *Triggers) GetSchedule(ctx context.Context, id string) (ScheduleInfo, error) {
	var out ScheduleInfo
	_, err := t.c.do(ctx, http.MethodGet, schedulePath(id), nil, &out)
	return out, err
}

// UpdateSchedule changes the fields patch holds (JSON field names as in
// the API: "paused", "note", "spec", …).
func (t *Triggers) UpdateSchedule(ctx context.Context, id string, patch map[string]any) (ScheduleInfo, error) {
	var out ScheduleInfo
	_, err := t.c.do(ctx, http.MethodPatch, schedulePath(id), patch, &out)
	return out, err
}

// PauseSchedule pauses (or, with pause false, resumes) a schedule.
func (t *Triggers) PauseSchedule(ctx context.Context, id string, pause bool, note string) (ScheduleInfo, error) {
	return t.UpdateSchedule(ctx, id, map[string]any{"paused": pause, "note": note})
}

// DeleteSchedule deletes a schedule.
func (t *Triggers) DeleteSchedule(ctx context.Context, id string) error {
	_, err := t.c.do(ctx, http.MethodDelete, schedulePath(id), nil, nil)
	return err
}

// TriggerSchedule starts a run now, by the overlap policy given (empty:
// the schedule's).
func (t *Triggers) TriggerSchedule(ctx context.Context, id, overlap string) (json.RawMessage, error) {
	var out json.RawMessage
	_, err := t.c.do(ctx, http.MethodPost, schedulePath(id)+"/trigger", omitEmpty(map[string]any{"overlap": overlap}), &out)
	return out, err
}

// BackfillSchedule starts the runs the schedule would have started from
// from (included) to to (excluded).
func (t *Triggers) BackfillSchedule(ctx context.Context, id string, from, to time.Time, overlap string) (json.RawMessage, error) {
	body := omitEmpty(map[string]any{"from": from.UTC().Format(time.RFC3339), "to": to.UTC().Format(time.RFC3339), "overlap": overlap})
	var out json.RawMessage
	_, err := t.c.do(ctx, http.MethodPost, schedulePath(id)+"/backfill", body, &out)
	return out, err
}

func schedulePath(id string) string { return "/schedules/" + url.PathEscape(id) }

func omitEmpty(m map[string]any) map[string]any {
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

// Webhook is an inbound webhook: deliveries to its URL, signed with its
// secret, become events named Event.
type Webhook struct {
	ID     string `json:"id"`
	Event  string `json:"event"`
	Scheme string `json:"scheme,omitempty"` // standard (Standard Webhooks, default) or github
	URL    string `json:"url,omitempty"`
	// Secret is only in the answers of CreateWebhook and RotateWebhook.
	Secret     string    `json:"secret,omitempty"`
	SecretHint string    `json:"secret_hint,omitempty"`
	Deliveries int       `json:"deliveries,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// CreateWebhook creates a webhook; the answer holds its secret, shown
// only then.
func (t *Triggers) CreateWebhook(ctx context.Context, id, event, scheme string) (Webhook, error) {
	var out Webhook
	body := map[string]string{"id": id, "event": event}
	if scheme != "" {
		body["scheme"] = scheme
	}
	_, err := t.c.do(ctx, http.MethodPost, "/webhooks", body, &out)
	return out, err
}

// ListWebhooks lists the tenant's webhooks, without their secrets.
func (t *Triggers) ListWebhooks(ctx context.Context, p Page) ([]Webhook, error) {
	var out struct {
		Webhooks []Webhook `json:"webhooks"`
	}
	_, err := t.c.do(ctx, http.MethodGet, "/webhooks?"+p.query(url.Values{}).Encode(), nil, &out)
	return out.Webhooks, err
}

// GetWebhook reads a webhook.
func (t *Triggers) GetWebhook(ctx context.Context, id string) (Webhook, error) {
	var out Webhook
	_, err := t.c.do(ctx, http.MethodGet, webhookPath(id), nil, &out)
	return out, err
}

// RotateWebhook replaces a webhook's secret; the answer holds the new one.
func (t *Triggers) RotateWebhook(ctx context.Context, id string) (Webhook, error) {
	var out Webhook
	_, err := t.c.do(ctx, http.MethodPost, webhookPath(id)+"/rotate", nil, &out)
	return out, err
}

// DeleteWebhook deletes a webhook.
func (t *Triggers) DeleteWebhook(ctx context.Context, id string) error {
	_, err := t.c.do(ctx, http.MethodDelete, webhookPath(id), nil, nil)
	return err
}

// WebhookDelivery is one result of a webhook's delivery log: Result is
// accepted or refused; Outcome accepted, duplicate, bad_signature,
// stale_timestamp, invalid_body, too_large or id_reused; Reason why a
// refused one was; EventID the event an accepted one made and RunIDs the
// runs it started. Count is how many deliveries the result stands for
// (refused ones not written each time are counted with the next).
type WebhookDelivery struct {
	Seq     int64     `json:"seq"`
	At      time.Time `json:"at"`
	Result  string    `json:"result"`
	Outcome string    `json:"outcome"`
	Reason  string    `json:"reason"`
	Status  int       `json:"status"`
	Count   int64     `json:"count"`
	EventID string    `json:"event_id"`
	RunIDs  []string  `json:"run_ids"`
}

// WebhookDeliveries reads a webhook's delivery log, newest first: at
// most limit results (0: the server's default), only the "accepted" or
// only the "refused" ones when result is not empty. The log keeps each
// webhook's last 100 accepted and last 100 refused results.
func (t *Triggers) WebhookDeliveries(ctx context.Context, id, result string, limit int) ([]WebhookDelivery, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if result != "" {
		q.Set("result", result)
	}
	path := webhookPath(id) + "/deliveries"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out struct {
		Deliveries []WebhookDelivery `json:"deliveries"`
	}
	_, err := t.c.do(ctx, http.MethodGet, path, nil, &out)
	return out.Deliveries, err
}

func webhookPath(id string) string { return "/webhooks/" + url.PathEscape(id) }

// CancelNode cancels one running or waiting node of a run (a scatter
// child by its id, REF[KEY]).
func (c *Client) CancelNode(ctx context.Context, runID, node, reason string) error {
	_, err := c.do(ctx, http.MethodPost, runPath(runID)+"/nodes/"+url.PathEscape(node)+"/cancel", map[string]string{"reason": reason}, nil)
	return err
}
