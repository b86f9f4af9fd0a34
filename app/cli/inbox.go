package cli

import (
	"context"
	"fmt"
	"net/url"
)

func approvalSubcommands() []subcommand {
	return []subcommand{
		{"list", "approval list [--status pending|approved|rejected|closed] [--limit N] [--output json|table]", "the tenant's approvals", runApprovalList},
		{"decide", "approval decide ID approve|reject [--comment TEXT]", "decide an approval as the API key", runApprovalDecide},
	}
}

// runApproval handles `ductor approval …`.
func runApproval(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "approval", approvalSubcommands(), args)
}

func runApprovalList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("approval list [--status S] [--limit N] [--output json|table]", env)
	q := queryFlags(fs, "status", "pending, approved, rejected or closed (default: all)", "limit", "approvals at most")
	out := outputFlag(fs, env)
	if _, err := fs.parseArgs(args); err != nil {
		return err
	}
	return readAndRender(ctx, env, "/api/v1/approvals?"+q.values().Encode(), *out, func(v any) *table {
		t := &table{header: []string{"ID", "RUN", "NODE", "TITLE", "STATUS", "APPROVERS", "CREATED"}}
		for _, a := range asObj(v).list("approvals") {
			t.add(a["id"], a["run_id"], a["node"], a["title"], a["status"], a["approvers"], a["created_at"])
		}
		return t
	})
}

func runApprovalDecide(ctx context.Context, env Env, args []string) error {
	const synopsis = "approval decide ID approve|reject [--comment TEXT]"
	fs := newFlags(synopsis, env)
	comment := fs.String("comment", "", "a comment for the run's history")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || (pos[1] != "approve" && pos[1] != "reject") {
		return want("ductor " + synopsis)
	}
	c := newAPIClient(env)
	body := map[string]any{"decision": pos[1], "comment": *comment}
	var a map[string]any
	if err := c.do(ctx, "POST", "/api/v1/approvals/"+url.PathEscape(pos[0])+"/decision", body, &a); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "approval %s: %s\n", pos[0], cellText(a["status"]))
	return nil
}

func caseSubcommands() []subcommand {
	return []subcommand{
		{"list", "case list [--status S] [--limit N] [--include data] [--output json|table]", "the tenant's human-loop cases (their data only with --include data, each up to 64 KiB)", runCaseList},
		{"get", "case get ID [--output json|table]", "one case whole, with its data", runCaseGet},
		{"update", "case update ID [--status S] [--data JSON]", "set a case's status and data; the awaited status resumes its run", runCaseUpdate},
	}
}

// runCase handles `ductor case …`.
func runCase(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "case", caseSubcommands(), args)
}

func runCaseList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("case list [--status S] [--limit N] [--include data] [--output json|table]", env)
	q := queryFlags(fs, "status", "only cases with this status", "limit", "cases at most",
		"include", "data: each case's data too (a larger one than 64 KiB is left out and named in truncated)")
	out := outputFlag(fs, env)
	if _, err := fs.parseArgs(args); err != nil {
		return err
	}
	return readAndRender(ctx, env, "/api/v1/cases?"+q.values().Encode(), *out, func(v any) *table {
		t := &table{header: []string{"ID", "RUN", "NODE", "TITLE", "STATUS", "AWAITING", "UPDATED"}}
		for _, c := range asObj(v).list("cases") {
			t.add(c["id"], c["run_id"], c["node"], c["title"], c["status"], c["awaiting_status"], c["updated_at"])
		}
		return t
	})
}

func runCaseGet(ctx context.Context, env Env, args []string) error {
	return getOne(ctx, env, args, "case get ID [--output json|table]", func(id string) string {
		return "/api/v1/cases/" + url.PathEscape(id)
	}, func(v any) *table {
		c := asObj(v)
		t := &table{header: []string{"ID", "RUN", "NODE", "TITLE", "STATUS", "AWAITING", "DATA"}}
		t.add(c["id"], c["run_id"], c["node"], c["title"], c["status"], c["awaiting_status"], c["data"])
		return t
	})
}

func runCaseUpdate(ctx context.Context, env Env, args []string) error {
	const synopsis = "case update ID [--status S] [--data JSON]"
	fs := newFlags(synopsis, env)
	status := fs.String("status", "", "the new status (left out: unchanged)")
	data := fs.String("data", "", "the case's data as JSON (left out: unchanged)")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (*status == "" && *data == "") {
		return want("ductor " + synopsis)
	}
	body := map[string]any{}
	if *status != "" {
		body["status"] = *status
	}
	if err := jsonFlag(body, "data", *data); err != nil {
		return err
	}
	c := newAPIClient(env)
	var updated map[string]any
	if err := c.do(ctx, "PATCH", "/api/v1/cases/"+url.PathEscape(pos[0]), body, &updated); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "case %s: %s\n", pos[0], cellText(updated["status"]))
	return nil
}
