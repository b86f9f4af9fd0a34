package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/ductor/ductor/app/pgcluster"
)

// stopTimeout bounds how long the cluster may take to stop and be removed.
const stopTimeout = 2 * time.Minute

// withCluster starts a throwaway cluster in a new directory under tmp
// (os.TempDir if empty), runs fn with its URL and destroys it, even when
// ctx ends.
func withCluster(ctx context.Context, tmp string, stderr io.Writer, fn func(ctx context.Context, url string) int) int {
	dir, err := os.MkdirTemp(tmp, "pgrun-*")
	if err != nil {
		fmt.Fprintln(stderr, "pgrun:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dir, Database: "ductor_test", Fast: true})
	if err != nil {
		fmt.Fprintln(stderr, "pgrun:", err)
		if ctx.Err() != nil {
			return 128 + int(signalOf(ctx))
		}
		return 1
	}
	code := fn(ctx, cluster.URL())
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if err := cluster.Destroy(stopCtx); err != nil {
		fmt.Fprintln(stderr, "pgrun:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// child is the command pgrun runs.
type child struct {
	args           []string
	env            []string
	url            string // TEST_DATABASE_URL, unless empty
	stdin          io.Reader
	stdout, stderr io.Writer
}

// waitDelay is how long the command has to exit after it was signalled,
// before it is killed.
const waitDelay = 30 * time.Second

// run runs the command, passes it the signal that ends ctx and returns
// its exit code.
func (c child) run(ctx context.Context) int {
	cmd := exec.CommandContext(ctx, c.args[0], c.args[1:]...)
	cmd.Env = c.env
	if c.url != "" {
		cmd.Env = append(slices.Clip(c.env), "TEST_DATABASE_URL="+c.url)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.stdin, c.stdout, c.stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(signalOf(ctx)) }
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(c.stderr, "pgrun:", err)
		return 127
	}
	return exitCode(ctx, cmd.ProcessState)
}

// exitCode is the command's exit code, or 128 plus the signal that ended
// it, as a shell reports it. A command that exits 0 after a signal still
// reports the signal.
func exitCode(ctx context.Context, state *os.ProcessState) int {
	ws, ok := state.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		return 128 + int(ws.Signal())
	case state.ExitCode() == 0 && ctx.Err() != nil:
		return 128 + int(signalOf(ctx))
	default:
		return state.ExitCode()
	}
}
