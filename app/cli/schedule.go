package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/ductor/ductor/app/jsonvalue"
)

func scheduleSubcommands() []subcommand {
	return []subcommand{
		{"create", "schedule create DEFINITION (--cron EXPR | --interval D) [--id ID] [--input JSON] [--overlap P] [flags]", "create a schedule that starts runs of a definition", scheduleCreate},
		{"list", "schedule list [--output json|table]", "the tenant's schedules", scheduleList},
		{"get", "schedule get ID [--output json|table]", "a schedule with its recent actions", scheduleGet},
		{"update", "schedule update ID [--cron EXPR | --interval D] [--timezone Z] [--input JSON] [--overlap P] [flags]", "change a schedule: the flags given, the rest kept (spec flags replace the whole spec)", scheduleID(scheduleUpdate)},
		{"pause", "schedule pause ID [--note TEXT]", "stop starting runs", scheduleID(func(ctx context.Context, env Env, c *apiClient, path string, rest []string) error {
			return schedulePause(ctx, env, c, path, true, rest)
		})},
		{"unpause", "schedule unpause ID", "start runs again", scheduleID(func(ctx context.Context, env Env, c *apiClient, path string, rest []string) error {
			return schedulePause(ctx, env, c, path, false, rest)
		})},
		{"trigger", "schedule trigger ID [--overlap P]", "start a run now", scheduleID(scheduleTrigger)},
		{"backfill", "schedule backfill ID --from T --to T [--overlap P]", "start the runs a time range would have started", scheduleID(scheduleBackfill)},
		{"delete", "schedule delete ID", "delete a schedule", scheduleID(func(ctx context.Context, env Env, c *apiClient, path string, rest []string) error {
			if err := newFlags("schedule delete ID", env).Parse(rest); err != nil {
				return err
			}
			return callJSON(ctx, env, c, "DELETE", path, nil)
		})},
	}
}

// runSchedule handles `ductor schedule …`: a thin client of the
// schedules API.
func runSchedule(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "schedule", scheduleSubcommands(), args)
}

// scheduleID runs a subcommand of one schedule, named by its first
// argument; -h works without a key.
func scheduleID(fn func(ctx context.Context, env Env, c *apiClient, path string, rest []string) error) func(context.Context, Env, []string) error {
	return func(ctx context.Context, env Env, args []string) error {
		id, rest := splitPositional(args)
		if id == "" {
			if len(rest) > 0 && isHelp(rest[0]) {
				return fn(ctx, env, nil, "", rest)
			}
			return usagef("the schedule's id is missing (see `ductor schedule -h`)")
		}
		c := newAPIClient(env)
		return fn(ctx, env, c, "/api/v1/schedules/"+url.PathEscape(id), rest)
	}
}

func scheduleList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("schedule list [--output json|table]", env)
	out := outputFlag(fs, env)
	if _, err := fs.parseArgs(args); err != nil {
		return err
	}
	return readAndRender(ctx, env, "/api/v1/schedules?limit=200", *out, func(v any) *table {
		t := &table{header: []string{"ID", "DEFINITION", "PAUSED", "NEXT", "SPEC"}}
		for _, s := range asObj(v).list("schedules") {
			t.add(s["id"], s["definition"], s["paused"], s["next_action_at"], s["spec"])
		}
		return t
	})
}

func scheduleGet(ctx context.Context, env Env, args []string) error {
	return getOne(ctx, env, args, "schedule get ID [--output json|table]", func(id string) string {
		return "/api/v1/schedules/" + url.PathEscape(id)
	}, func(v any) *table {
		s := asObj(v)
		t := &table{header: []string{"ID", "DEFINITION", "PAUSED", "NEXT", "SPEC"}}
		t.add(s["id"], s["definition"], s["paused"], s["next_action_at"], s["spec"])
		return t
	})
}

// specFlags are the flags of a schedule's spec.
var specFlags = []string{"cron", "interval", "timezone", "offset", "jitter", "start-at", "end-at"}

func registerSpec(fs *flags) map[string]*string {
	spec := map[string]*string{}
	for _, f := range specFlags {
		spec[f] = fs.String(f, "", "the spec's "+f)
	}
	return spec
}

func scheduleCreate(ctx context.Context, env Env, args []string) error {
	fs := newFlags("schedule create DEFINITION (--cron EXPR | --interval D) [--id ID] [--input JSON] [--overlap P] [flags]", env)
	spec := registerSpec(fs)
	id := fs.String("id", "", "the schedule's id (default: DEFINITION-xxxxxxxx)")
	input := fs.String("input", "", "the input of every run, as JSON")
	overlap := fs.String("overlap", "", "skip (default), buffer_one, buffer_all, cancel_other, terminate_other or allow_all")
	catchup := fs.String("catchup-window", "", "how old a missed action may be and still run (default 1h)")
	pauseOnFailure := fs.Bool("pause-on-failure", false, "pause when a run it started fails")
	paused := fs.Bool("paused", false, "create it paused")
	def, rest := splitPositional(args)
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if def == "" {
		return want("ductor schedule create DEFINITION (--cron EXPR | --interval D)")
	}
	c := newAPIClient(env)
	req := map[string]any{"definition": def, "spec": specOf(spec), "pause_on_failure": *pauseOnFailure, "paused": *paused}
	setIf(req, "id", *id)
	setIf(req, "overlap", *overlap)
	setIf(req, "catchup_window", *catchup)
	if *input != "" {
		v, err := jsonvalue.Decode([]byte(*input))
		if err != nil {
			return fmt.Errorf("--input is not JSON: %w", err)
		}
		req["input"] = v
	}
	return callJSON(ctx, env, c, "POST", "/api/v1/schedules", req)
}

// specOf turns the spec flags given into the API's spec (start-at →
// start_at).
func specOf(flags map[string]*string) map[string]any {
	out := map[string]any{}
	for name, v := range flags {
		if *v != "" {
			out[strings.ReplaceAll(name, "-", "_")] = *v
		}
	}
	return out
}

func setIf(m map[string]any, key, v string) {
	if v != "" {
		m[key] = v
	}
}

// scheduleUpdate sends the flags given as a PATCH: what is not given is
// kept. A spec flag sends the whole spec those flags make.
func scheduleUpdate(ctx context.Context, env Env, c *apiClient, path string, args []string) error {
	const synopsis = "schedule update ID [--cron EXPR | --interval D] [--timezone Z] [--input JSON] [--overlap P] [flags]"
	fs := newFlags(synopsis, env)
	spec := registerSpec(fs)
	input := fs.String("input", "", "the input of every run, as JSON")
	version := fs.Int("version", 0, "the definition version its runs start")
	overlap := fs.String("overlap", "", "skip, buffer_one, buffer_all, cancel_other, terminate_other or allow_all")
	catchup := fs.String("catchup-window", "", "how old a missed action may be and still run")
	pauseOnFailure := fs.Bool("pause-on-failure", false, "pause when a run it started fails (--pause-on-failure=false: no longer)")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return want("ductor " + synopsis)
	}
	req := map[string]any{}
	for _, f := range specFlags {
		if isSet(fs, f) {
			req["spec"] = specOf(spec)
		}
	}
	if isSet(fs, "input") {
		if err := jsonFlag(req, "input", *input); err != nil {
			return err
		}
	}
	if isSet(fs, "version") {
		req["version"] = *version
	}
	setIf(req, "overlap", *overlap)
	setIf(req, "catchup_window", *catchup)
	if isSet(fs, "pause-on-failure") {
		req["pause_on_failure"] = *pauseOnFailure
	}
	if len(req) == 0 {
		return usagef("nothing to change: give a spec flag, --input, --version, --overlap, --catchup-window or --pause-on-failure (see `ductor schedule update -h`)")
	}
	return callJSON(ctx, env, c, "PATCH", path, req)
}

func schedulePause(ctx context.Context, env Env, c *apiClient, path string, pause bool, args []string) error {
	fs := newFlags("schedule pause ID [--note TEXT]", env)
	note := fs.String("note", "", "why")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return callJSON(ctx, env, c, "PATCH", path, map[string]any{"paused": pause, "note": *note})
}

func scheduleTrigger(ctx context.Context, env Env, c *apiClient, path string, args []string) error {
	fs := newFlags("schedule trigger ID [--overlap P]", env)
	overlap := overlapFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	req := map[string]any{}
	setIf(req, "overlap", *overlap)
	return callJSON(ctx, env, c, "POST", path+"/trigger", req)
}

func scheduleBackfill(ctx context.Context, env Env, c *apiClient, path string, args []string) error {
	fs := newFlags("schedule backfill ID --from T --to T [--overlap P]", env)
	from := fs.String("from", "", "first time (RFC 3339), included")
	to := fs.String("to", "", "last time (RFC 3339), excluded")
	overlap := overlapFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || *to == "" {
		return want("ductor schedule backfill ID --from T --to T [--overlap P]")
	}
	req := map[string]any{"from": *from, "to": *to}
	setIf(req, "overlap", *overlap)
	return callJSON(ctx, env, c, "POST", path+"/backfill", req)
}

func overlapFlag(fs *flags) *string {
	return fs.String("overlap", "", "the overlap policy for this (default: the schedule's)")
}

// callJSON sends body and prints the answer.
func callJSON(ctx context.Context, env Env, c *apiClient, method, path string, body any) error {
	var out any
	if err := c.do(ctx, method, path, body, &out); err != nil {
		return err
	}
	return writeJSON(env, out)
}
