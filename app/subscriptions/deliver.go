package subscriptions

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/sysevents"
	"github.com/ductor/ductor/app/version"
	"github.com/ductor/ductor/app/webhook"
)

// maxExcerpt bounds the response body kept in the delivery log.
const maxExcerpt = 1024

// payload is the body every attempt of an event's deliveries posts:
// the Standard Webhooks envelope.
func payload(e store.Event) ([]byte, error) {
	return jsonvalue.Marshal(map[string]any{
		"id": e.ID.String(), "type": e.Name, "timestamp": e.CreatedAt.UTC().Format(time.RFC3339Nano), "data": e.Data,
	})
}

// Run sends due deliveries until ctx ends, up to Config.Senders at once,
// each in its own goroutine. Every process that runs it shares the work
// through the claim's SKIP LOCKED.
func (c *Service) Run(ctx context.Context) {
	if c.cfg.Secrets == nil {
		return
	}
	slots := make(chan struct{}, c.cfg.Senders)
	done := make(chan struct{}, c.cfg.Senders)
	t := time.NewTicker(c.cfg.PollEvery)
	defer t.Stop()
	for {
		if free := cap(slots) - len(slots); free > 0 {
			ds, err := c.claim(ctx, free)
			if err != nil && ctx.Err() == nil {
				c.log.ErrorContext(ctx, "claim deliveries", "err", err)
			}
			for _, d := range ds {
				slots <- struct{}{}
				go func() {
					defer func() { <-slots; done <- struct{}{} }()
					c.send(context.WithoutCancel(ctx), d)
				}()
			}
		}
		select {
		case <-ctx.Done():
			for range len(slots) {
				<-done
			}
			return
		case <-t.C:
		case <-done:
		}
	}
}

// claim leases up to max due deliveries for this process, until the
// timeout and a half from now.
func (c *Service) claim(ctx context.Context, max int) ([]store.SubscriptionDelivery, error) {
	lease := c.cfg.Timeout + c.cfg.Timeout/2 + time.Second
	if c.cfg.UnguardedClaim {
		return store.New(c.pool).SubscriptionDeliveriesClaimUnguarded(ctx, max, lease)
	}
	return store.New(c.pool).SubscriptionDeliveriesClaim(ctx, max, c.cfg.PerTenant, lease)
}

// outcome is one attempt's result before it is recorded.
type outcome struct {
	status  int
	latency time.Duration
	excerpt string
	err     string
}

func (o outcome) ok() bool { return o.err == "" && o.status >= 200 && o.status < 300 }

// send makes one attempt of a claimed delivery and records it.
func (c *Service) send(ctx context.Context, d store.SubscriptionDelivery) {
	s := store.New(c.pool)
	sub, err := s.SubscriptionGet(ctx, d.TenantID, d.SubscriptionID)
	if err != nil {
		c.log.ErrorContext(ctx, "delivery's subscription", "err", err)
		return
	}
	if sub.FilterExpr != "" {
		match, err := c.filter(ctx, sub.FilterExpr, d.Body)
		if err != nil || !match {
			c.metrics.deliveries.WithLabelValues("filtered").Inc()
			o := store.SubscriptionOutcome{Status: "filtered", Attempt: store.SubscriptionAttempt{TenantID: d.TenantID, DeliveryID: d.ID, Attempt: d.Attempts}}
			if err != nil {
				o.Attempt.Error = "filter_expr: " + err.Error()
			}
			if _, err := s.SubscriptionDeliveryFinish(ctx, o); err != nil {
				c.log.ErrorContext(ctx, "record delivery", "err", err)
			}
			return
		}
	}
	res := c.post(ctx, sub, d)
	c.metrics.latency.Observe(res.latency.Seconds())
	if err := c.record(ctx, sub, d, res); err != nil {
		c.log.ErrorContext(ctx, "record delivery", "err", err)
	}
}

// filter evaluates a subscription's filter with `event` the event's data.
func (c *Service) filter(ctx context.Context, src string, body []byte) (bool, error) {
	cache, err := c.exprs()
	if err != nil {
		return false, err
	}
	p, err := cache.Get(src, expr.KindBool)
	if err != nil {
		return false, err
	}
	v, err := jsonvalue.Decode(body)
	if err != nil {
		return false, err
	}
	m, _ := v.(map[string]any)
	return p.EvalBool(ctx, expr.Vars{Event: m["data"], Now: time.Now().UTC()})
}

// Headers signs a delivery: webhook-id (the event's id, the same on every
// attempt), webhook-timestamp and webhook-signature, with one signature
// per secret (the previous one too during a rotation's grace).
func Headers(id string, ts time.Time, body []byte, secrets ...string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sigs = append(sigs, webhook.SignStandard(s, id, ts.Unix(), body))
	}
	h.Set("webhook-signature", strings.Join(sigs, " "))
	return h
}

func (c *Service) secrets(sub store.Subscription) ([]string, error) {
	cur, err := c.cfg.Secrets.Open(sub.Secret, aad(sub.TenantID, sub.ID))
	if err != nil {
		return nil, err
	}
	out := []string{string(cur)}
	if sub.PreviousSecret != nil && sub.PreviousUntil != nil && time.Now().Before(*sub.PreviousUntil) {
		if prev, err := c.cfg.Secrets.Open(sub.PreviousSecret, aad(sub.TenantID, sub.ID)); err == nil {
			out = append(out, string(prev))
		}
	}
	return out, nil
}

func (c *Service) post(ctx context.Context, sub store.Subscription, d store.SubscriptionDelivery) outcome {
	secrets, err := c.secrets(sub)
	if err != nil {
		return outcome{err: "the signing secret cannot be opened: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Url, bytes.NewReader(d.Body))
	if err != nil {
		return outcome{err: err.Error()}
	}
	for k, v := range Headers(d.EventID.String(), time.Now(), d.Body, secrets...) {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", version.UserAgent())
	start := time.Now()
	resp, err := c.client.Do(req)
	if err != nil {
		o := outcome{latency: time.Since(start), err: err.Error()}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			o.err = "no answer within " + c.cfg.Timeout.String()
		}
		return o
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxExcerpt))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return outcome{status: resp.StatusCode, latency: time.Since(start), excerpt: excerpt(b)}
}

func excerpt(b []byte) string {
	for !utf8.Valid(b) && len(b) > 0 {
		b = b[:len(b)-1]
	}
	return strings.ToValidUTF8(string(b), "")
}

// backoff is the wait after the n-th failed attempt: Backoff doubled per
// attempt, at most MaxBackoff, less up to a quarter at random.
func (c *Service) backoff(n int32) time.Duration {
	d := c.cfg.Backoff
	for i := int32(1); i < n && d < c.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.cfg.MaxBackoff)
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

// record writes the attempt and what comes next, in one transaction: the
// delivery's next status, the subscription's run of failures and, when
// this failure disables it, the ductor.subscription.disabled event.
func (c *Service) record(ctx context.Context, sub store.Subscription, d store.SubscriptionDelivery, res outcome) error {
	o := store.SubscriptionOutcome{Attempt: store.SubscriptionAttempt{
		TenantID: d.TenantID, DeliveryID: d.ID, Attempt: d.Attempts, StatusCode: int32(res.status),
		LatencyMs: int32(res.latency.Milliseconds()), ResponseExcerpt: res.excerpt, Error: res.err,
	}}
	label := "delivered"
	switch delay := c.backoff(d.Attempts); {
	case res.ok():
		o.Status = "delivered"
	case time.Since(d.CreatedAt)+delay > c.cfg.MaxAge:
		o.Status, label = "failed", "failed"
	default:
		o.Status, o.Delay, label = "pending", delay, "retry"
	}
	c.metrics.deliveries.WithLabelValues(label).Inc()
	return store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		if _, err := s.SubscriptionDeliveryFinish(ctx, o); err != nil {
			return err
		}
		switch o.Status {
		case "delivered":
			return s.SubscriptionSucceeded(ctx, sub.TenantID, sub.ID)
		case "failed":
			reason := "the last " + strconv.Itoa(c.cfg.DisableAfter) + " deliveries failed"
			failures, disabled, err := s.SubscriptionFailed(ctx, sub.TenantID, sub.ID, c.cfg.DisableAfter, reason)
			if err != nil || !disabled {
				return err
			}
			c.metrics.disabled.Inc()
			e := sysevents.Disabled(sysevents.Subscription{
				ID: sub.ID, URL: sub.Url, Failures: failures, Reason: reason, Disabled: d.ID.String(),
			})
			_, err = s.SystemEventAdd(ctx, sub.TenantID, e.ID, e.Name, e.Data)
			return err
		}
		return nil
	})
}
