// Package cli is the `ductor` command. Run is the real main: it takes its
// arguments, environment and output streams as parameters, so tests drive
// the whole command in-process.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ductor/ductor/app/config"
)

// Env is what a command reads from its surroundings.
type Env struct {
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
	// Ready, when set, is told the address the server listens on once it
	// accepts connections (tests start `dev` on 127.0.0.1:0).
	Ready func(addr string)
}

type command struct {
	name, usage string
	run         func(ctx context.Context, env Env, args []string) error
}

func commands() []command {
	return []command{
		{"dev", "run everything locally, with its own Postgres when DATABASE_URL is unset", runDev},
		{"serve", "run the dashboard, API and workers against DATABASE_URL (--roles)", runServe},
		{"migrate", "apply River's and Ductor's migrations", runMigrate},
		{"tenant", "tenant create SLUG [--tier standard] [--name NAME]", runTenant},
		{"apikey", "apikey create --tenant SLUG [--scope S]... [--name N]", runAPIKey},
		{"run", "run start KEY [--input JSON] [--wait] | run get ID | run list | run cancel|retry --filter NAME=VALUE… (uses DUCTOR_URL, DUCTOR_API_KEY)", runRun},
		{"member", "member add --tenant SLUG --email EMAIL --role ROLE", runMember},
		{"apply", "apply -f FILE... [--dry-run] (publishes definitions; uses DUCTOR_URL, DUCTOR_API_KEY)", runApply},
		{"seed", "seed -f FILE (tenants, definitions and API keys from a seed file; `seed -h` for its format)", runSeed},
		{"signal", "signal RUN NAME [--payload JSON] --request-id ID (uses DUCTOR_URL, DUCTOR_API_KEY)", runSignal},
		{"event", "event NAME [--data JSON] [--idempotency-key K] (uses DUCTOR_URL, DUCTOR_API_KEY)", runEvent},
		{"node", "node cancel RUN NODE [--reason TEXT] (uses DUCTOR_URL, DUCTOR_API_KEY)", runNode},
		{"schedule", "schedule create|list|get|pause|unpause|trigger|backfill|delete (uses DUCTOR_URL, DUCTOR_API_KEY)", runSchedule},
		{"webhook", "webhook create|list|rotate|delete (uses DUCTOR_URL, DUCTOR_API_KEY)", runWebhook},
	}
}

// ErrUsage marks an error that is answered with the usage text.
var ErrUsage = errors.New("usage")

// Run runs the command named by args[0].
func Run(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(env.Stdout, usage())
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
	}
	return fmt.Errorf("%w: unknown command %q\n%s", ErrUsage, args[0], usage())
}

func usage() string {
	var b strings.Builder
	b.WriteString("Usage: ductor COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.usage)
	}
	b.WriteString("\nRun `ductor COMMAND -h` for a command's flags.\n")
	return b.String()
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, env Env) *flag.FlagSet {
	fs := flag.NewFlagSet("ductor "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}

// loadConfig registers the shared settings on fs and parses args.
func loadConfig(fs *flag.FlagSet, args []string, env Env, defaultAddr string) (config.Config, []string, error) {
	return config.Load(fs, args, env.Getenv, defaultAddr)
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
