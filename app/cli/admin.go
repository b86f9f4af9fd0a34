package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/config"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/store"
)

// runMigrate applies migrations; a second run applies nothing.
func runMigrate(ctx context.Context, env Env, args []string) error {
	cfg, _, err := loadConfig(newFlags("migrate", env), args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	pool, err := requireDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	applied, err := migrate(ctx, pool, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(env.Stdout, "migrations are current; nothing applied")
	}
	for _, name := range applied {
		fmt.Fprintln(env.Stdout, "applied", name)
	}
	return nil
}

func tenantSubcommands() []subcommand {
	return []subcommand{
		{"create", "tenant create SLUG [--tier standard] [--name NAME]", "create a tenant; prints its id", runTenantCreate},
		{"list", "tenant list [--output json|table]", "every tenant", runTenantList},
		{"set", "tenant set SLUG [--tier T] [--max-concurrency N] [--rate R] [--retention D] [--schedule-to-start D] [--monthly-steps N]…", "change a tenant's tier, step admission limits (0: none), retention of finished runs, how long tasks wait for a worker, and its usage quotas (as tier set's flags)", runTenantSet},
	}
}

// runTenant handles `ductor tenant …`.
func runTenant(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "tenant", tenantSubcommands(), args)
}

func runTenantCreate(ctx context.Context, env Env, args []string) error {
	const synopsis = "tenant create SLUG [--tier standard] [--name NAME]"
	fs := newFlags(synopsis, env)
	tier := fs.String("tier", string(store.TierStandard), "its tier: interactive, standard, bulk or one made with tier set")
	name := fs.String("name", "", "display name (default: the slug)")
	slug, rest := splitPositional(args)
	cfg, extra, err := loadConfig(fs, rest, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if slug == "" && len(extra) > 0 {
		slug = extra[0]
	}
	if slug == "" {
		return want("ductor " + synopsis)
	}
	t, err := store.ParseTier(*tier)
	if err != nil {
		return err
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		tenant, err := s.TenantCreate(ctx, slug, *name, t)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, tenant.ID)
		return nil
	})
}

// tenantView is a tenant as `tenant list` shows it.
type tenantView struct {
	ID             string  `json:"id"`
	Slug           string  `json:"slug"`
	Name           string  `json:"name"`
	Tier           string  `json:"tier"`
	MaxConcurrency int     `json:"max_concurrency"`
	RatePerSecond  float64 `json:"rate_per_second"`
	Retention      string  `json:"retention"`
	CreatedAt      string  `json:"created_at"`
}

func runTenantList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("tenant list [--output json|table]", env)
	out := outputFlag(fs, env)
	cfg, _, err := loadConfig(fs, args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		list, err := s.TenantList(ctx)
		if err != nil {
			return err
		}
		views := make([]tenantView, len(list))
		for i, t := range list {
			views[i] = tenantView{ID: t.ID.String(), Slug: t.Slug, Name: t.Name, Tier: string(t.Tier),
				MaxConcurrency: t.MaxConcurrency, RatePerSecond: t.RatePerSecond, Retention: store.FormatRetention(t.Retention),
				CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339)}
		}
		return render(env, *out, map[string]any{"tenants": views}, func(any) *table {
			t := &table{header: []string{"ID", "SLUG", "NAME", "TIER", "MAX_CONCURRENCY", "RATE", "RETENTION", "CREATED"}}
			for _, v := range views {
				t.add(v.ID, v.Slug, v.Name, v.Tier, fmt.Sprint(v.MaxConcurrency), fmt.Sprint(v.RatePerSecond), v.Retention, v.CreatedAt)
			}
			return t
		})
	})
}

func apikeySubcommands() []subcommand {
	return []subcommand{
		{"create", "apikey create --tenant SLUG [--scope S]... [--name N]", "create a key; prints it, alone on one line, once (default scope: admin)", runAPIKeyCreate},
		{"list", "apikey list --tenant SLUG [--output json|table]", "a tenant's keys: prefix, name, scopes, last use, revocation", runAPIKeyList},
		{"revoke", "apikey revoke --tenant SLUG KEY_ID", "revoke a key (its id from `apikey list`)", runAPIKeyRevoke},
	}
}

// runAPIKey handles `ductor apikey …`.
func runAPIKey(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "apikey", apikeySubcommands(), args)
}

func runAPIKeyCreate(ctx context.Context, env Env, args []string) error {
	const synopsis = "apikey create --tenant SLUG [--scope S]... [--name N]"
	fs := newFlags(synopsis, env)
	tenant := fs.String("tenant", "", "tenant slug (required)")
	name := fs.String("name", "", "a name to recognise the key by")
	var scopes multiFlag
	fs.Var(&scopes, "scope", "a scope; repeat for several (default: admin)")
	cfg, _, err := loadConfig(fs, args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if *tenant == "" {
		return usagef("--tenant is required: want `ductor %s`", synopsis)
	}
	sc, err := auth.ParseScopes(scopes)
	if err != nil {
		return err
	}
	return withTenant(ctx, cfg, *tenant, func(s *store.Store, t store.Tenant) error {
		key, secret, err := s.APIKeyCreate(ctx, t.ID, *name, sc)
		if err != nil {
			return err
		}
		if err := s.AuditRecord(ctx, t.ID, "cli", store.AuditKeyCreate, key.Prefix, map[string]any{"name": key.Name}); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, secret)
		return nil
	})
}

// keyView is a key as `apikey list` shows it; never its secret.
type keyView struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Prefix     string   `json:"prefix"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
	RevokedAt  *string  `json:"revoked_at"`
}

func runAPIKeyList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("apikey list --tenant SLUG [--output json|table]", env)
	tenant := fs.String("tenant", "", "tenant slug (required)")
	out := outputFlag(fs, env)
	cfg, _, err := loadConfig(fs, args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if *tenant == "" {
		return usagef("--tenant is required: want `ductor apikey list --tenant SLUG`")
	}
	return withTenant(ctx, cfg, *tenant, func(s *store.Store, t store.Tenant) error {
		keys, err := s.APIKeyList(ctx, t.ID)
		if err != nil {
			return err
		}
		views := make([]keyView, len(keys))
		for i, k := range keys {
			views[i] = viewOfKey(k)
		}
		return render(env, *out, map[string]any{"api_keys": views}, func(any) *table {
			t := &table{header: []string{"ID", "NAME", "PREFIX", "SCOPES", "CREATED", "LAST_USED", "REVOKED"}}
			for _, v := range views {
				t.add(v.ID, v.Name, v.Prefix, v.Scopes, v.CreatedAt, deref(v.LastUsedAt), deref(v.RevokedAt))
			}
			return t
		})
	})
}

func viewOfKey(k store.APIKey) keyView {
	v := keyView{ID: k.ID.String(), Name: k.Name, Prefix: k.Prefix, CreatedAt: stamp(&k.CreatedAt)}
	for _, s := range k.Scopes {
		v.Scopes = append(v.Scopes, string(s))
	}
	if k.LastUsedAt != nil {
		s := stamp(k.LastUsedAt)
		v.LastUsedAt = &s
	}
	if k.RevokedAt != nil {
		s := stamp(k.RevokedAt)
		v.RevokedAt = &s
	}
	return v
}

func stamp(t *time.Time) string { return t.UTC().Format(time.RFC3339) }

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func runAPIKeyRevoke(ctx context.Context, env Env, args []string) error {
	const synopsis = "apikey revoke --tenant SLUG KEY_ID"
	fs := newFlags(synopsis, env)
	tenant := fs.String("tenant", "", "tenant slug (required)")
	id, rest := splitPositional(args)
	cfg, extra, err := loadConfig(fs, rest, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if id == "" && len(extra) > 0 {
		id = extra[0]
	}
	keyID, perr := uuid.Parse(id)
	if *tenant == "" || perr != nil {
		return want("ductor " + synopsis)
	}
	return withTenant(ctx, cfg, *tenant, func(s *store.Store, t store.Tenant) error {
		return s.InTx(ctx, func(tx *store.Store) error {
			key, err := tx.APIKeyRevoke(ctx, t.ID, keyID)
			if err != nil {
				return err
			}
			if err := tx.AuditRecord(ctx, t.ID, "cli", store.AuditKeyRevoke, key.Prefix, map[string]any{"name": key.Name}); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "revoked %s (%s)\n", key.Prefix, key.ID)
			return nil
		})
	})
}

// withTenant runs fn with the store and the tenant of slug.
func withTenant(ctx context.Context, cfg config.Config, slug string, fn func(*store.Store, store.Tenant) error) error {
	return withStore(ctx, cfg, func(s *store.Store) error {
		t, err := s.TenantGetBySlug(ctx, slug)
		if err != nil {
			return err
		}
		return fn(s, t)
	})
}

func withStore(ctx context.Context, cfg config.Config, fn func(*store.Store) error) error {
	pool, err := requireDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	return fn(store.New(pool))
}

// splitPositional takes a leading positional argument before the flags.
func splitPositional(args []string) (string, []string) {
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		return args[0], args[1:]
	}
	return "", args
}

// runTenantSet handles `tenant set SLUG [--tier T] [--max-concurrency N]
// [--rate R] [--retention D] [--schedule-to-start D]`: the tier, the step
// admission limits (0: none), how long finished runs are kept (0: forever)
// and how long tasks wait for a worker by default (0: the server's
// default, 5m).
func runTenantSet(ctx context.Context, env Env, args []string) error {
	fs := newFlags("tenant set SLUG [--tier T] [--max-concurrency N] [--rate R] [--retention D] [--schedule-to-start D]", env)
	tier := fs.String("tier", "", "its tier: interactive, standard, bulk or one made with tier set")
	maxConc := fs.Int("max-concurrency", -1, "steps queued or running at most (0: no cap)")
	rate := fs.Float64("rate", -1, "step starts per second on average (0: no limit)")
	retention := fs.String("retention", "", "how long finished runs are kept, such as 720h or 30d (0: forever)")
	sts := fs.String("schedule-to-start", "", "how long a task step that sets none waits for a worker to claim it, e.g. 10m (0: the default, 5m)")
	quotas := addQuotaFlags(fs)
	slug, rest := splitPositional(args)
	cfg, _, err := loadConfig(fs, rest, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if slug == "" {
		return want("ductor tenant set SLUG [--tier T] [--max-concurrency N] [--rate R] [--retention D] [--schedule-to-start D]")
	}
	wait, err := scheduleToStartFlag(*sts)
	if err != nil {
		return err
	}
	keep := time.Duration(-1)
	if *retention != "" {
		if keep, err = store.ParseRetention(*retention); err != nil {
			return err
		}
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		t, err := s.TenantGetBySlug(ctx, slug)
		if err != nil {
			return err
		}
		if err := quotas.applyTenant(ctx, s, t.ID); err != nil {
			return err
		}
		if *tier != "" {
			tr, err := store.ParseTier(*tier)
			if err != nil {
				return err
			}
			if t, err = s.TenantSetTier(ctx, t.ID, tr); err != nil {
				return err
			}
		}
		if *maxConc >= 0 || *rate >= 0 {
			if *maxConc < 0 {
				*maxConc = t.MaxConcurrency
			}
			if *rate < 0 {
				*rate = t.RatePerSecond
			}
			if t, err = s.TenantSetLimits(ctx, t.ID, *maxConc, *rate); err != nil {
				return err
			}
		}
		if keep >= 0 {
			if t, err = s.TenantSetRetention(ctx, t.ID, keep); err != nil {
				return err
			}
		}
		if wait >= 0 {
			if t, err = s.TenantSetScheduleToStart(ctx, t.ID, wait); err != nil {
				return err
			}
		}
		fmt.Fprintf(env.Stdout, "%s tier=%s max_concurrency=%d rate_per_second=%g retention=%s schedule_to_start=%s\n",
			t.Slug, t.Tier, t.MaxConcurrency, t.RatePerSecond, store.FormatRetention(t.Retention), scheduleToStartText(t.ScheduleToStart))
		return nil
	})
}

// scheduleToStartFlag parses --schedule-to-start: -1 when not given.
func scheduleToStartFlag(s string) (time.Duration, error) {
	if s == "" {
		return -1, nil
	}
	if s == "0" {
		return 0, nil
	}
	d, err := definition.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, usagef("--schedule-to-start %q: want a duration such as 10m, or 0 for the default", s)
	}
	return d, nil
}

func scheduleToStartText(d time.Duration) string {
	if d == 0 {
		return "default(" + shell.DefaultScheduleToStart.String() + ")"
	}
	return d.String()
}
