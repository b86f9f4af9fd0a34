package cli

import (
	"context"
	"fmt"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
)

// apply writes the plan and returns what to print once it is committed:
// one line per tenant, definition, key and member.
func (p seedPlan) apply(ctx context.Context, s *store.Store) ([]string, error) {
	var out []string
	for _, t := range p.tenants {
		lines, err := t.apply(ctx, s, p.box)
		if err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.Slug, err)
		}
		out = append(out, lines...)
	}
	return out, nil
}

func (t plannedTenant) apply(ctx context.Context, s *store.Store, box *secrets.Box) ([]string, error) {
	tenant, created, err := ensureTenant(ctx, s, t)
	if err != nil {
		return nil, err
	}
	out := []string{fmt.Sprintf("tenant %s %s (%s)", t.Slug, tenant.ID, createdOr(created, "exists"))}
	for _, d := range t.defs {
		v, created, err := s.DefinitionPublish(ctx, tenant.ID, store.Publication{
			Manifest: d.compiled.Manifest, ManifestHash: d.compiled.Hash,
			Source: string(d.source), SourceFormat: d.format.String(), Actor: store.ActorCLI,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("definition %s/%s v%d %s (%s)", t.Slug, v.Key, v.Version, v.ManifestHash, createdOr(created, "unchanged")))
	}
	keys, err := t.applyKeys(ctx, s, tenant)
	if err != nil {
		return nil, err
	}
	out = append(out, keys...)
	for i, m := range t.Members {
		member, err := addMember(ctx, s, t.Slug, m.Email, t.roles[i])
		if err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("member %s/%s %s", t.Slug, member.Email, member.Role))
	}
	schedules, err := t.applySchedules(ctx, s, tenant)
	if err != nil {
		return nil, err
	}
	webhooks, err := t.applyWebhooks(ctx, s, tenant, box)
	if err != nil {
		return nil, err
	}
	return append(append(out, schedules...), webhooks...), nil
}

func ensureTenant(ctx context.Context, s *store.Store, t plannedTenant) (store.Tenant, bool, error) {
	tenant, err := s.TenantGetBySlug(ctx, t.Slug)
	if err == nil || !apperr.Is(err, apperr.NotFound) {
		return tenant, false, err
	}
	tenant, err = s.TenantCreate(ctx, t.Slug, t.Name, t.tier)
	return tenant, err == nil, err
}

// applyKeys creates the keys the tenant has none of by that name (revoked
// ones do not count) and prints their secrets.
func (t plannedTenant) applyKeys(ctx context.Context, s *store.Store, tenant store.Tenant) ([]string, error) {
	existing, err := s.APIKeyList(ctx, tenant.ID)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, k := range existing {
		have[k.Name] = have[k.Name] || k.RevokedAt == nil
	}
	var out []string
	for i, k := range t.APIKeys {
		if have[k.Name] {
			out = append(out, fmt.Sprintf("apikey %s/%s exists (its secret was shown when it was created)", t.Slug, k.Name))
			continue
		}
		_, secret, err := s.APIKeyCreate(ctx, tenant.ID, k.Name, t.scopes[i])
		if err != nil {
			return nil, err
		}
		have[k.Name] = true
		out = append(out, fmt.Sprintf("apikey %s/%s %s", t.Slug, k.Name, secret))
	}
	return out, nil
}

func createdOr(created bool, otherwise string) string {
	if created {
		return "created"
	}
	return otherwise
}
