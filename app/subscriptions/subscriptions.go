// Package subscriptions sends a tenant's events out: outbound webhook
// subscriptions, each a URL, the event names it takes and an optional CEL
// filter, delivered at least once and signed with the Standard Webhooks
// scheme (webhook-id, webhook-timestamp, webhook-signature).
//
// An event's deliveries are created in the transaction that publishes or
// dispatches it (Service.Outbound), one per subscription, so a committed
// event is never lost and a rolled-back one never sent. Service.Run sends
// them: it claims due deliveries, at most one per subscription and none
// of a subscription whose receiver is still answering (a receiver that
// hangs holds up only its own deliveries, for at most Config.Timeout),
// and leases each claim, so that a process that dies mid-send leaves the
// delivery to be claimed again when the lease runs out. Every attempt of
// a delivery carries the same webhook-id, the event's id, which is what
// receivers deduplicate on.
//
// A failed attempt (no answer, or an answer outside 2xx) is tried again
// after an exponential backoff with jitter until Config.MaxAge has passed
// since the event; a delivery that runs out counts as a failure of its
// subscription, and Config.DisableAfter failures in a row disable it,
// with a ductor.subscription.disabled system event.
package subscriptions

import (
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/steps"
)

// Defaults of Config.
const (
	DefaultMaxAge       = 24 * time.Hour
	DefaultDisableAfter = 20
	DefaultTimeout      = 10 * time.Second
	DefaultBackoff      = 5 * time.Second
	DefaultMaxBackoff   = time.Hour
	DefaultSenders      = 16
	DefaultRotateGrace  = 24 * time.Hour
	DefaultPollEvery    = 200 * time.Millisecond
	// MaxPerTenant bounds a tenant's subscriptions.
	MaxPerTenant = 100
)

// Config is what the service is built from, once, by New.
type Config struct {
	Pool *pgxpool.Pool
	// Secrets seals the signing secrets; with none, subscriptions cannot
	// be created and nothing is sent (DUCTOR_SECRET_KEY).
	Secrets *secrets.Box
	// Logger is slog.Default when nil.
	Logger *slog.Logger
	// Allow lists the prefixes receivers may be at although the SSRF
	// guard of http steps refuses them (DUCTOR_HTTP_ALLOW).
	Allow []netip.Prefix
	// Client sends the deliveries; nil: the SSRF-guarded client of http
	// steps (steps.NewGuardedClient) with Allow.
	Client *http.Client
	// MaxAge is how long a delivery is tried for after its event.
	MaxAge time.Duration
	// DisableAfter is how many deliveries in a row may run out of
	// attempts before the subscription is disabled.
	DisableAfter int
	// Timeout bounds one attempt.
	Timeout time.Duration
	// Backoff is the wait after the first failed attempt, doubling after
	// each further one up to MaxBackoff, less up to a quarter at random.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Senders is how many deliveries one process sends at once, and
	// PerTenant how many of one tenant's may be being sent at once (across
	// processes; default a quarter of Senders, at least 1).
	Senders   int
	PerTenant int
	// RotateGrace is how long the previous secret still signs after a
	// rotation.
	RotateGrace time.Duration
	// PollEvery is how often Run looks for due deliveries.
	PollEvery time.Duration
	// UnguardedClaim is a fault only the delivery checker sets: claims
	// read due deliveries without locking them or minding those being
	// sent, so that processes claim the same ones.
	UnguardedClaim bool
}

// Service creates, lists and changes subscriptions and sends their
// deliveries.
type Service struct {
	cfg     Config
	pool    *pgxpool.Pool
	log     *slog.Logger
	client  *http.Client
	metrics *metrics
	exprs   func() (*expr.Cache, error)
}

// New builds the service.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Client == nil {
		cfg.Client = steps.NewGuardedClient(cfg.Allow)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.MaxAge, DefaultMaxAge)
	def(&cfg.Timeout, DefaultTimeout)
	def(&cfg.Backoff, DefaultBackoff)
	def(&cfg.MaxBackoff, DefaultMaxBackoff)
	def(&cfg.RotateGrace, DefaultRotateGrace)
	def(&cfg.PollEvery, DefaultPollEvery)
	if cfg.DisableAfter <= 0 {
		cfg.DisableAfter = DefaultDisableAfter
	}
	if cfg.Senders <= 0 {
		cfg.Senders = DefaultSenders
	}
	if cfg.PerTenant <= 0 {
		cfg.PerTenant = max(1, cfg.Senders/4)
	}
	return &Service{
		cfg: cfg, pool: cfg.Pool, log: cfg.Logger, client: cfg.Client, metrics: newMetrics(),
		exprs: sync.OnceValues(func() (*expr.Cache, error) {
			env, err := expr.NewEnv()
			if err != nil {
				return nil, err
			}
			return expr.NewCache(env, 256), nil
		}),
	}
}
