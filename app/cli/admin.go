package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/config"
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

// runTenant handles `tenant create SLUG [--tier T] [--name N]`.
func runTenant(ctx context.Context, env Env, args []string) error {
	if len(args) > 0 && args[0] == "set" {
		return runTenantSet(ctx, env, args[1:])
	}
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("%w: ductor tenant create SLUG [--tier standard] [--name NAME] | tenant set SLUG [--tier T] [--max-concurrency N] [--rate R] [--retention D]", ErrUsage)
	}
	fs := newFlags("tenant create", env)
	tier := fs.String("tier", string(store.TierStandard), "interactive, standard or bulk")
	name := fs.String("name", "", "display name (default: the slug)")
	slug, rest := splitPositional(args[1:])
	cfg, extra, err := loadConfig(fs, rest, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if slug == "" && len(extra) > 0 {
		slug = extra[0]
	}
	if slug == "" {
		return fmt.Errorf("%w: ductor tenant create SLUG", ErrUsage)
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

// runAPIKey handles `apikey create --tenant SLUG [--scope S]... [--name N]`.
func runAPIKey(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("%w: ductor apikey create --tenant SLUG [--scope S]... [--name N]", ErrUsage)
	}
	fs := newFlags("apikey create", env)
	tenant := fs.String("tenant", "", "tenant slug (required)")
	name := fs.String("name", "", "a name to recognise the key by")
	var scopes multiFlag
	fs.Var(&scopes, "scope", "a scope; repeat for several (default: admin)")
	cfg, _, err := loadConfig(fs, args[1:], env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if *tenant == "" {
		return fmt.Errorf("%w: --tenant is required", ErrUsage)
	}
	sc, err := auth.ParseScopes(scopes)
	if err != nil {
		return err
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		t, err := s.TenantGetBySlug(ctx, *tenant)
		if err != nil {
			return err
		}
		_, secret, err := s.APIKeyCreate(ctx, t.ID, *name, sc)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, secret)
		return nil
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
// [--rate R] [--retention D]`: the tier, the step admission limits (0:
// none) and how long finished runs are kept (0: forever).
func runTenantSet(ctx context.Context, env Env, args []string) error {
	fs := newFlags("tenant set", env)
	tier := fs.String("tier", "", "interactive, standard or bulk")
	maxConc := fs.Int("max-concurrency", -1, "steps queued or running at most (0: no cap)")
	rate := fs.Float64("rate", -1, "step starts per second on average (0: no limit)")
	retention := fs.String("retention", "", "how long finished runs are kept, such as 720h or 30d (0: forever)")
	slug, rest := splitPositional(args)
	cfg, _, err := loadConfig(fs, rest, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if slug == "" {
		return fmt.Errorf("%w: ductor tenant set SLUG [--tier T] [--max-concurrency N] [--rate R] [--retention D]", ErrUsage)
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		t, err := s.TenantGetBySlug(ctx, slug)
		if err != nil {
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
		if *retention != "" {
			d, err := store.ParseRetention(*retention)
			if err != nil {
				return err
			}
			if t, err = s.TenantSetRetention(ctx, t.ID, d); err != nil {
				return err
			}
		}
		fmt.Fprintf(env.Stdout, "%s tier=%s max_concurrency=%d rate_per_second=%g retention=%s\n",
			t.Slug, t.Tier, t.MaxConcurrency, t.RatePerSecond, store.FormatRetention(t.Retention))
		return nil
	})
}
