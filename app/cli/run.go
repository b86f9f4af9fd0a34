package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"time"
)

func runSubcommands() []subcommand {
	return []subcommand{
		{"start", "run start KEY [--input JSON] [--version N] [--subject S] [--idempotency-key K] [--wait] [--output json|table]", "start a run of a published definition; prints its id (with --output, the run; with --wait, the ended run)", runStart},
		{"get", "run get ID [--output json|table]", "a run with its nodes", runGet},
		{"list", "run list [--status S] [--definition KEY] [--subject S] [--limit N] [--cursor C] [--output json|table]", "runs, newest first, a page at a time", runList},
		{"history", "run history ID [--limit N] [--after SEQ] [--output json|table]", "a run's transitions, oldest first", runHistory},
		{"cancel", "run cancel ID [--reason TEXT] | run cancel --filter NAME=VALUE… | --run-id ID… [--reason TEXT] [--wait]", "cancel a run (and its sync children), or in bulk the runs a filter matches", runCancel},
		{"retry", "run retry ID NODE | run retry --filter NAME=VALUE… | --run-id ID… [--wait]", "retry a failed step and what follows it, keeping upstream outputs; in bulk, each failed or cancelled run", runRetry},
		{"upgrade", "run upgrade ID --version N [--dry-run] [--cancel-removed] [--output json|table] | run upgrade --filter definition=KEY… --version N [--dry-run] [--cancel-removed] [--wait]", "move a run to another version of its definition and print the plan (--dry-run: only plan); in bulk, the runs a filter matches", runUpgrade},
		{"batch", runBatchSynopsis, "a bulk operation by action: cancel, retry or upgrade the runs a filter (or --run-id) names", runBatchVerb},
	}
}

// runRun handles `ductor run …`.
func runRun(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "run", runSubcommands(), args)
}

func runStart(ctx context.Context, env Env, args []string) error {
	const synopsis = "run start KEY [--input JSON] [--version N] [--subject S] [--idempotency-key K] [--wait] [--output json|table]"
	fs := newFlags(synopsis, env)
	input := fs.String("input", "", "the run's input as JSON")
	version := fs.Int("version", 0, "the version to run (default: the latest)")
	wait := fs.Bool("wait", false, "wait for the run to end and print it")
	subject := fs.String("subject", "", "the run's subject")
	idem := fs.String("idempotency-key", "", "a repeat with the same key answers the first run")
	out := outputFlag(fs, env)
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return want("ductor " + synopsis)
	}
	req := map[string]any{"definition": pos[0], "subject": *subject}
	if *version > 0 {
		req["version"] = *version
	}
	if *idem != "" {
		req["idempotency_key"] = *idem
	}
	if err := jsonFlag(req, "input", *input); err != nil {
		return err
	}
	c := newAPIClient(env)
	var started struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, "POST", "/api/v1/runs", req, &started); err != nil {
		return err
	}
	switch {
	case *wait:
		return waitRun(ctx, env, c, started.ID, *out)
	case isSet(fs, "output"):
		return readAndRender(ctx, env, "/api/v1/runs/"+url.PathEscape(started.ID), *out, runTable)
	}
	fmt.Fprintln(env.Stdout, started.ID)
	return nil
}

// isSet reports whether the command line gave the flag.
func isSet(fs *flags, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// ErrRunNotSucceeded is what `run start --wait` returns (and so exits 1
// with) when the run ended failed, cancelled, timed_out or terminated.
var ErrRunNotSucceeded = errors.New("the run did not succeed")

// waitRun polls the run until it ends, then prints it; a run that did not
// succeed is ErrRunNotSucceeded.
func waitRun(ctx context.Context, env Env, c *apiClient, id, format string) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		var run map[string]any
		if err := c.do(ctx, "GET", "/api/v1/runs/"+id, nil, &run); err != nil {
			return err
		}
		switch run["status"] {
		case "succeeded":
			return render(env, format, run, runTable)
		case "failed", "cancelled", "timed_out", "terminated":
			if err := render(env, format, run, runTable); err != nil {
				return err
			}
			return fmt.Errorf("%w: run %s ended %s", ErrRunNotSucceeded, id, run["status"])
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func runGet(ctx context.Context, env Env, args []string) error {
	return getOne(ctx, env, args, "run get ID [--output json|table]", func(id string) string {
		return "/api/v1/runs/" + url.PathEscape(id)
	}, runTable)
}

// getOne is a read command of one object named by its one argument.
func getOne(ctx context.Context, env Env, args []string, synopsis string, path func(string) string, tab func(any) *table) error {
	fs := newFlags(synopsis, env)
	out := outputFlag(fs, env)
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return want("ductor " + synopsis)
	}
	return readAndRender(ctx, env, path(pos[0]), *out, tab)
}

func readAndRender(ctx context.Context, env Env, path, format string, tab func(any) *table) error {
	c := newAPIClient(env)
	var v any
	if err := c.do(ctx, "GET", path, nil, &v); err != nil {
		return err
	}
	return render(env, format, v, tab)
}

// runTable shows a run's fields, then its nodes.
func runTable(v any) *table {
	r := asObj(v)
	t := &table{header: []string{"NODE", "TYPE", "STATE", "ATTEMPT", "WAITING", "ERROR"}}
	for _, n := range r.list("nodes") {
		t.add(n["node"], n["type"], n["state"], n["attempt"], n.get("waiting", "type"), n.get("error", "message"))
	}
	t.footer = []string{
		fmt.Sprintf("run %s: %s %s v%v", cellText(r["id"]), cellText(r["status"]), cellText(r["definition"]), r["version"]),
		"output: " + cellText(r["output"]),
	}
	if e := r.get("error", "message"); e != nil {
		t.footer = append(t.footer, fmt.Sprintf("error: %s: %s", cellText(r.get("error", "code")), cellText(e)))
	}
	return t
}

func runList(ctx context.Context, env Env, args []string) error {
	const synopsis = "run list [--status S] [--definition KEY] [--subject S] [--limit N] [--cursor C] [--output json|table]"
	fs := newFlags(synopsis, env)
	q := queryFlags(fs, "status", "only runs with this status", "definition", "only runs of this definition key",
		"subject", "only runs with this subject", "cursor", "the next page: the cursor the previous page printed")
	limit := fs.Int("limit", 50, "runs per page (at most 500)")
	out := outputFlag(fs, env)
	if _, err := fs.parseArgs(args); err != nil {
		return err
	}
	v := q.values()
	v.Set("limit", fmt.Sprint(*limit))
	return readAndRender(ctx, env, "/api/v1/runs?"+v.Encode(), *out, func(v any) *table {
		o := asObj(v)
		t := &table{header: []string{"ID", "DEFINITION", "VERSION", "STATUS", "SUBJECT", "CREATED", "FINISHED"}}
		for _, r := range o.list("runs") {
			t.add(r["id"], r["definition"], r["version"], r["status"], r["subject"], r["created_at"], r["finished_at"])
		}
		t.footer = nextPage(o, "ductor run list")
		return t
	})
}

func runHistory(ctx context.Context, env Env, args []string) error {
	const synopsis = "run history ID [--limit N] [--after SEQ] [--output json|table]"
	fs := newFlags(synopsis, env)
	q := queryFlags(fs, "after", "only transitions after this sequence number", "limit", "transitions at most")
	out := outputFlag(fs, env)
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return want("ductor " + synopsis)
	}
	path := "/api/v1/runs/" + url.PathEscape(pos[0]) + "/history?" + q.values().Encode()
	return readAndRender(ctx, env, path, *out, func(v any) *table {
		t := &table{header: []string{"SEQ", "AT", "NODE", "FROM", "TO", "DETAIL"}}
		for _, tr := range asObj(v).list("transitions") {
			t.add(tr["seq"], tr["at"], tr["node"], tr["from"], tr["to"], tr["detail"])
		}
		return t
	})
}

func runCancel(ctx context.Context, env Env, args []string) error {
	if batchArgs(args) {
		return runBatch(ctx, env, "cancel", args)
	}
	const synopsis = "run cancel ID [--reason TEXT]"
	fs := newFlags(synopsis, env)
	reason := fs.String("reason", "", "why, for the run's history")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return want("ductor " + synopsis)
	}
	return post(ctx, env, "/api/v1/runs/"+url.PathEscape(pos[0])+"/cancel", map[string]any{"reason": *reason},
		"cancelling run "+pos[0])
}

func runRetry(ctx context.Context, env Env, args []string) error {
	if batchArgs(args) {
		return runBatch(ctx, env, "retry", args)
	}
	const synopsis = "run retry ID NODE"
	fs := newFlags(synopsis, env)
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return want("ductor " + synopsis)
	}
	path := "/api/v1/runs/" + url.PathEscape(pos[0]) + "/nodes/" + url.PathEscape(pos[1]) + "/retry"
	return post(ctx, env, path, map[string]any{}, "retrying "+pos[1]+" of run "+pos[0])
}

// post sends a change and prints what it did.
func post(ctx context.Context, env Env, path string, body any, done string) error {
	c := newAPIClient(env)
	if err := c.do(ctx, "POST", path, body, nil); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, done)
	return nil
}

// query holds string flags that become query parameters.
type query map[string]*string

// queryFlags registers a string flag per (name, usage) pair.
func queryFlags(fs *flags, pairs ...string) query {
	q := query{}
	for i := 0; i+1 < len(pairs); i += 2 {
		q[pairs[i]] = fs.String(pairs[i], "", pairs[i+1])
	}
	return q
}

func (q query) values() url.Values {
	v := url.Values{}
	for k, p := range q {
		if *p != "" {
			v.Set(k, *p)
		}
	}
	return v
}
