package cli

import (
	"context"
	"fmt"
	"net/url"
)

const nodeUsage = "ductor node cancel RUN NODE [--reason TEXT]"

// runNode handles `ductor node cancel RUN NODE [--reason TEXT]`: it asks
// the run to cancel one running or waiting node (a scatter child by its
// id, REF[KEY]) and prints the API's answer.
func runNode(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] != "cancel" {
		return fmt.Errorf("%w: %s", ErrUsage, nodeUsage)
	}
	fs := newFlags("node cancel", env)
	reason := fs.String("reason", "", "why, recorded on the node")
	run, rest := splitPositional(args[1:])
	node, rest := splitPositional(rest)
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if run == "" || node == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: %s", ErrUsage, nodeUsage)
	}
	c, err := newAPIClient(env)
	if err != nil {
		return err
	}
	var out map[string]any
	path := "/api/v1/runs/" + url.PathEscape(run) + "/nodes/" + url.PathEscape(node) + "/cancel"
	if err := c.do(ctx, "POST", path, map[string]any{"reason": *reason}, &out); err != nil {
		return err
	}
	return writeJSON(env, out)
}
