package cli

import "context"

// runWhoami handles `ductor whoami`: the tenant, name, prefix and scopes
// of the API key the command calls with, from GET /api/v1/whoami.
func runWhoami(ctx context.Context, env Env, args []string) error {
	fs := newFlags("whoami [--output json|table]", env)
	out := outputFlag(fs, env)
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return want("ductor whoami [--output json|table]")
	}
	return readAndRender(ctx, env, "/api/v1/whoami", *out, func(v any) *table {
		k := asObj(v)
		t := &table{header: []string{"TENANT", "KEY", "NAME", "PREFIX", "SCOPES"}}
		var scopes []string
		for _, sc := range asList(k["scopes"]) {
			scopes = append(scopes, cellText(sc))
		}
		t.add(k["tenant_id"], k["key_id"], k["key_name"], k["prefix"], scopes)
		return t
	})
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
