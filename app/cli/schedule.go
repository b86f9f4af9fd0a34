package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strings"

	"github.com/ductor/ductor/app/jsonvalue"
)

const scheduleUsage = "ductor schedule create DEFINITION (--cron EXPR | --interval D) [flags] | list | get ID | pause ID [--note N] | unpause ID | trigger ID [--overlap P] | backfill ID --from T --to T [--overlap P] | delete ID"

// runSchedule handles `ductor schedule …`: a thin client of the
// schedules API.
func runSchedule(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s", ErrUsage, scheduleUsage)
	}
	c, err := newAPIClient(env)
	if err != nil {
		return err
	}
	sub, rest := args[0], args[1:]
	if sub == "create" {
		return scheduleCreate(ctx, env, c, rest)
	}
	if sub == "list" {
		return printJSON(ctx, env, c, "/api/v1/schedules?limit=200")
	}
	id, rest := splitPositional(rest)
	if id == "" {
		return fmt.Errorf("%w: %s", ErrUsage, scheduleUsage)
	}
	path := "/api/v1/schedules/" + url.PathEscape(id)
	switch sub {
	case "get":
		return printJSON(ctx, env, c, path)
	case "delete":
		return callJSON(ctx, env, c, "DELETE", path, nil)
	case "pause", "unpause":
		return schedulePause(ctx, env, c, path, sub == "pause", rest)
	case "trigger":
		return scheduleTrigger(ctx, env, c, path, rest)
	case "backfill":
		return scheduleBackfill(ctx, env, c, path, rest)
	}
	return fmt.Errorf("%w: unknown schedule command %q", ErrUsage, sub)
}

func scheduleCreate(ctx context.Context, env Env, c *apiClient, args []string) error {
	fs := newFlags("schedule create", env)
	spec := map[string]*string{}
	for _, f := range []string{"cron", "interval", "timezone", "offset", "jitter", "start-at", "end-at"} {
		spec[f] = fs.String(f, "", "the spec's "+f)
	}
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
		return fmt.Errorf("%w: ductor schedule create DEFINITION (--cron EXPR | --interval D)", ErrUsage)
	}
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

func schedulePause(ctx context.Context, env Env, c *apiClient, path string, pause bool, args []string) error {
	fs := newFlags("schedule pause", env)
	note := fs.String("note", "", "why")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return callJSON(ctx, env, c, "PATCH", path, map[string]any{"paused": pause, "note": *note})
}

func scheduleTrigger(ctx context.Context, env Env, c *apiClient, path string, args []string) error {
	fs := newFlags("schedule trigger", env)
	overlap := overlapFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	req := map[string]any{}
	setIf(req, "overlap", *overlap)
	return callJSON(ctx, env, c, "POST", path+"/trigger", req)
}

func scheduleBackfill(ctx context.Context, env Env, c *apiClient, path string, args []string) error {
	fs := newFlags("schedule backfill", env)
	from := fs.String("from", "", "first time (RFC 3339), included")
	to := fs.String("to", "", "last time (RFC 3339), excluded")
	overlap := overlapFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || *to == "" {
		return fmt.Errorf("%w: ductor schedule backfill ID --from T --to T", ErrUsage)
	}
	req := map[string]any{"from": *from, "to": *to}
	setIf(req, "overlap", *overlap)
	return callJSON(ctx, env, c, "POST", path+"/backfill", req)
}

func overlapFlag(fs *flag.FlagSet) *string {
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
