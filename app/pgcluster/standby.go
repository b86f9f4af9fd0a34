package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// StartStandby makes a streaming standby of c in opts.Dir, unless one is
// there, and starts it: pg_basebackup -R copies c's data directory and
// writes the standby's primary_conninfo, under name as its
// application_name, which is how synchronous_standby_names refers to it
// (see Synchronous). It returns when the standby accepts read-only
// connections. opts.Database is ignored: the standby has c's.
func (c *Cluster) StartStandby(ctx context.Context, opts Options, name string) (*Cluster, error) {
	opts.Database = c.database
	s, err := newCluster(opts)
	if err != nil {
		return nil, err
	}
	if err := s.prepareDir(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(s.dataDir(), "PG_VERSION")); err != nil {
		if err := s.basebackup(ctx, c, name); err != nil {
			return nil, err
		}
	}
	if _, err := s.run(ctx, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// basebackup copies primary's data directory into a fresh one of c's,
// renamed into place when complete.
func (c *Cluster) basebackup(ctx context.Context, primary *Cluster, name string) error {
	tmp := c.dataDir() + ".init"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=%s application_name=%s", primary.port, Superuser, name)
	args := []string{"-D", tmp, "-d", conninfo, "-R", "-X", "stream", "-c", "fast"}
	if err := c.owner.run(ctx, c.log, c.dir, c.bin.pgBasebackup, args...); err != nil {
		return err
	}
	if err := os.Rename(tmp, c.dataDir()); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// prepareDir creates Dir for the server's user.
func (c *Cluster) prepareDir() error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if err := os.Chmod(c.dir, 0o700); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if err := c.owner.chown(c.dir); err != nil {
		return err
	}
	return c.owner.checkTraversable(c.dir)
}

// Synchronous makes the standbys named (their application_name) c's
// synchronous ones, as "FIRST 1 (names…)", or none when names is empty,
// and waits until one of them is streaming in sync: from then on, a
// commit c acknowledges is on a standby too.
func (c *Cluster) Synchronous(ctx context.Context, names ...string) error {
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	value := ""
	if len(names) > 0 {
		value = "FIRST 1 ("
		for i, n := range names {
			if i > 0 {
				value += ", "
			}
			value += strconv.Quote(n)
		}
		value += ")"
	}
	if _, err := conn.Exec(ctx, "ALTER SYSTEM SET synchronous_standby_names = "+quoteLiteral(value)); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if len(names) == 0 {
		return nil
	}
	deadline := time.Now().Add(startTimeout)
	for {
		var n int
		err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'").Scan(&n)
		if err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
		if n > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("pgcluster: no synchronous standby streaming")
		}
		if err := pause(ctx); err != nil {
			return err
		}
	}
}

// Promote ends c's recovery (pg_ctl promote) and waits until it accepts
// writes: a standby becomes a primary.
func (c *Cluster) Promote(ctx context.Context) error {
	args := []string{"promote", "-D", c.dataDir(), "-w", "-s", "-t", seconds(startTimeout)}
	return c.owner.run(ctx, c.log, c.dir, c.bin.pgCtl, args...)
}

// MultiHostURL is one connection string naming every cluster's host, for
// the one of them that accepts writes (target_session_attrs=read-write):
// how a client follows a failover from one to another.
func MultiHostURL(database string, clusters ...*Cluster) string {
	hosts := ""
	for i, c := range clusters {
		if i > 0 {
			hosts += ","
		}
		hosts += "127.0.0.1:" + strconv.Itoa(c.port)
	}
	return "postgres://" + Superuser + "@" + hosts + "/" + database + "?sslmode=disable&target_session_attrs=read-write"
}

func quoteLiteral(s string) string {
	out := "'"
	for _, r := range s {
		if r == '\'' {
			out += "''"
			continue
		}
		out += string(r)
	}
	return out + "'"
}
