package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

const batchUsage = "ductor run cancel|retry|upgrade --filter NAME=VALUE [--filter …] | --run-id ID [--run-id …] [--reason TEXT] [--version N] [--cancel-removed] [--dry-run] [--wait]"

const runBatchSynopsis = "run batch cancel|retry|upgrade --filter NAME=VALUE… | --run-id ID… [--reason TEXT] [--version N] [--cancel-removed] [--dry-run] [--wait]"

// runBatchVerb handles `ductor run batch ACTION …`, the bulk form of run
// cancel, run retry and run upgrade by name.
func runBatchVerb(ctx context.Context, env Env, args []string) error {
	if len(args) > 0 && isHelp(args[0]) {
		return newFlags(runBatchSynopsis, env).Parse(args)
	}
	if len(args) == 0 {
		return want("ductor " + runBatchSynopsis)
	}
	switch args[0] {
	case "cancel", "retry", "upgrade":
		return runBatch(ctx, env, args[0], args[1:])
	}
	return usagef("run batch %s: the action is cancel, retry or upgrade", args[0])
}

// batchFilterNames are the runs list's filters --filter takes (and
// attr.NAME for a search attribute).
var batchFilterNames = map[string]bool{
	"status": true, "definition": true, "definition_match": true, "subject": true, "q": true,
	"parent_run_id": true, "from": true, "to": true,
}

// batchArgs reports whether the arguments of `run cancel` or `run retry`
// ask for a bulk operation (by --filter or --run-id) rather than one run.
func batchArgs(args []string) bool {
	for _, a := range args {
		for _, f := range []string{"--filter", "-filter", "--run-id", "-run-id"} {
			if a == f || strings.HasPrefix(a, f+"=") {
				return true
			}
		}
	}
	return false
}

// runBatch handles `ductor run cancel|retry|upgrade --filter …`: it
// starts a bulk operation on the runs the filter matches (or the ids
// given), prints it, and with --wait follows it to its end, printing the
// progress on stderr and the finished batch. An upgrade takes the
// version to move the runs to, and with --dry-run prints how many runs
// each outcome would get instead, starting nothing.
func runBatch(ctx context.Context, env Env, action string, args []string) error {
	synopsis := "run " + action + " --filter NAME=VALUE… | --run-id ID… [--reason TEXT] [--wait]"
	if action == "upgrade" {
		synopsis = "run upgrade --filter definition=KEY --filter NAME=VALUE… --version N [--cancel-removed] [--dry-run] [--wait]"
	}
	fs := newFlags(synopsis, env)
	var filters, ids multiFlag
	fs.Var(&filters, "filter", "a runs list filter NAME=VALUE: status, definition, definition_match, subject, q, parent_run_id, from, to or attr.NAME (repeatable)")
	fs.Var(&ids, "run-id", "a run to act on (repeatable; instead of --filter)")
	reason := fs.String("reason", "", "why, recorded on each cancelled run")
	wait := fs.Bool("wait", false, "follow the batch to its end")
	var version *int
	var cancelRemoved, dry *bool
	if action == "upgrade" {
		version = fs.Int("version", 0, "the published version to move the runs to")
		cancelRemoved = fs.Bool("cancel-removed", false, "allow removing steps whose nodes are running or waiting: their work is withdrawn")
		dry = fs.Bool("dry-run", false, "count how many runs each outcome would get, changing nothing")
	}
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || (len(filters) == 0) == (len(ids) == 0) || (version != nil && *version < 1) {
		return want(batchUsage)
	}
	req := map[string]any{"action": action, "reason": *reason}
	path := "/api/v1/runs/batch"
	if version != nil {
		req["version"], req["cancel_removed"] = *version, *cancelRemoved
		if *dry {
			path += "?dry_run=true"
		}
	}
	if len(ids) > 0 {
		req["run_ids"] = splitList(ids)
	} else {
		f, err := batchFilter(filters)
		if err != nil {
			return err
		}
		req["filter"] = f
	}
	c := newAPIClient(env)
	var batch map[string]any
	if err := c.do(ctx, "POST", path, req, &batch); err != nil {
		return err
	}
	if dry != nil && *dry {
		return writeJSON(env, batch) // the counts: nothing was started
	}
	if *wait {
		return followBatch(ctx, env, c, batch)
	}
	return writeJSON(env, batch)
}

// batchFilter turns NAME=VALUE pairs into the API's filter object.
func batchFilter(pairs []string) (map[string]any, error) {
	f := map[string]any{}
	attrs := map[string]any{}
	for _, p := range pairs {
		name, value, ok := strings.Cut(p, "=")
		attr, isAttr := strings.CutPrefix(name, "attr.")
		switch {
		case !ok || name == "":
			return nil, fmt.Errorf("%w: --filter %q is not NAME=VALUE", ErrUsage, p)
		case isAttr && attr != "":
			attrs[attr] = jsonScalar(value)
		case batchFilterNames[name]:
			f[name] = value
		default:
			return nil, fmt.Errorf("%w: --filter %s: no such filter (status, definition, definition_match, subject, q, parent_run_id, from, to, attr.NAME)", ErrUsage, name)
		}
	}
	if len(attrs) > 0 {
		f["attributes"] = attrs
	}
	return f, nil
}

// jsonScalar reads a number or boolean as itself, anything else as text.
func jsonScalar(s string) any {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		switch v.(type) {
		case float64, bool:
			return v
		}
	}
	return s
}

// splitList flattens repeated, comma-separated values.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, x := range strings.Split(v, ",") {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
	}
	return out
}

// followBatch polls the batch until it completes.
func followBatch(ctx context.Context, env Env, c *apiClient, batch map[string]any) error {
	id, _ := batch["id"].(string)
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		fmt.Fprintf(env.Stderr, "%v: %v of %v done, %v failed\n", batch["action"], batch["done"], batch["total"], batch["failed"])
		if batch["status"] != "running" {
			return writeJSON(env, batch)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if err := c.do(ctx, "GET", "/api/v1/batches/"+url.PathEscape(id), nil, &batch); err != nil {
			return err
		}
	}
}
