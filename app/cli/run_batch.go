package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

const batchUsage = "ductor run cancel|retry --filter NAME=VALUE [--filter …] | --run-id ID [--run-id …] [--reason TEXT] [--wait]"

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

// runBatch handles `ductor run cancel|retry --filter …`: it starts a
// bulk operation on the runs the filter matches (or the ids given),
// prints it, and with --wait follows it to its end, printing the
// progress on stderr and the finished batch.
func runBatch(ctx context.Context, env Env, action string, args []string) error {
	fs := newFlags("run "+action+" --filter NAME=VALUE… | --run-id ID… [--reason TEXT] [--wait]", env)
	var filters, ids multiFlag
	fs.Var(&filters, "filter", "a runs list filter NAME=VALUE: status, definition, definition_match, subject, q, parent_run_id, from, to or attr.NAME (repeatable)")
	fs.Var(&ids, "run-id", "a run to act on (repeatable; instead of --filter)")
	reason := fs.String("reason", "", "why, recorded on each cancelled run")
	wait := fs.Bool("wait", false, "follow the batch to its end")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || (len(filters) == 0) == (len(ids) == 0) {
		return want(batchUsage)
	}
	req := map[string]any{"action": action, "reason": *reason}
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
	if err := c.do(ctx, "POST", "/api/v1/runs/batch", req, &batch); err != nil {
		return err
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
