package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/queries"
)

// TierInfo is a tier: its name, its class in the fair queue and how many
// tenants it has.
type TierInfo struct {
	Name       Tier
	QueueClass Tier
	CreatedAt  time.Time
	Tenants    int64
}

// builtinTier reports one of the tiers named after the fair queue's
// classes, which cannot be removed or moved to another class.
func builtinTier(t Tier) bool {
	_, err := ParseQueueClass(string(t))
	return err == nil
}

// TierList lists the tiers by name.
func (s *Store) TierList(ctx context.Context) ([]TierInfo, error) {
	rows, err := s.q.TierList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tiers: %w", err)
	}
	out := make([]TierInfo, len(rows))
	for i, r := range rows {
		out[i] = TierInfo{Name: Tier(r.Name), QueueClass: Tier(r.QueueClass), CreatedAt: r.CreatedAt, Tenants: r.Tenants}
	}
	return out, nil
}

// TierEnsure creates a tier (in the standard class unless queueClass says)
// or, given a class, moves it to that class. A tier named after a class
// stays in it.
func (s *Store) TierEnsure(ctx context.Context, name Tier, queueClass Tier) (TierInfo, error) {
	if _, err := ParseTier(string(name)); err != nil {
		return TierInfo{}, err
	}
	var class pgtype.Text
	if queueClass != "" {
		if _, err := ParseQueueClass(string(queueClass)); err != nil {
			return TierInfo{}, err
		}
		if builtinTier(name) && queueClass != name {
			return TierInfo{}, apperr.New(apperr.Invalid, "tier %s is the fair queue's %s class and stays in it", name, name)
		}
		class = pgtype.Text{String: string(queueClass), Valid: true}
	}
	r, err := s.q.TierEnsure(ctx, queries.TierEnsureParams{Name: string(name), QueueClass: class})
	if err != nil {
		return TierInfo{}, fmt.Errorf("set tier %s: %w", name, err)
	}
	return TierInfo{Name: Tier(r.Name), QueueClass: Tier(r.QueueClass), CreatedAt: r.CreatedAt}, nil
}

// TierDelete removes a tier with no tenants, and its quotas with it.
func (s *Store) TierDelete(ctx context.Context, name Tier) error {
	if builtinTier(name) {
		return apperr.New(apperr.Invalid, "tier %s is one of the fair queue's classes and cannot be removed", name)
	}
	n, err := s.q.TierDelete(ctx, string(name))
	if isForeignKeyViolation(err) {
		return apperr.New(apperr.Conflict, "tier %s still has tenants: move them to another tier first", name)
	}
	if err != nil {
		return fmt.Errorf("delete tier %s: %w", name, err)
	}
	if n == 0 {
		return apperr.New(apperr.NotFound, "tier %q not found", name)
	}
	return nil
}

// tierKnown checks a tenant's tier: well spelled and existing.
func (s *Store) tierKnown(ctx context.Context, t Tier) error {
	if _, err := ParseTier(string(t)); err != nil {
		return err
	}
	ok, err := s.q.TierExists(ctx, string(t))
	if err != nil {
		return fmt.Errorf("find tier %s: %w", t, err)
	}
	if ok {
		return nil
	}
	tiers, err := s.TierList(ctx)
	if err != nil {
		return err
	}
	names := make([]string, len(tiers))
	for i, ti := range tiers {
		names[i] = string(ti.Name)
	}
	return apperr.New(apperr.Invalid, "unknown tier %q (known: %s; ductor tier set NAME creates one)", t, strings.Join(names, ", "))
}
