package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/store"
)

func tierSubcommands() []subcommand {
	return []subcommand{
		{"set", "tier set TIER [--monthly-steps N] [--monthly-runs N] [--waiting-runs N] [--stored-bytes N] [--soft-percent P]",
			"set a tier's usage quotas (none: no limit); its tenants' own quotas override them", runTierSet},
	}
}

// runTier handles `ductor tier …`.
func runTier(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "tier", tierSubcommands(), args)
}

// quotaFlags are the flags that set usage quotas, on tier set and tenant
// set: a number, or none to clear the quota.
type quotaFlags struct {
	steps, runs, waiting, bytes, soft *string
}

func addQuotaFlags(fs *flags) quotaFlags {
	return quotaFlags{
		steps:   fs.String("monthly-steps", "", "step attempts a month (none: no limit)"),
		runs:    fs.String("monthly-runs", "", "runs started a month (none: no limit)"),
		waiting: fs.String("waiting-runs", "", "runs waiting at once (none: no limit)"),
		bytes:   fs.String("stored-bytes", "", "bytes of run inputs and step outputs stored (none: no limit)"),
		soft:    fs.String("soft-percent", "", "percent of a quota past which a ductor.usage.warning is recorded (default 80)"),
	}
}

// change is what the flags set; set reports whether any was given.
func (q quotaFlags) change() (c store.QuotaChange, set bool, err error) {
	for _, f := range []struct {
		name string
		v    *string
		to   **int64
	}{{"monthly-steps", q.steps, &c.MonthlySteps}, {"monthly-runs", q.runs, &c.MonthlyRuns},
		{"waiting-runs", q.waiting, &c.WaitingRuns}, {"stored-bytes", q.bytes, &c.StoredBytes}} {
		if *f.to, err = quotaValue(f.name, *f.v); err != nil {
			return c, false, err
		}
		set = set || *f.to != nil
	}
	if *q.soft != "" {
		p, err := strconv.Atoi(*q.soft)
		if err != nil {
			return c, false, usagef("--soft-percent must be a whole percent, not %q", *q.soft)
		}
		c.SoftPercent, set = &p, true
	}
	return c, set, nil
}

// quotaValue parses a quota flag: "" is unchanged, none is no limit (-1).
func quotaValue(name, v string) (*int64, error) {
	switch v {
	case "":
		return nil, nil
	case "none":
		n := int64(-1)
		return &n, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return nil, usagef("--%s must be a count of zero or more, or none, not %q", name, v)
	}
	return &n, nil
}

// applyTenant sets a tenant's own quotas, if any flag was given.
func (q quotaFlags) applyTenant(ctx context.Context, s *store.Store, tenantID uuid.UUID) error {
	c, set, err := q.change()
	if err != nil || !set {
		return err
	}
	if c.SoftPercent != nil && (*c.SoftPercent < 1 || *c.SoftPercent > 100) {
		return usagef("--soft-percent must be from 1 to 100")
	}
	return s.UsageTenantQuotaSet(ctx, tenantID, c)
}

func runTierSet(ctx context.Context, env Env, args []string) error {
	const synopsis = "tier set TIER [--monthly-steps N] [--monthly-runs N] [--waiting-runs N] [--stored-bytes N] [--soft-percent P]"
	fs := newFlags(synopsis, env)
	quotas := addQuotaFlags(fs)
	name, rest := splitPositional(args)
	cfg, _, err := loadConfig(fs, rest, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if name == "" {
		return want("ductor " + synopsis)
	}
	tier, err := store.ParseTier(name)
	if err != nil {
		return err
	}
	c, set, err := quotas.change()
	if err != nil {
		return err
	}
	if !set {
		return usagef("ductor tier set %s: give at least one quota", name)
	}
	if c.SoftPercent != nil && (*c.SoftPercent < 1 || *c.SoftPercent > 100) {
		return usagef("--soft-percent must be from 1 to 100")
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		if err := s.UsageTierQuotaSet(ctx, tier, c); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "tier %s: quotas set\n", tier)
		return nil
	})
}
