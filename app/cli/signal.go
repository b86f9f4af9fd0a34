package cli

import (
	"context"
	"fmt"
	"net/url"

	"github.com/ductor/ductor/app/jsonvalue"
)

// runSignal handles `ductor signal RUN NAME [--payload JSON] --request-id ID`.
func runSignal(ctx context.Context, env Env, args []string) error {
	fs := newFlags("signal RUN NAME [--payload JSON] --request-id ID", env)
	payload := fs.String("payload", "", "the signal's payload as JSON")
	requestID := fs.String("request-id", "", "the signal's request id: a repeat is refused")
	run, rest := splitPositional(args)
	name, rest := splitPositional(rest)
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if run == "" || name == "" || *requestID == "" {
		return want("ductor signal RUN NAME [--payload JSON] --request-id ID")
	}
	req := map[string]any{"request_id": *requestID, "name": name}
	if err := jsonFlag(req, "payload", *payload); err != nil {
		return err
	}
	c := newAPIClient(env)
	return c.do(ctx, "POST", "/api/v1/runs/"+url.PathEscape(run)+"/signals", req, nil)
}

// runEvent handles `ductor event NAME [--data JSON] [--idempotency-key K]`
// and prints the event's id.
func runEvent(ctx context.Context, env Env, args []string) error {
	fs := newFlags("event NAME [--data JSON] [--idempotency-key K]", env)
	data := fs.String("data", "", "the event's data as JSON")
	key := fs.String("idempotency-key", "", "a repeat of the key returns the first event")
	name, rest := splitPositional(args)
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if name == "" {
		return want("ductor event NAME [--data JSON] [--idempotency-key K]")
	}
	req := map[string]any{"name": name, "idempotency_key": *key}
	if err := jsonFlag(req, "data", *data); err != nil {
		return err
	}
	c := newAPIClient(env)
	var out struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, "POST", "/api/v1/events", req, &out); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, out.ID)
	return nil
}

// jsonFlag decodes a JSON flag value into req[name]; empty leaves it out.
func jsonFlag(req map[string]any, name, raw string) error {
	if raw == "" {
		return nil
	}
	v, err := jsonvalue.Decode([]byte(raw))
	if err != nil {
		return fmt.Errorf("--%s is not JSON: %w", name, err)
	}
	req[name] = v
	return nil
}
