package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// runRun handles `ductor run start|get|list|cancel|retry`.
func runRun(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: ductor run start KEY [--input JSON] [--wait] | run get ID | run list | %s", ErrUsage, strings.TrimPrefix(batchUsage, "ductor "))
	}
	if (args[0] == "cancel" || args[0] == "retry") && batchArgs(args[1:]) {
		return runBatch(ctx, env, args[0], args[1:])
	}
	c, err := newAPIClient(env)
	if err != nil {
		return err
	}
	switch args[0] {
	case "start":
		return runStart(ctx, env, c, args[1:])
	case "get":
		if len(args) != 2 {
			return fmt.Errorf("%w: ductor run get ID", ErrUsage)
		}
		return printJSON(ctx, env, c, "/api/v1/runs/"+url.PathEscape(args[1]))
	case "list":
		return runList(ctx, env, c, args[1:])
	}
	return fmt.Errorf("%w: unknown run command %q", ErrUsage, args[0])
}

func runStart(ctx context.Context, env Env, c *apiClient, args []string) error {
	fs := newFlags("run start", env)
	input := fs.String("input", "", "the run's input as JSON")
	wait := fs.Bool("wait", false, "wait for the run to end and print it")
	subject := fs.String("subject", "", "the run's subject")
	key, rest := splitPositional(args)
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if key == "" && fs.NArg() > 0 {
		key = fs.Arg(0)
	}
	if key == "" {
		return fmt.Errorf("%w: ductor run start KEY", ErrUsage)
	}
	req := map[string]any{"definition": key, "subject": *subject}
	if *input != "" {
		var v any
		if err := json.Unmarshal([]byte(*input), &v); err != nil {
			return fmt.Errorf("--input is not JSON: %w", err)
		}
		req["input"] = v
	}
	var started struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, "POST", "/api/v1/runs", req, &started); err != nil {
		return err
	}
	if !*wait {
		fmt.Fprintln(env.Stdout, started.ID)
		return nil
	}
	return waitRun(ctx, env, c, started.ID)
}

// waitRun polls the run until it ends, then prints it.
func waitRun(ctx context.Context, env Env, c *apiClient, id string) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		var run map[string]any
		if err := c.do(ctx, "GET", "/api/v1/runs/"+id, nil, &run); err != nil {
			return err
		}
		switch run["status"] {
		case "succeeded", "failed", "cancelled", "timed_out", "terminated":
			return writeJSON(env, run)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func runList(ctx context.Context, env Env, c *apiClient, args []string) error {
	fs := newFlags("run list", env)
	status := fs.String("status", "", "only runs with this status")
	def := fs.String("definition", "", "only runs of this definition")
	limit := fs.Int("limit", 50, "how many runs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	q := url.Values{}
	q.Set("limit", fmt.Sprint(*limit))
	if *status != "" {
		q.Set("status", *status)
	}
	if *def != "" {
		q.Set("definition", *def)
	}
	return printJSON(ctx, env, c, "/api/v1/runs?"+q.Encode())
}

func printJSON(ctx context.Context, env Env, c *apiClient, path string) error {
	var v any
	if err := c.do(ctx, "GET", path, nil, &v); err != nil {
		return err
	}
	return writeJSON(env, v)
}

func writeJSON(env Env, v any) error {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
