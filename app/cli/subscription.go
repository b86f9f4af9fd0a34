package cli

import (
	"context"
	"net/url"
	"strconv"
	"strings"
)

func subscriptionSubcommands() []subcommand {
	return []subcommand{
		{"create", "subscription create URL --event NAME... [--filter EXPR] [--description TEXT]", "create an outbound webhook subscription; prints its secret, shown only now", subscriptionCreate},
		{"list", "subscription list [--output json|table]", "the tenant's subscriptions (never their secrets)", subscriptionList},
		{"get", "subscription get ID [--output json|table]", "a subscription: its URL, events, filter and state", subscriptionGet},
		{"delete", "subscription delete ID", "delete a subscription with its delivery log", subscriptionSimple("delete", "DELETE", "")},
		{"rotate-secret", "subscription rotate-secret ID", "a new signing secret, printed once; the previous one still signs for 24 hours", subscriptionSimple("rotate-secret", "POST", "/rotate")},
		{"enable", "subscription enable ID", "enable a disabled subscription, its failures forgotten", subscriptionSimple("enable", "POST", "/enable")},
		{"deliveries", "subscription deliveries ID [--limit N] [--output json|table]", "the delivery log: each delivery with its attempts", subscriptionDeliveries},
		{"redeliver", "subscription redeliver ID DELIVERY", "send a delivered or failed delivery again", subscriptionRedeliver},
	}
}

// runSubscription handles `ductor subscription …`: a thin client of the
// subscriptions API. create and rotate-secret print the secret, which is
// shown only then.
func runSubscription(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "subscription", subscriptionSubcommands(), args)
}

func subscriptionPath(id string) string { return "/api/v1/subscriptions/" + url.PathEscape(id) }

func subscriptionCreate(ctx context.Context, env Env, args []string) error {
	const synopsis = "subscription create URL --event NAME... [--filter EXPR] [--description TEXT]"
	fs := newFlags(synopsis, env)
	var events multiFlag
	fs.Var(&events, "event", "an event name to deliver, or * for all (repeatable; required)")
	filter := fs.String("filter", "", "a CEL expression over `event`, the event's data: only events it is true for are delivered")
	description := fs.String("description", "", "what the subscription is for")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || len(events) == 0 {
		return want("ductor " + synopsis)
	}
	c := newAPIClient(env)
	return callJSON(ctx, env, c, "POST", "/api/v1/subscriptions", map[string]any{
		"url": pos[0], "events": []string(events), "filter_expr": *filter, "description": *description,
	})
}

func subscriptionList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("subscription list [--output json|table]", env)
	out := outputFlag(fs, env)
	if _, err := fs.parseArgs(args); err != nil {
		return err
	}
	return readAndRender(ctx, env, "/api/v1/subscriptions?limit=100", *out, func(v any) *table {
		t := &table{header: []string{"ID", "URL", "EVENTS", "DISABLED", "FAILURES", "CREATED"}}
		for _, s := range asObj(v).list("subscriptions") {
			t.add(s["id"], s["url"], joinCell(s["events"]), s["disabled"], s["failures"], s["created_at"])
		}
		return t
	})
}

func subscriptionGet(ctx context.Context, env Env, args []string) error {
	return getOne(ctx, env, args, "subscription get ID [--output json|table]", subscriptionPath, func(v any) *table {
		s := asObj(v)
		t := &table{header: []string{"ID", "URL", "EVENTS", "FILTER", "DISABLED", "FAILURES", "CREATED"}}
		t.add(s["id"], s["url"], joinCell(s["events"]), s["filter_expr"], s["disabled"], s["failures"], s["created_at"])
		if r, _ := s["disabled_reason"].(string); r != "" {
			t.footer = []string{"disabled: " + r}
		}
		return t
	})
}

func subscriptionDeliveries(ctx context.Context, env Env, args []string) error {
	const synopsis = "subscription deliveries ID [--limit N] [--output json|table]"
	fs := newFlags(synopsis, env)
	out := outputFlag(fs, env)
	limit := fs.Int("limit", 50, "how many deliveries, newest first")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return want("ductor " + synopsis)
	}
	path := subscriptionPath(pos[0]) + "/deliveries?limit=" + strconv.Itoa(*limit)
	return readAndRender(ctx, env, path, *out, func(v any) *table {
		t := &table{header: []string{"DELIVERY", "EVENT", "STATUS", "ATTEMPTS", "LAST STATUS", "LAST ERROR", "CREATED"}}
		for _, d := range asObj(v).list("deliveries") {
			attempts, _ := d["attempts"].([]any)
			var code, errText any
			if len(attempts) > 0 {
				last := asObj(attempts[len(attempts)-1])
				code, errText = last["status"], last["error"]
			}
			t.add(d["id"], d["event"], d["status"], len(attempts), code, errText, d["created_at"])
		}
		return t
	})
}

func subscriptionRedeliver(ctx context.Context, env Env, args []string) error {
	const synopsis = "subscription redeliver ID DELIVERY"
	pos, err := newFlags(synopsis, env).parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return want("ductor " + synopsis)
	}
	c := newAPIClient(env)
	return callJSON(ctx, env, c, "POST", subscriptionPath(pos[0])+"/deliveries/"+url.PathEscape(pos[1])+"/redeliver", nil)
}

// subscriptionSimple is a call on one subscription, named by the one
// argument.
func subscriptionSimple(verb, method, suffix string) func(context.Context, Env, []string) error {
	return func(ctx context.Context, env Env, args []string) error {
		synopsis := "subscription " + verb + " ID"
		pos, err := newFlags(synopsis, env).parseArgs(args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return want("ductor " + synopsis)
		}
		c := newAPIClient(env)
		return callJSON(ctx, env, c, method, subscriptionPath(pos[0])+suffix, nil)
	}
}

// joinCell shows a JSON list of strings as one cell.
func joinCell(v any) string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = cellText(s)
	}
	return strings.Join(out, ",")
}
