package cli

import (
	"context"
	"io"
	"net/url"
	"os"

	"github.com/ductor/ductor/app/tenantsecrets"
)

func secretSubcommands() []subcommand {
	return []subcommand{
		{"set", "secret set NAME --from-file F | --from-stdin [--description TEXT]", "set or rotate a tenant secret; its value is never printed", secretSet},
		{"list", "secret list [--output json|table]", "the tenant's secrets (metadata only, never a value)", secretList},
		{"delete", "secret delete NAME", "delete a secret: steps that reference it fail with secret_not_found", secretDelete},
	}
}

// runSecret handles `ductor secret …`: a thin client of the secrets API.
// A value is read from a file or standard input, never from a flag, which
// shells keep in their history.
func runSecret(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "secret", secretSubcommands(), args)
}

func secretSet(ctx context.Context, env Env, args []string) error {
	const synopsis = "secret set NAME --from-file F | --from-stdin [--description TEXT]"
	fs := newFlags(synopsis, env)
	file := fs.String("from-file", "", "read the value from this file (as is: a trailing newline is part of it)")
	stdin := fs.Bool("from-stdin", false, "read the value from standard input")
	description := fs.String("description", "", "what the secret is for (kept when empty)")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (*file == "") == !*stdin {
		return want("ductor " + synopsis)
	}
	value, err := readSecretValue(env, *file)
	if err != nil {
		return err
	}
	c := newAPIClient(env)
	return callJSON(ctx, env, c, "PUT", "/api/v1/secrets/"+url.PathEscape(pos[0]), map[string]any{"value": value, "description": *description})
}

// readSecretValue reads at most one byte more than a value may hold, so a
// bigger one is refused by the server without reading it all.
func readSecretValue(env Env, file string) (string, error) {
	var r io.Reader = env.Stdin
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return "", usagef("--from-file: %v", err)
		}
		defer f.Close()
		r = f
	} else if r == nil {
		r = os.Stdin
	}
	b, err := io.ReadAll(io.LimitReader(r, tenantsecrets.MaxValueBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > tenantsecrets.MaxValueBytes {
		return "", usagef("a secret's value is at most %d bytes", tenantsecrets.MaxValueBytes)
	}
	return string(b), nil
}

func secretList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("secret list [--output json|table]", env)
	out := outputFlag(fs, env)
	if _, err := fs.parseArgs(args); err != nil {
		return err
	}
	return readAndRender(ctx, env, "/api/v1/secrets?limit=200", *out, func(v any) *table {
		t := &table{header: []string{"NAME", "VERSION", "UPDATED", "BY", "LAST USED", "DESCRIPTION"}}
		for _, s := range asObj(v).list("secrets") {
			t.add(s["name"], s["version"], s["updated_at"], s["updated_by"], s["last_used_at"], s["description"])
		}
		return t
	})
}

func secretDelete(ctx context.Context, env Env, args []string) error {
	const synopsis = "secret delete NAME"
	pos, err := newFlags(synopsis, env).parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return want("ductor " + synopsis)
	}
	c := newAPIClient(env)
	return callJSON(ctx, env, c, "DELETE", "/api/v1/secrets/"+url.PathEscape(pos[0]), nil)
}
