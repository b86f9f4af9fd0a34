package cli

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
)

const upgradeSynopsis = "run upgrade ID --version N [--dry-run] [--cancel-removed] [--output json|table]"

// runUpgrade handles `ductor run upgrade ID --version N`: it moves a run
// to another version of its definition (POST /api/v1/runs/ID/upgrade,
// docs/upgrades.md) and prints the plan, node by node; with --dry-run it
// only plans. A refused upgrade prints its plan, with the refusals, and
// fails. With --filter or --run-id it is the bulk form (run batch
// upgrade).
func runUpgrade(ctx context.Context, env Env, args []string) error {
	if batchArgs(args) {
		return runBatch(ctx, env, "upgrade", args)
	}
	fs := newFlags(upgradeSynopsis, env)
	version := fs.Int("version", 0, "the published version to move the run to")
	dry := fs.Bool("dry-run", false, "plan only: print what would happen, change nothing")
	cancel := fs.Bool("cancel-removed", false, "allow removing steps whose nodes are running or waiting: their work is withdrawn")
	out := outputFlag(fs, env)
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *version < 1 {
		return want("ductor " + upgradeSynopsis)
	}
	path := "/api/v1/runs/" + url.PathEscape(pos[0]) + "/upgrade"
	if *dry {
		path += "?dry_run=true"
	}
	var res map[string]any
	err = newAPIClient(env).do(ctx, "POST", path, map[string]any{"version": *version, "cancel_removed": *cancel}, &res)
	var apiErr *apiError
	if errors.As(err, &apiErr) && len(apiErr.Details) > 0 {
		// A refusal's details are the plan: print it, then fail.
		var plan map[string]any
		if json.Unmarshal(apiErr.Details, &plan) == nil && plan["plan"] != nil {
			if perr := render(env, *out, plan, planTable); perr != nil {
				return perr
			}
		}
		return err
	}
	if err != nil {
		return err
	}
	return render(env, *out, res, planTable)
}

// planTable lists an upgrade's plan: each node's outcome and effect,
// then what the target's expressions read that the run will not have,
// and the refusals.
func planTable(v any) *table {
	res := asObj(v)
	t := &table{header: []string{"NODE", "OUTCOME", "STATE", "WOULD_RUN", "EFFECT"}}
	plan := asObj(res.get("plan"))
	for _, n := range plan.list("nodes") {
		t.add(n["ref"], n["outcome"], n["state"], n["would_run"], n["effect"])
	}
	for _, m := range plan.list("missing_reads") {
		t.add(m["path"], "missing_read", "", "", m["message"])
	}
	for _, r := range plan.list("refusals") {
		t.add(r["path"], "refused", "", "", r["message"])
	}
	return t
}
