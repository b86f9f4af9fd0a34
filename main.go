// Command ductor runs Ductor, a durable workflow engine on Postgres.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ductor/ductor/app/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command and says how it went: 0, 1 for a failure, 2 for
// a mistake in the command line. Errors are one line on stderr, prefixed
// "ductor: ".
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	err := cli.Run(ctx, args, cli.Env{Getenv: getenv, Stdout: stdout, Stderr: stderr})
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp), errors.Is(err, context.Canceled):
		return 0
	case errors.Is(err, cli.ErrUsage):
		fmt.Fprintln(stderr, "ductor:", err)
		return 2
	}
	fmt.Fprintln(stderr, "ductor:", err)
	return 1
}
