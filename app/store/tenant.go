package store

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/queries"
)

// Tier is a tenant's plan tier; it orders its step tasks in the fair queue.
type Tier string

const (
	TierInteractive Tier = "interactive"
	TierStandard    Tier = "standard"
	TierBulk        Tier = "bulk"
)

// Tiers lists the tiers from most to least urgent.
var Tiers = []Tier{TierInteractive, TierStandard, TierBulk}

// ParseTier validates a tier name.
func ParseTier(s string) (Tier, error) {
	t := Tier(s)
	if !slices.Contains(Tiers, t) {
		return "", apperr.New(apperr.Invalid, "unknown tier %q (known: interactive, standard, bulk)", s)
	}
	return t, nil
}

// Tenant is an isolated customer of Ductor.
type Tenant struct {
	ID        uuid.UUID
	Slug      string
	Name      string
	Tier      Tier
	CreatedAt time.Time
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// TenantCreate creates a tenant; the slug must be unused.
func (s *Store) TenantCreate(ctx context.Context, slug, name string, tier Tier) (Tenant, error) {
	if !slugPattern.MatchString(slug) {
		return Tenant{}, apperr.New(apperr.Invalid, "tenant slug %q must match [a-z0-9][a-z0-9-]{0,62}", slug)
	}
	if _, err := ParseTier(string(tier)); err != nil {
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
	return tenantFromRow(row), nil
}

// TenantGetBySlug finds a tenant by its slug.
func (s *Store) TenantGetBySlug(ctx context.Context, slug string) (Tenant, error) {
	row, err := s.q.TenantGetBySlug(ctx, slug)
	if err != nil {
		return Tenant{}, notFound(err, fmt.Sprintf("tenant %q", slug))
	}
	return tenantFromRow(row), nil
}

// TenantGetByID finds a tenant by id.
func (s *Store) TenantGetByID(ctx context.Context, id uuid.UUID) (Tenant, error) {
	row, err := s.q.TenantGetByID(ctx, id)
	if err != nil {
		return Tenant{}, notFound(err, "tenant")
	}
	return tenantFromRow(row), nil
}

// TenantSetTier changes a tenant's tier.
func (s *Store) TenantSetTier(ctx context.Context, id uuid.UUID, tier Tier) (Tenant, error) {
	if _, err := ParseTier(string(tier)); err != nil {
		return Tenant{}, err
	}
	row, err := s.q.TenantSetTier(ctx, queries.TenantSetTierParams{ID: id, Tier: string(tier)})
	if err != nil {
		return Tenant{}, notFound(err, "tenant")
	}
	return tenantFromRow(row), nil
}

func tenantFromRow(r queries.Tenant) Tenant {
	return Tenant{ID: r.ID, Slug: r.Slug, Name: r.Name, Tier: Tier(r.Tier), CreatedAt: r.CreatedAt}
}
