package cli

import (
	"context"
	"net/url"
)

const nodeUsage = "ductor node cancel RUN NODE [--reason TEXT]"

// runNode handles `ductor node cancel RUN NODE [--reason TEXT]`: it asks
// the run to cancel one running or waiting node (a scatter child by its
// id, REF[KEY]) and prints the API's answer.
func runNode(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "node", []subcommand{
		{"cancel", "node cancel RUN NODE [--reason TEXT]", "cancel one running or waiting node (a scatter child by its id, REF[KEY])", runNodeCancel},
	}, args)
}

func runNodeCancel(ctx context.Context, env Env, args []string) error {
	fs := newFlags("node cancel RUN NODE [--reason TEXT]", env)
	reason := fs.String("reason", "", "why, recorded on the node")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return want(nodeUsage)
	}
	run, node := pos[0], pos[1]
	c := newAPIClient(env)
	var out map[string]any
	path := "/api/v1/runs/" + url.PathEscape(run) + "/nodes/" + url.PathEscape(node) + "/cancel"
	if err := c.do(ctx, "POST", path, map[string]any{"reason": *reason}, &out); err != nil {
		return err
	}
	return writeJSON(env, out)
}
