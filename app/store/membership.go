package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/queries"
)

// Member is a person's place in a tenant. Members are keyed by email, so a
// person can be added before their first login; Name and LastLoginAt are
// known once they have logged in.
type Member struct {
	TenantID    uuid.UUID
	Email       string
	Role        auth.Role
	CreatedAt   time.Time
	Name        string
	LastLoginAt *time.Time
}

// Membership is one of a person's tenants and their role in it.
type Membership struct {
	Tenant Tenant
	Role   auth.Role
}

// MemberSet adds a person to a tenant or changes their role. A tenant that
// has an owner keeps at least one.
func (s *Store) MemberSet(ctx context.Context, tenantID uuid.UUID, email string, role auth.Role) (Member, error) {
	e, err := NormalizeEmail(email)
	if err != nil {
		return Member{}, err
	}
	if _, err := auth.ParseRole(string(role)); err != nil {
		return Member{}, apperr.New(apperr.Invalid, "%s", err.Error())
	}
	var out Member
	err = s.changeMembers(ctx, tenantID, func(tx *Store) error {
		row, err := tx.q.MembershipUpsert(ctx, queries.MembershipUpsertParams{TenantID: tenantID, Email: e, Role: string(role)})
		if err != nil {
			return fmt.Errorf("set member: %w", err)
		}
		out = Member{TenantID: row.TenantID, Email: row.Email, Role: auth.Role(row.Role), CreatedAt: row.CreatedAt}
		return nil
	})
	return out, err
}

// MemberRemove takes a person out of a tenant; the last owner stays.
func (s *Store) MemberRemove(ctx context.Context, tenantID uuid.UUID, email string) error {
	e, err := NormalizeEmail(email)
	if err != nil {
		return err
	}
	return s.changeMembers(ctx, tenantID, func(tx *Store) error {
		if _, err := tx.q.MembershipDelete(ctx, queries.MembershipDeleteParams{TenantID: tenantID, Email: e}); err != nil {
			return notFound(err, "member")
		}
		return nil
	})
}

// changeMembers runs fn with the tenant locked and refuses a change that
// leaves a tenant which had an owner without one.
func (s *Store) changeMembers(ctx context.Context, tenantID uuid.UUID, fn func(tx *Store) error) error {
	return s.InTx(ctx, func(tx *Store) error {
		if err := tx.q.TenantLock(ctx, tenantID); err != nil {
			return notFound(err, "tenant")
		}
		before, err := tx.q.MembershipCountOwners(ctx, tenantID)
		if err != nil {
			return fmt.Errorf("count owners: %w", err)
		}
		if err := fn(tx); err != nil {
			return err
		}
		after, err := tx.q.MembershipCountOwners(ctx, tenantID)
		if err != nil {
			return fmt.Errorf("count owners: %w", err)
		}
		if before > 0 && after == 0 {
			return apperr.New(apperr.Conflict, "a tenant keeps at least one owner")
		}
		return nil
	})
}

// MemberGet finds a person's membership of a tenant.
func (s *Store) MemberGet(ctx context.Context, tenantID uuid.UUID, email string) (Member, error) {
	row, err := s.q.MembershipGet(ctx, queries.MembershipGetParams{TenantID: tenantID, Email: email})
	if err != nil {
		return Member{}, notFound(err, "member")
	}
	return Member{TenantID: row.TenantID, Email: row.Email, Role: auth.Role(row.Role), CreatedAt: row.CreatedAt}, nil
}

// MemberList lists a tenant's members by email.
func (s *Store) MemberList(ctx context.Context, tenantID uuid.UUID) ([]Member, error) {
	rows, err := s.q.MembershipList(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	out := make([]Member, len(rows))
	for i, r := range rows {
		out[i] = Member{
			TenantID: r.TenantID, Email: r.Email, Role: auth.Role(r.Role),
			CreatedAt: r.CreatedAt, Name: r.Name, LastLoginAt: r.LastLoginAt,
		}
	}
	return out, nil
}

// MembershipsOf lists the tenants a person belongs to, by slug.
func (s *Store) MembershipsOf(ctx context.Context, email string) ([]Membership, error) {
	rows, err := s.q.MembershipListByEmail(ctx, email)
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	out := make([]Membership, len(rows))
	for i, r := range rows {
		out[i] = Membership{
			Tenant: Tenant{ID: r.ID, Slug: r.Slug, Name: r.Name, Tier: Tier(r.Tier)},
			Role:   auth.Role(r.Role),
		}
	}
	return out, nil
}
