package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/config"
	"github.com/ductor/ductor/app/logging"
	"github.com/ductor/ductor/app/pgcluster"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
)

// defaultDevDir is where `ductor dev` keeps its own Postgres and dev key,
// unless DUCTOR_DEV_DIR says otherwise.
const defaultDevDir = ".ductor"

// runDev runs everything in one process on a loopback address, with its own
// Postgres cluster under ./.ductor when DATABASE_URL is unset.
func runDev(ctx context.Context, env Env, args []string) error {
	cfg, _, err := loadConfig(newFlags("dev", env), args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if err := requireLoopback(cfg.Addr); err != nil {
		return err
	}
	log, gate, err := newLogger(env, cfg, logging.Text)
	if err != nil {
		return err
	}
	devDir := env.Getenv("DUCTOR_DEV_DIR")
	if devDir == "" {
		devDir = defaultDevDir
	}
	keyFile := ""
	if cfg.DatabaseURL == "" {
		keyFile = filepath.Join(devDir, "dev-api-key")
		cluster, err := pgcluster.Start(ctx, pgcluster.Options{
			Dir: filepath.Join(devDir, "pg"), Database: "ductor",
		})
		if err != nil {
			return fmt.Errorf("start local Postgres: %w", err)
		}
		defer func() {
			if err := cluster.Stop(context.WithoutCancel(ctx)); err != nil {
				log.Error("stop local Postgres", "err", err)
			}
		}()
		cfg.DatabaseURL = cluster.URL()
		urlFile := filepath.Join(devDir, "database-url")
		if err := os.WriteFile(urlFile, []byte(cfg.DatabaseURL+"\n"), 0o600); err != nil {
			return fmt.Errorf("save the database URL: %w", err)
		}
		fmt.Fprintf(env.Stdout, "Local Postgres: DATABASE_URL=%s (saved in %s, for admin commands)\n", cfg.DatabaseURL, urlFile)
	}
	pool, err := connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := migrate(ctx, pool, log); err != nil {
		return err
	}
	if err := ensureDevTenant(ctx, env, store.New(pool), keyFile); err != nil {
		return err
	}
	if cfg.SecretKey == "" {
		// Kept beside dev's own database; with another one, for this run only.
		file := ""
		if keyFile != "" {
			file = filepath.Join(devDir, "secret-key")
		}
		if cfg.SecretKey, err = devSecretKey(file); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.Stdout, "Ductor dev: http://%s (Ctrl-C stops everything)\n", cfg.Addr)
	return process{cfg: cfg, pool: pool, log: log, gate: gate, env: env, dev: true}.run(ctx)
}

// requireLoopback keeps dev (and its dev login) off the network.
func requireLoopback(addr string) error {
	host, _, _ := net.SplitHostPort(addr)
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return &config.Error{Setting: "DUCTOR_ADDR", Problem: fmt.Sprintf("dev listens on a loopback address only, not %q", addr)}
}

// ensureDevTenant creates the dev tenant and its API key on first start.
// The key is printed then; with dev's own database it is also saved in
// keyFile (mode 0600) and printed again at later starts.
func ensureDevTenant(ctx context.Context, env Env, s *store.Store, keyFile string) error {
	existing, err := s.TenantGetBySlug(ctx, "dev")
	if err == nil {
		if b, err := os.ReadFile(keyFile); keyFile != "" && err == nil {
			fmt.Fprintf(env.Stdout, "Dev API key (tenant dev): %s\n", strings.TrimSpace(string(b)))
		}
		return ensureDevUser(ctx, s, existing)
	}
	if !apperr.Is(err, apperr.NotFound) {
		return err
	}
	tenant, err := s.TenantCreate(ctx, "dev", "Development", store.TierInteractive)
	if err != nil {
		return err
	}
	_, secret, err := s.APIKeyCreate(ctx, tenant.ID, "dev", []auth.Scope{auth.ScopeAdmin})
	if err != nil {
		return err
	}
	if err := ensureDevUser(ctx, s, tenant); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Dev API key (tenant dev): %s\n", secret)
	if keyFile == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(keyFile), 0o755); err != nil {
		return fmt.Errorf("save the dev key: %w", err)
	}
	return os.WriteFile(keyFile, []byte(secret+"\n"), 0o600)
}

// ensureDevUser makes the dev user (whom the dev login signs in as) an
// owner of the dev tenant, unless they already belong to it.
func ensureDevUser(ctx context.Context, s *store.Store, tenant store.Tenant) error {
	if _, err := s.UserEnsure(ctx, store.DevUserEmail, "Dev user"); err != nil {
		return err
	}
	_, err := s.MemberGet(ctx, tenant.ID, store.DevUserEmail)
	if !apperr.Is(err, apperr.NotFound) {
		return err
	}
	_, err = s.MemberSet(ctx, tenant.ID, store.DevUserEmail, auth.RoleOwner)
	return err
}

// devSecretKey reads dev's own secret key (what seals webhook secrets)
// from file, making one on first start, so they open again after a
// restart; without a file, the key lasts for this run.
func devSecretKey(file string) (string, error) {
	if b, err := os.ReadFile(file); file != "" && err == nil && len(strings.TrimSpace(string(b))) >= secrets.MinKeyLength {
		return strings.TrimSpace(string(b)), nil
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	key := hex.EncodeToString(raw)
	if file == "" {
		return key, nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", fmt.Errorf("save the dev secret key: %w", err)
	}
	return key, os.WriteFile(file, []byte(key+"\n"), 0o600)
}
