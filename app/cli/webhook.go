package cli

import (
	"context"
	"fmt"
	"net/url"
)

const webhookUsage = "ductor webhook create ID --event NAME [--scheme standard|github] | list | rotate ID | delete ID"

// runWebhook handles `ductor webhook …`: a thin client of the webhooks
// API. create and rotate print the secret, which is shown only then.
func runWebhook(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s", ErrUsage, webhookUsage)
	}
	c, err := newAPIClient(env)
	if err != nil {
		return err
	}
	sub, rest := args[0], args[1:]
	if sub == "list" {
		return printJSON(ctx, env, c, "/api/v1/webhooks?limit=200")
	}
	id, rest := splitPositional(rest)
	if id == "" {
		return fmt.Errorf("%w: %s", ErrUsage, webhookUsage)
	}
	path := "/api/v1/webhooks/" + url.PathEscape(id)
	switch sub {
	case "create":
		fs := newFlags("webhook create", env)
		event := fs.String("event", "", "the name of the events its deliveries become (required)")
		scheme := fs.String("scheme", "standard", "how deliveries are signed: standard (Standard Webhooks) or github")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		return callJSON(ctx, env, c, "POST", "/api/v1/webhooks", map[string]any{"id": id, "event": *event, "scheme": *scheme})
	case "rotate":
		return callJSON(ctx, env, c, "POST", path+"/rotate", nil)
	case "delete":
		return callJSON(ctx, env, c, "DELETE", path, nil)
	}
	return fmt.Errorf("%w: unknown webhook command %q", ErrUsage, sub)
}
