package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/ductor/ductor/app/config"
	"github.com/ductor/ductor/db"
)

// runHealthcheck answers the container's HEALTHCHECK (the image has no
// curl): a process that serves HTTP must answer GET /readyz with 200 on
// its own address; one that only runs workers must reach its database
// with current migrations.
func runHealthcheck(ctx context.Context, env Env, args []string) error {
	fs := newFlags("healthcheck [--url URL] [--timeout D]", env)
	target := fs.String("url", "", "what to GET (default: http://127.0.0.1:PORT/readyz, PORT from DUCTOR_ADDR)")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	cfg, _, err := loadConfig(fs, args, env, ":8080")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if *target == "" && !cfg.Roles.Serves() {
		return checkDatabase(ctx, cfg)
	}
	if *target == "" {
		*target = readyURL(cfg.Addr)
	}
	return checkHTTP(ctx, *target)
}

// readyURL is /readyz on the loopback side of a listen address.
func readyURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/readyz"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz"
}

func checkHTTP(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return &config.Error{Setting: "--url", Problem: err.Error()}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("unhealthy: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: GET %s answered %d", url, res.StatusCode)
	}
	return nil
}

func checkDatabase(ctx context.Context, cfg config.Config) error {
	pool, err := requireDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := db.Check(ctx, pool); err != nil {
		return fmt.Errorf("unhealthy: %w", err)
	}
	return nil
}
