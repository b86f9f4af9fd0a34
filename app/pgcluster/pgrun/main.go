// Command pgrun runs a command against a throwaway PostgreSQL cluster:
//
//	go run ./app/pgcluster/pgrun -- go test ./...
//
// It starts a Fast cluster in a new temporary directory on a free loopback
// port, creates the database ductor_test, runs the command with
// TEST_DATABASE_URL pointing at it, then stops and deletes the cluster and
// exits with the command's exit code. SIGINT and SIGTERM are passed to the
// command and the cluster is still removed. If TEST_DATABASE_URL is already
// set, pgrun only runs the command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range signals {
			cancel(signalError{sig})
		}
	}()
	os.Exit(run(ctx, os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr))
}

// signalError is the cause of run's context ending on a signal.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return "received " + e.sig.String() }

// signalOf returns the signal that ended ctx, SIGTERM if none did.
func signalOf(ctx context.Context) syscall.Signal {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		if sig, ok := se.sig.(syscall.Signal); ok {
			return sig
		}
	}
	return syscall.SIGTERM
}

// run is the whole program; ctx ends when a signal arrives. It returns
// the exit code.
func run(ctx context.Context, args, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pgrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pgrun -- COMMAND [ARG...]\n\nRuns COMMAND with TEST_DATABASE_URL set to a throwaway PostgreSQL database.")
	}
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	c := child{args: fs.Args(), env: environ, stdin: stdin, stdout: stdout, stderr: stderr}
	if lookupEnv(environ, "TEST_DATABASE_URL") != "" {
		return c.run(ctx)
	}
	return withCluster(ctx, lookupEnv(environ, "TMPDIR"), stderr, func(ctx context.Context, url string) int {
		c.url = url
		return c.run(ctx)
	})
}

func lookupEnv(environ []string, key string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
