package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Superuser is the role initdb creates; it connects without a password
// over loopback TCP.
const Superuser = "ductor"

// Options configures Start.
type Options struct {
	// Dir holds the cluster: data/, postgres.log and the remembered port.
	// It is created if missing. Required.
	Dir string
	// Port is the TCP port on 127.0.0.1. Zero reuses the port remembered
	// in Dir, or picks a free one if there is none or it is taken. A
	// server already running is reused on its own port, and with its own
	// Fast setting.
	Port int
	// Database is created if missing. Empty means "postgres".
	Database string
	// Fast turns off fsync, synchronous_commit and full_page_writes: a
	// crash can then corrupt the cluster, so only for throwaway ones.
	Fast bool
	// ClockOffset, when not zero, runs the server under libfaketime (the
	// Debian package faketime) with its clock that far ahead of the
	// machine's (behind when negative), to test what depends on whose
	// clock. It applies when this Start starts the server, not to one it
	// reuses.
	ClockOffset time.Duration
	// Log receives the output of initdb and pg_ctl. Nil discards it.
	Log io.Writer
}

// Cluster is a PostgreSQL cluster started by Start.
type Cluster struct {
	dir      string
	database string
	port     int
	bin      binaries
	owner    *owner
	log      io.Writer
}

// Start initializes a cluster in opts.Dir unless one is there, starts it
// on 127.0.0.1 unless it is already running, in which case it is reused
// as it is, and creates opts.Database if missing.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	c, err := newCluster(opts)
	if err != nil {
		return nil, err
	}
	if err := c.prepare(ctx, opts.Fast); err != nil {
		return nil, err
	}
	started, err := c.run(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := c.ensureDatabase(ctx); err != nil {
		if started {
			err = errors.Join(err, c.Stop(context.WithoutCancel(ctx)))
		}
		return nil, err
	}
	return c, nil
}

func newCluster(opts Options) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("pgcluster: Options.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	bin, err := findBinaries(exec.LookPath, debianRoot)
	if err != nil {
		return nil, err
	}
	o, err := lookupOwner()
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, database: opts.Database, bin: bin, owner: o, log: opts.Log}
	if c.database == "" {
		c.database = "postgres"
	}
	if c.log == nil {
		c.log = io.Discard
	}
	return c, nil
}

// prepare creates Dir for the server's user and runs initdb if needed.
func (c *Cluster) prepare(ctx context.Context, fast bool) error {
	if err := c.prepareDir(); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); err == nil {
		return nil
	}
	return c.initdb(ctx, fast)
}

// initdb creates the data directory beside its final place and renames it
// when complete, so an interrupted initdb leaves no half-made cluster.
func (c *Cluster) initdb(ctx context.Context, fast bool) error {
	tmp := c.dataDir() + ".init"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	args := []string{"-D", tmp, "-U", Superuser, "--auth=trust", "--no-locale", "-E", "UTF8"}
	if fast {
		args = append(args, "--no-sync")
	}
	if err := c.owner.run(ctx, c.log, c.dir, c.bin.initdb, args...); err != nil {
		return err
	}
	if err := appendInclude(filepath.Join(tmp, "postgresql.conf")); err != nil {
		return err
	}
	if err := os.Rename(tmp, c.dataDir()); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// URL is the connection string of the cluster's database for Superuser.
func (c *Cluster) URL() string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Host:     "127.0.0.1:" + strconv.Itoa(c.port),
		Path:     "/" + c.database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the TCP port the server listens on, on 127.0.0.1.
func (c *Cluster) Port() int { return c.port }

// Dir is the absolute path of the cluster directory.
func (c *Cluster) Dir() string { return c.dir }

// LogFile is the path of the server's log.
func (c *Cluster) LogFile() string { return filepath.Join(c.dir, "postgres.log") }

func (c *Cluster) dataDir() string  { return filepath.Join(c.dir, "data") }
func (c *Cluster) portFile() string { return filepath.Join(c.dir, "port") }

// Destroy stops the server and removes the cluster directory.
func (c *Cluster) Destroy(ctx context.Context) error {
	if err := c.Stop(ctx); err != nil {
		return err
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}
