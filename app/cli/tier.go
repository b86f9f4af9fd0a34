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
		{"set", tierSetSynopsis,
			"create a tier (free, pro…) or change its fair queue class and usage quotas (none: no limit); its tenants' own quotas override them", runTierSet},
		{"list", "tier list [--output json|table]", "the tiers: queue class, tenants and quotas", runTierList},
		{"delete", "tier delete TIER", "remove a tier with no tenants, and its quotas", runTierDelete},
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

const tierSetSynopsis = "tier set TIER [--queue-class interactive|standard|bulk] [--monthly-steps N] [--monthly-runs N] [--waiting-runs N] [--stored-bytes N] [--soft-percent P]"

func runTierSet(ctx context.Context, env Env, args []string) error {
	const synopsis = tierSetSynopsis
	fs := newFlags(synopsis, env)
	class := fs.String("queue-class", "", "the fair queue class of its tenants' step tasks: interactive, standard (a new tier's default) or bulk")
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
	if c.SoftPercent != nil && (*c.SoftPercent < 1 || *c.SoftPercent > 100) {
		return usagef("--soft-percent must be from 1 to 100")
	}
	var queueClass store.Tier
	if *class != "" {
		if queueClass, err = store.ParseQueueClass(*class); err != nil {
			return err
		}
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		return s.InTx(ctx, func(tx *store.Store) error {
			info, err := tx.TierEnsure(ctx, tier, queueClass)
			if err != nil {
				return err
			}
			if set {
				if err := tx.UsageTierQuotaSet(ctx, tier, c); err != nil {
					return err
				}
			}
			fmt.Fprintf(env.Stdout, "tier %s: queue class %s%s\n", tier, info.QueueClass, map[bool]string{true: ", quotas set"}[set])
			return nil
		})
	})
}

func runTierList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("tier list [--output json|table]", env)
	out := outputFlag(fs, env)
	cfg, _, err := loadConfig(fs, args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	type tierView struct {
		Name         string `json:"name"`
		QueueClass   string `json:"queue_class"`
		Tenants      int64  `json:"tenants"`
		MonthlySteps *int64 `json:"monthly_steps"`
		MonthlyRuns  *int64 `json:"monthly_runs"`
		WaitingRuns  *int64 `json:"waiting_runs"`
		StoredBytes  *int64 `json:"stored_bytes"`
		SoftPercent  int    `json:"soft_percent"`
	}
	limit := func(n int64) *int64 {
		if n < 0 {
			return nil
		}
		return &n
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		tiers, err := s.TierList(ctx)
		if err != nil {
			return err
		}
		quotas, err := s.UsageTierQuotas(ctx)
		if err != nil {
			return err
		}
		views := make([]tierView, len(tiers))
		for i, t := range tiers {
			q := store.TierQuota(quotas, t.Name)
			views[i] = tierView{Name: string(t.Name), QueueClass: string(t.QueueClass), Tenants: t.Tenants,
				MonthlySteps: limit(q.MonthlySteps), MonthlyRuns: limit(q.MonthlyRuns), WaitingRuns: limit(q.WaitingRuns),
				StoredBytes: limit(q.StoredBytes), SoftPercent: q.SoftPercent}
		}
		cell := func(n *int64) string {
			if n == nil {
				return "none"
			}
			return strconv.FormatInt(*n, 10)
		}
		return render(env, *out, map[string]any{"tiers": views}, func(any) *table {
			t := &table{header: []string{"TIER", "QUEUE_CLASS", "TENANTS", "MONTHLY_STEPS", "MONTHLY_RUNS", "WAITING_RUNS", "STORED_BYTES", "SOFT_PERCENT"}}
			for _, v := range views {
				t.add(v.Name, v.QueueClass, fmt.Sprint(v.Tenants), cell(v.MonthlySteps), cell(v.MonthlyRuns), cell(v.WaitingRuns), cell(v.StoredBytes), fmt.Sprint(v.SoftPercent))
			}
			return t
		})
	})
}

func runTierDelete(ctx context.Context, env Env, args []string) error {
	const synopsis = "tier delete TIER"
	fs := newFlags(synopsis, env)
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
	return withStore(ctx, cfg, func(s *store.Store) error {
		if err := s.TierDelete(ctx, tier); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "tier %s: deleted\n", tier)
		return nil
	})
}
