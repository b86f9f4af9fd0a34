package cli

import (
	"context"
	"net/url"
)

func webhookSubcommands() []subcommand {
	return []subcommand{
		{"create", "webhook create ID --event NAME [--scheme standard|github]", "create an inbound webhook; prints its secret, shown only now", webhookCreate},
		{"list", "webhook list [--output json|table]", "the tenant's webhooks (never their secrets)", webhookList},
		{"get", "webhook get ID [--output json|table]", "a webhook: its event, scheme and URL (never its secret)", webhookGet},
		{"rotate", "webhook rotate ID", "replace a webhook's secret; prints the new one", webhookSimple("POST", "/rotate")},
		{"delete", "webhook delete ID", "delete a webhook", webhookSimple("DELETE", "")},
	}
}

// runWebhook handles `ductor webhook …`: a thin client of the webhooks
// API. create and rotate print the secret, which is shown only then.
func runWebhook(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "webhook", webhookSubcommands(), args)
}

func webhookCreate(ctx context.Context, env Env, args []string) error {
	const synopsis = "webhook create ID --event NAME [--scheme standard|github]"
	fs := newFlags(synopsis, env)
	event := fs.String("event", "", "the name of the events its deliveries become (required)")
	scheme := fs.String("scheme", "standard", "how deliveries are signed: standard (Standard Webhooks) or github")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return want("ductor " + synopsis)
	}
	c := newAPIClient(env)
	return callJSON(ctx, env, c, "POST", "/api/v1/webhooks", map[string]any{"id": pos[0], "event": *event, "scheme": *scheme})
}

func webhookList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("webhook list [--output json|table]", env)
	out := outputFlag(fs, env)
	if _, err := fs.parseArgs(args); err != nil {
		return err
	}
	return readAndRender(ctx, env, "/api/v1/webhooks?limit=200", *out, func(v any) *table {
		t := &table{header: []string{"ID", "EVENT", "SCHEME", "CREATED"}}
		for _, w := range asObj(v).list("webhooks") {
			t.add(w["id"], w["event"], w["scheme"], w["created_at"])
		}
		return t
	})
}

func webhookGet(ctx context.Context, env Env, args []string) error {
	return getOne(ctx, env, args, "webhook get ID [--output json|table]", func(id string) string {
		return "/api/v1/webhooks/" + url.PathEscape(id)
	}, func(v any) *table {
		w := asObj(v)
		t := &table{header: []string{"ID", "EVENT", "SCHEME", "URL", "CREATED"}}
		t.add(w["id"], w["event"], w["scheme"], w["url"], w["created_at"])
		return t
	})
}

// webhookSimple is a call on one webhook, named by the one argument.
func webhookSimple(method, suffix string) func(context.Context, Env, []string) error {
	return func(ctx context.Context, env Env, args []string) error {
		synopsis := "webhook rotate ID"
		if method == "DELETE" {
			synopsis = "webhook delete ID"
		}
		pos, err := newFlags(synopsis, env).parseArgs(args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return want("ductor " + synopsis)
		}
		c := newAPIClient(env)
		return callJSON(ctx, env, c, method, "/api/v1/webhooks/"+url.PathEscape(pos[0])+suffix, nil)
	}
}
