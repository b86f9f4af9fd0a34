// Package cli is the `ductor` command. Run is the real main: it takes its
// arguments, environment and output streams as parameters, so tests drive
// the whole command in-process.
//
// Each top-level verb is one entry of commands(); a verb with subcommands
// (`run start`, `definition list`…) dispatches them from a table of its
// own with [dispatch], which also answers -h and lists them for shell
// completion. Every command parses its flags before it needs a key or a
// database, so -h always works.
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
	// Stdin is standard input (`secret set --from-stdin`); nil is the
	// process's own.
	Stdin io.Reader
	// Ready, when set, is told the address the server listens on once it
	// accepts connections (tests start `dev` on 127.0.0.1:0).
	Ready func(addr string)
	// api, set for the API commands, holds their --url and --api-key
	// flags, which every flag set of theirs registers (see newFlags).
	api *apiFlags
}

// command is a verb: its name, a one-line usage, and what runs it.
type command struct {
	name, usage string
	run         func(ctx context.Context, env Env, args []string) error
}

func commands() []command {
	return []command{
		{"dev", "run everything locally, with its own Postgres when DATABASE_URL is unset", runDev},
		{"serve", "run the dashboard, API and workers against DATABASE_URL (--roles)", runServe},
		{"migrate", "apply River's and Ductor's migrations", runMigrate},
		{"tenant", "create, list and set tenants (DATABASE_URL)", runTenant},
		{"apikey", "create, list and revoke API keys (DATABASE_URL)", runAPIKey},
		{"member", "add, list and remove a tenant's members (DATABASE_URL)", runMember},
		{"seed", "seed -f FILE: tenants, definitions and API keys from a seed file (DATABASE_URL)", runSeed},
		{"apply", "apply -f FILE|DIR... [--dry-run]: publish definitions", api(runApply)},
		{"test", "test [PATH...]: run *.test.yaml workflow tests in memory (--replay RUN_ID)", api(runTest)},
		{"definition", "list, get and unpublish definitions", api(runDefinition)},
		{"run", "start, get, list, cancel, retry, upgrade runs (one, or many by --filter) and read their history", api(runRun)},
		{"signal", "signal RUN NAME [--payload JSON] --request-id ID", api(runSignal)},
		{"event", "event NAME [--data JSON] [--idempotency-key K]", api(runEvent)},
		{"node", "node cancel RUN NODE [--reason TEXT]", api(runNode)},
		{"approval", "list and decide approvals", api(runApproval)},
		{"case", "list and update human-loop cases", api(runCase)},
		{"schedule", "create, list, get, update, pause, unpause, trigger, backfill and delete schedules", api(runSchedule)},
		{"webhook", "create, list, get, rotate and delete inbound webhooks", api(runWebhook)},
		{"subscription", "create, list, get, delete, rotate-secret, enable outbound webhook subscriptions; their deliveries and redeliver", api(runSubscription)},
		{"whoami", "the tenant, name and scopes of the API key", api(runWhoami)},
		{"secret", "set, list and delete tenant secrets (values are never printed)", api(runSecret)},
		{"secrets", "secrets rekey: re-seal stored secrets under DUCTOR_SECRET_KEY (DATABASE_URL)", runSecrets},
		{"usage", "usage [--tenant SLUG] [--month YYYY-MM] [--output csv|json|table]: tenants' metered use (DATABASE_URL)", runUsage},
		{"tier", "tier set|list|delete: named tiers, their fair queue class and usage quotas (DATABASE_URL)", runTier},
		{"healthcheck", "exit 0 when the local Ductor answers (the image's HEALTHCHECK)", runHealthcheck},
		{"version", "print the version", runVersion},
		{"completion", "completion bash|zsh|fish: a shell completion script", runCompletion},
	}
}

// ErrUsage matches an error in how the command was called; main exits 2.
var ErrUsage = errors.New("usage")

// usageError is a mistake in the command line, said plainly.
type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// want is the usage error of a command called without what it needs.
func want(synopsis string) error {
	return usagef("want `%s` (see `%s -h`)", synopsis, helpName(synopsis))
}

// helpName is the command of a synopsis: its words up to the first
// argument or flag ("ductor run get" of "ductor run get ID").
func helpName(synopsis string) string {
	help := "ductor"
	for _, w := range strings.Fields(synopsis)[1:] {
		if strings.ToUpper(w) == w || strings.ContainsAny(w, "-[|(") {
			break
		}
		help += " " + w
	}
	return help
}

// Run runs the command named by args[0].
func Run(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 || isHelp(args[0]) || args[0] == "help" {
		fmt.Fprint(env.Stdout, usage())
		return nil
	}
	if args[0] == "--version" || args[0] == "-version" {
		return runVersion(ctx, env, nil)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
	}
	return usagef("unknown command %q (run `ductor -h` for the list)", args[0])
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

func usage() string {
	var b strings.Builder
	b.WriteString("Usage: ductor COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-11s %s\n", c.name, c.usage)
	}
	b.WriteString("\nRun `ductor COMMAND -h` for a command's subcommands and flags.\n" +
		"API commands call --url or DUCTOR_URL (default http://127.0.0.1:8080) with\n" +
		"--api-key or DUCTOR_API_KEY; admin commands (tenant, apikey, member, seed,\n" +
		"migrate) use DATABASE_URL.\n")
	return b.String()
}

// subcommand is one verb of a command's table.
type subcommand struct {
	name, synopsis, summary string
	run                     func(ctx context.Context, env Env, args []string) error
}

// dispatch runs the subcommand args[0] of parent, or lists them for -h.
func dispatch(ctx context.Context, env Env, parent string, subs []subcommand, args []string) error {
	if len(args) == 0 {
		return usagef("ductor %s needs a subcommand: %s (see `ductor %s -h`)", parent, subNames(subs), parent)
	}
	if isHelp(args[0]) {
		fmt.Fprint(env.Stdout, subUsage(parent, subs))
		return nil
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, env, args[1:])
		}
	}
	return usagef("unknown subcommand %q of ductor %s (want %s)", args[0], parent, subNames(subs))
}

func subNames(subs []subcommand) string {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

func subUsage(parent string, subs []subcommand) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: ductor %s SUBCOMMAND [flags]\n\n", parent)
	for _, s := range subs {
		fmt.Fprintf(&b, "  ductor %s\n      %s\n", s.synopsis, s.summary)
	}
	fmt.Fprintf(&b, "\nRun `ductor %s SUBCOMMAND -h` for its flags.\n", parent)
	return b.String()
}

// flags is a command's flag set: errors are returned, not printed, and
// -h prints the synopsis and flags on stdout.
type flags struct {
	*flag.FlagSet
	synopsis string
	// about, when set, is printed after the synopsis by -h.
	about string
	env   Env
}

// newFlags returns the flag set of the command `ductor SYNOPSIS`.
func newFlags(synopsis string, env Env) *flags {
	name := strings.Fields(synopsis)[0]
	fs := flag.NewFlagSet("ductor "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if env.api != nil {
		env.api.register(fs)
	}
	return &flags{FlagSet: fs, synopsis: synopsis, env: env}
}

// Parse parses args, printing the help for -h. A flag it does not know
// or cannot read is a usage error.
func (f *flags) Parse(args []string) error { return f.help(f.badFlag(f.FlagSet.Parse(args))) }

// badFlag turns the flag package's error into a usage error.
func (f *flags) badFlag(err error) error {
	if err == nil || errors.Is(err, flag.ErrHelp) || config.IsConfigError(err) {
		return err
	}
	return usagef("%v (see `%s -h`)", err, helpName("ductor "+f.synopsis))
}

// help prints the command's help when err is flag.ErrHelp.
func (f *flags) help(err error) error {
	if !errors.Is(err, flag.ErrHelp) {
		return err
	}
	fmt.Fprintf(f.env.Stdout, "Usage: ductor %s\n", f.synopsis)
	if f.about != "" {
		fmt.Fprintf(f.env.Stdout, "\n%s", f.about)
	}
	if hasFlags(f.FlagSet) {
		fmt.Fprintln(f.env.Stdout, "\nFlags:")
		f.SetOutput(f.env.Stdout)
		f.PrintDefaults()
		f.SetOutput(io.Discard)
	}
	return err
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parseArgs parses flags wherever they are among the positional
// arguments (`run get ID --output json` as well as `run get --output json
// ID`) and returns the positional ones.
func (f *flags) parseArgs(args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			return nil, err
		}
		rest := f.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// loadConfig registers the shared settings on fs and parses args.
func loadConfig(fs *flags, args []string, env Env, defaultAddr string) (config.Config, []string, error) {
	cfg, rest, err := config.Load(fs.FlagSet, args, env.Getenv, defaultAddr)
	return cfg, rest, fs.help(fs.badFlag(err))
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
