package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// startTimeout bounds how long pg_ctl waits for the server to start or
// stop, and how long Start waits for a server another process is
// starting or stopping.
const startTimeout = 60 * time.Second

// run reuses a live server or starts one, and reports whether it started.
func (c *Cluster) run(ctx context.Context, opts Options) (bool, error) {
	pm, err := c.settle(ctx)
	if err != nil {
		return false, err
	}
	if pm.state == stateReady {
		c.port = pm.port
		return false, nil
	}
	if pm.state == stateStale {
		if err := os.Remove(c.pidFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("pgcluster: removing stale %s: %w", c.pidFile(), err)
		}
	}
	return true, c.startOnFreePort(ctx, opts)
}

// settle waits while another process starts or stops the server, and
// returns the postmaster once it is ready, stale or absent.
func (c *Cluster) settle(ctx context.Context) (postmaster, error) {
	deadline := time.Now().Add(startTimeout)
	for {
		pm := c.postmaster()
		if pm.state != stateBusy {
			return pm, nil
		}
		if time.Now().After(deadline) {
			return pm, fmt.Errorf("pgcluster: server in %s (pid %d) neither became ready nor stopped within %s", c.dataDir(), pm.pid, startTimeout)
		}
		if err := pause(ctx); err != nil {
			return pm, err
		}
	}
}

// startOnFreePort starts the server, picking another port and trying
// again if a port it picked was taken meanwhile.
func (c *Cluster) startOnFreePort(ctx context.Context, opts Options) error {
	for attempt := 1; ; attempt++ {
		port, err := c.choosePort(opts.Port)
		if err != nil {
			return err
		}
		err = c.start(ctx, port, opts)
		if err == nil || opts.Port != 0 || attempt == 3 || portFree(port) {
			return err
		}
	}
}

// start writes the settings and starts the server with pg_ctl. pg_ctl is
// not interrupted by ctx: killing it midway could orphan a postmaster.
// If ctx ends meanwhile, the server is stopped again.
func (c *Cluster) start(ctx context.Context, port int, opts Options) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	env, err := fakeClock(opts.ClockOffset)
	if err != nil {
		return err
	}
	if err := c.owner.writeFile(filepath.Join(c.dataDir(), confFile), settings(port, opts.Fast)); err != nil {
		return err
	}
	if err := c.owner.writeFile(c.portFile(), []byte(strconv.Itoa(port)+"\n")); err != nil {
		return err
	}
	c.port = port
	args := []string{"start", "-D", c.dataDir(), "-l", c.LogFile(), "-w", "-s", "-t", seconds(startTimeout)}
	err = c.owner.runEnv(context.WithoutCancel(ctx), c.log, c.dir, env, c.bin.pgCtl, args...)
	if err != nil {
		err = fmt.Errorf("%w\n%s", err, c.logTail())
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return errors.Join(err, c.stop(context.WithoutCancel(ctx), "immediate"))
	}
	return nil
}

// Stop shuts the server down (pg_ctl stop -m fast) and waits until its
// postmaster is gone. Stopping a cluster that is not running succeeds.
func (c *Cluster) Stop(ctx context.Context) error {
	return c.stop(ctx, "fast")
}

// Crash stops the server as a power cut would (pg_ctl stop -m immediate:
// no checkpoint, crash recovery on the next start), for fault tests. The
// cluster must not be Fast, or the crash can corrupt it.
func (c *Cluster) Crash(ctx context.Context) error {
	return c.stop(ctx, "immediate")
}

func (c *Cluster) stop(ctx context.Context, mode string) error {
	pm := c.postmaster()
	if pm.state == stateAbsent || pm.state == stateStale {
		return nil
	}
	args := []string{"stop", "-D", c.dataDir(), "-m", mode, "-w", "-s", "-t", seconds(startTimeout)}
	if err := c.owner.run(ctx, c.log, c.dir, c.bin.pgCtl, args...); err != nil {
		return err
	}
	return waitExited(ctx, pm.pid)
}

// waitExited polls until process pid no longer runs.
func waitExited(ctx context.Context, pid int) error {
	deadline := time.Now().Add(startTimeout)
	for processRunning(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("pgcluster: postmaster (pid %d) still running %s after pg_ctl stop", pid, startTimeout)
		}
		if err := pause(ctx); err != nil {
			return err
		}
	}
	return nil
}

func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Millisecond):
		return nil
	}
}

func seconds(d time.Duration) string {
	return strconv.Itoa(int(d / time.Second))
}
