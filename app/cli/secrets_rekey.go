package cli

import (
	"context"
	"fmt"

	"github.com/ductor/ductor/app/config"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/tenantsecrets"
)

func secretsSubcommands() []subcommand {
	return []subcommand{
		{"rekey", "secrets rekey", "re-seal every tenant and webhook secret under DUCTOR_SECRET_KEY, opening what DUCTOR_SECRET_KEY_PREVIOUS sealed (DATABASE_URL)", secretsRekey},
	}
}

// runSecrets handles `ductor secrets …`, the operator's side of stored
// secrets (DATABASE_URL, DUCTOR_SECRET_KEY, DUCTOR_SECRET_KEY_PREVIOUS).
func runSecrets(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "secrets", secretsSubcommands(), args)
}

func secretsRekey(ctx context.Context, env Env, args []string) error {
	fs := newFlags("secrets rekey", env)
	cfg, rest, err := loadConfig(fs, args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return want("ductor secrets rekey")
	}
	if cfg.SecretKey == "" {
		return &config.Error{Setting: "DUCTOR_SECRET_KEY", Problem: "required: the key to re-seal under"}
	}
	box, err := secrets.NewKeyring(cfg.SecretKey, cfg.SecretKeyPrevious)
	if err != nil {
		return &config.Error{Setting: "DUCTOR_SECRET_KEY_PREVIOUS", Problem: err.Error()}
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		got, err := tenantsecrets.New(tenantsecrets.Config{Store: s, Box: box}).Rekey(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "re-sealed %d secrets and %d webhooks under the current key; %d were already under it\n", got.Secrets, got.Webhooks, got.Current)
		if !box.HasPrevious() {
			fmt.Fprintln(env.Stdout, "no DUCTOR_SECRET_KEY_PREVIOUS was set: nothing could need re-sealing")
		}
		return nil
	})
}
