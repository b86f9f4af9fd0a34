package usage

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/store"
)

// Config is what a Service is built from, once, by New.
type Config struct {
	Pool *pgxpool.Pool
	// Logger is slog.Default when nil.
	Logger *slog.Logger
	// Now is the clock quotas are judged by (time.Now when nil).
	Now func() time.Time
	// FoldEvery is how often FoldDue folds (DefaultFoldEvery when zero).
	FoldEvery time.Duration
	// TenantLabels labels the metrics by tenant id as well as tier; off by
	// default, as the number of tenants is unbounded.
	TenantLabels bool
	// OnWarning is called once a warning is recorded (inside the start's
	// transaction, when the start has one), with its ductor.usage.warning
	// system event stored beside it.
	OnWarning func(ctx context.Context, tenantID uuid.UUID, w store.UsageWarning)
}

// DefaultFoldEvery is how often deltas are folded into the rollups.
const DefaultFoldEvery = time.Second

// foldBatch is how many deltas one fold statement moves.
const foldBatch = 5000

// Service meters, reads and bounds tenants' use.
type Service struct {
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	metrics  *metrics
	mu       sync.Mutex
	lastFold time.Time
}

// New builds a Service from cfg.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.FoldEvery <= 0 {
		cfg.FoldEvery = DefaultFoldEvery
	}
	return &Service{cfg: cfg, log: cfg.Logger, now: cfg.Now, metrics: newMetrics(cfg.TenantLabels)}
}

func (s *Service) store() *store.Store { return store.New(s.cfg.Pool) }

// Fold folds every delta into the rollups, in batches, and says how many
// it folded.
func (s *Service) Fold(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := s.store().UsageFold(ctx, foldBatch)
		total += n
		if err != nil || n < foldBatch {
			s.metrics.folded.Add(float64(total))
			return total, err
		}
	}
}

// FoldDue folds when FoldEvery has passed since the last fold; the sweep
// calls it on every round.
func (s *Service) FoldDue(ctx context.Context) {
	s.mu.Lock()
	due := s.now().Sub(s.lastFold) >= s.cfg.FoldEvery
	if due {
		s.lastFold = s.now()
	}
	s.mu.Unlock()
	if !due {
		return
	}
	if _, err := s.Fold(ctx); err != nil && ctx.Err() == nil {
		s.log.ErrorContext(ctx, "fold usage", "err", err)
	}
}
