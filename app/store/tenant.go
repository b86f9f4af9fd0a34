package store

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/queries"
)

// Tier names a tenant's plan tier (free, pro…): it carries the tenant's
// usage quotas and names the fair queue's class (a Tier too:
// interactive, standard or bulk) that orders its step tasks. The three
// classes are tiers of their own name.
type Tier string

const (
	TierInteractive Tier = "interactive"
	TierStandard    Tier = "standard"
	TierBulk        Tier = "bulk"
)

// Tiers lists the fair queue's classes from most to least urgent.
var Tiers = []Tier{TierInteractive, TierStandard, TierBulk}

// ParseQueueClass validates a fair queue class.
func ParseQueueClass(s string) (Tier, error) {
	t := Tier(s)
	if !slices.Contains(Tiers, t) {
		return "", apperr.New(apperr.Invalid, "unknown queue class %q (known: interactive, standard, bulk)", s)
	}
	return t, nil
}

var tierPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// ParseTier validates the spelling of a tier's name; whether the tier
// exists is the database's to say.
func ParseTier(s string) (Tier, error) {
	if !tierPattern.MatchString(s) {
		return "", apperr.New(apperr.Invalid, "tier name %q must match [a-z0-9][a-z0-9-]{0,62}", s)
	}
	return Tier(s), nil
}

// Tenant is an isolated customer of Ductor.
type Tenant struct {
	ID   uuid.UUID
	Slug string
	Name string
	Tier Tier
	// QueueClass is the tier's class in the fair queue.
	QueueClass Tier
	CreatedAt  time.Time
	// MaxConcurrency caps the tenant's steps queued or running (0: none);
	// RatePerSecond limits step starts (0: none).
	MaxConcurrency int
	RatePerSecond  float64
	// Retention is how long the tenant's finished runs are kept (0:
	// forever; DefaultRetention unless set).
	Retention time.Duration
	// ScheduleToStart is how long the tenant's task steps that set no
	// schedule_to_start wait for a worker to claim them (0: the default).
	ScheduleToStart time.Duration
}

// DefaultRetention is how long a new tenant's finished runs are kept.
const DefaultRetention = 30 * 24 * time.Hour

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// TenantCreate creates a tenant; the slug must be unused.
func (s *Store) TenantCreate(ctx context.Context, slug, name string, tier Tier) (Tenant, error) {
	if !slugPattern.MatchString(slug) {
		return Tenant{}, apperr.New(apperr.Invalid, "tenant slug %q must match [a-z0-9][a-z0-9-]{0,62}", slug)
	}
	if err := s.tierKnown(ctx, tier); err != nil {
		return Tenant{}, err
	}
	if name == "" {
		name = slug
	}
	row, err := s.q.TenantCreate(ctx, queries.TenantCreateParams{
		ID: uuid.New(), Slug: slug, Name: name, Tier: string(tier),
	})
	if isUniqueViolation(err) {
		return Tenant{}, apperr.New(apperr.Conflict, "tenant %q already exists", slug)
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("create tenant: %w", err)
	}
	return s.TenantGetByID(ctx, row.ID)
}

// TenantGetBySlug finds a tenant by its slug.
func (s *Store) TenantGetBySlug(ctx context.Context, slug string) (Tenant, error) {
	row, err := s.q.TenantGetBySlug(ctx, slug)
	if err != nil {
		return Tenant{}, notFound(err, fmt.Sprintf("tenant %q", slug))
	}
	return tenantFromRow(row.Tenant, row.QueueClass), nil
}

// TenantGetByID finds a tenant by id.
func (s *Store) TenantGetByID(ctx context.Context, id uuid.UUID) (Tenant, error) {
	row, err := s.q.TenantGetByID(ctx, id)
	if err != nil {
		return Tenant{}, notFound(err, "tenant")
	}
	return tenantFromRow(row.Tenant, row.QueueClass), nil
}

// TenantSetTier changes a tenant's tier.
func (s *Store) TenantSetTier(ctx context.Context, id uuid.UUID, tier Tier) (Tenant, error) {
	if err := s.tierKnown(ctx, tier); err != nil {
		return Tenant{}, err
	}
	row, err := s.q.TenantSetTier(ctx, queries.TenantSetTierParams{ID: id, Tier: string(tier)})
	if err != nil {
		return Tenant{}, notFound(err, "tenant")
	}
	return s.TenantGetByID(ctx, row.ID)
}

func tenantFromRow(r queries.Tenant, queueClass string) Tenant {
	return Tenant{
		ID: r.ID, Slug: r.Slug, Name: r.Name, Tier: Tier(r.Tier), QueueClass: Tier(queueClass), CreatedAt: r.CreatedAt,
		MaxConcurrency: int(r.MaxConcurrency), RatePerSecond: r.RatePerSecond,
		Retention:       time.Duration(r.RetentionSeconds) * time.Second,
		ScheduleToStart: time.Duration(r.ScheduleToStartMs) * time.Millisecond,
	}
}

// TenantSetRetention sets how long the tenant's finished runs are kept, in
// whole seconds (0: forever).
func (s *Store) TenantSetRetention(ctx context.Context, id uuid.UUID, retention time.Duration) (Tenant, error) {
	if retention < 0 || (retention > 0 && retention < time.Second) {
		return Tenant{}, apperr.New(apperr.Invalid, "retention must be 0 (forever) or at least 1s")
	}
	row, err := s.q.TenantSetRetention(ctx, queries.TenantSetRetentionParams{ID: id, RetentionSeconds: int64(retention / time.Second)})
	if err != nil {
		return Tenant{}, notFound(err, "tenant")
	}
	return s.TenantGetByID(ctx, row.ID)
}

// TenantSetScheduleToStart sets how long the tenant's tasks wait for a
// worker by default (0: the server's default).
func (s *Store) TenantSetScheduleToStart(ctx context.Context, id uuid.UUID, d time.Duration) (Tenant, error) {
	if d < 0 {
		return Tenant{}, apperr.New(apperr.Invalid, "schedule_to_start must not be negative")
	}
	row, err := s.q.TenantSetScheduleToStart(ctx, queries.TenantSetScheduleToStartParams{ID: id, ScheduleToStartMs: d.Milliseconds()})
	if err != nil {
		return Tenant{}, notFound(err, "tenant")
	}
	return s.TenantGetByID(ctx, row.ID)
}

// TenantSetLimits sets a tenant's step admission limits.
func (s *Store) TenantSetLimits(ctx context.Context, id uuid.UUID, maxConcurrency int, ratePerSecond float64) (Tenant, error) {
	if maxConcurrency < 0 || ratePerSecond < 0 {
		return Tenant{}, apperr.New(apperr.Invalid, "limits must not be negative")
	}
	row, err := s.q.TenantSetLimits(ctx, queries.TenantSetLimitsParams{
		ID: id, MaxConcurrency: int32(maxConcurrency), RatePerSecond: ratePerSecond,
	})
	if err != nil {
		return Tenant{}, notFound(err, "tenant")
	}
	return s.TenantGetByID(ctx, row.ID)
}

// Bucket is a tenant's token bucket, locked for the transaction.
type Bucket struct {
	Tokens    float64
	UpdatedAt time.Time
	Now       time.Time
}

// TenantBucketLock locks the tenant's admission bucket, creating it full
// (burst tokens) on first use. Holding it serialises the tenant's
// admissions across replicas.
func (s *Store) TenantBucketLock(ctx context.Context, tenantID uuid.UUID, burst float64) (Bucket, error) {
	if err := s.q.TenantBucketEnsure(ctx, queries.TenantBucketEnsureParams{TenantID: tenantID, Tokens: burst}); err != nil {
		return Bucket{}, fmt.Errorf("create bucket: %w", err)
	}
	row, err := s.q.TenantBucketLock(ctx, tenantID)
	if err != nil {
		return Bucket{}, fmt.Errorf("lock bucket: %w", err)
	}
	return Bucket{Tokens: row.Tokens, UpdatedAt: row.UpdatedAt, Now: row.Now}, nil
}

// TenantBucketSet stores the bucket's new level.
func (s *Store) TenantBucketSet(ctx context.Context, tenantID uuid.UUID, tokens float64, at time.Time) error {
	if err := s.q.TenantBucketSet(ctx, queries.TenantBucketSetParams{TenantID: tenantID, Tokens: tokens, UpdatedAt: at}); err != nil {
		return fmt.Errorf("update bucket: %w", err)
	}
	return nil
}

// ParseRetention reads a retention: a Go duration (720h), a number of days
// (30d), or 0 (or forever) to keep runs forever. It must be whole seconds.
func ParseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "forever" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && err != nil {
		n, perr := strconv.Atoi(days)
		d, err = time.Duration(n)*24*time.Hour, perr
	}
	if err != nil || d < time.Second || d%time.Second != 0 {
		return 0, apperr.New(apperr.Invalid, "retention %q must be a duration of whole seconds (720h, 30d) or 0 for forever", s)
	}
	return d, nil
}

// FormatRetention shows a retention as ParseRetention reads it, in days
// when it is whole days.
func FormatRetention(d time.Duration) string {
	switch {
	case d == 0:
		return "forever"
	case d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return d.String()
}

// TenantList lists every tenant by slug (an operator's view).
func (s *Store) TenantList(ctx context.Context) ([]Tenant, error) {
	rows, err := s.q.TenantList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	out := make([]Tenant, len(rows))
	for i, r := range rows {
		out[i] = tenantFromRow(r.Tenant, r.QueueClass)
	}
	return out, nil
}
