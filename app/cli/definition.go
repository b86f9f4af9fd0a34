package cli

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
)

func definitionSubcommands() []subcommand {
	return []subcommand{
		{"list", "definition list [--limit N] [--cursor C] [--output json|table]", "the tenant's definitions by key, a page at a time", runDefinitionList},
		{"get", "definition get KEY [--version N] [--output json|table]", "a definition and its versions; with --version, that version with its source and manifest", runDefinitionGet},
		{"unpublish", "definition unpublish KEY N", "unpublish version N: its runs go on, new runs start the newest version still published", runDefinitionUnpublish},
	}
}

// runDefinition handles `ductor definition …`.
func runDefinition(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "definition", definitionSubcommands(), args)
}

func runDefinitionList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("definition list [--limit N] [--cursor C] [--output json|table]", env)
	q := queryFlags(fs, "cursor", "the next page: the cursor the previous page printed")
	limit := fs.Int("limit", 50, "definitions per page (at most 500)")
	out := outputFlag(fs, env)
	if _, err := fs.parseArgs(args); err != nil {
		return err
	}
	v := q.values()
	v.Set("limit", fmt.Sprint(*limit))
	return readAndRender(ctx, env, "/api/v1/definitions?"+v.Encode(), *out, func(v any) *table {
		o := asObj(v)
		t := &table{header: []string{"KEY", "NAME", "LATEST", "DRAFT", "UPDATED"}}
		for _, d := range o.list("definitions") {
			t.add(d["key"], d["name"], d["latest_version"], d["has_draft"], d["updated_at"])
		}
		t.footer = nextPage(o, "ductor definition list")
		return t
	})
}

func runDefinitionGet(ctx context.Context, env Env, args []string) error {
	const synopsis = "definition get KEY [--version N] [--output json|table]"
	fs := newFlags(synopsis, env)
	version := fs.Int("version", 0, "one version, with its source and manifest")
	out := outputFlag(fs, env)
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return want("ductor " + synopsis)
	}
	path := "/api/v1/definitions/" + url.PathEscape(pos[0])
	if *version > 0 {
		return readAndRender(ctx, env, path+"/versions/"+strconv.Itoa(*version), *out, versionTable)
	}
	return readAndRender(ctx, env, path, *out, func(v any) *table {
		d := asObj(v)
		t := &table{header: []string{"VERSION", "PUBLISHED", "HASH", "PUBLISHED_AT", "UNPUBLISHED_AT"}}
		for _, ver := range d.list("versions") {
			t.add(ver["version"], ver["published"], ver["manifest_hash"], ver["published_at"], ver["unpublished_at"])
		}
		t.footer = []string{fmt.Sprintf("definition %s (%s), latest version %s, draft %s",
			cellText(d["key"]), cellText(d["name"]), cellText(d["latest_version"]), cellText(d["has_draft"]))}
		return t
	})
}

// versionTable shows a version's facts, then its source.
func versionTable(v any) *table {
	ver := asObj(v)
	t := &table{header: []string{"KEY", "VERSION", "PUBLISHED", "HASH"}}
	t.add(ver["key"], ver["version"], ver["published"], ver["manifest_hash"])
	if src, ok := ver["source"].(string); ok {
		t.footer = []string{"", src}
	}
	return t
}

func runDefinitionUnpublish(ctx context.Context, env Env, args []string) error {
	const synopsis = "definition unpublish KEY N"
	fs := newFlags(synopsis, env)
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return want("ductor " + synopsis)
	}
	n, err := strconv.Atoi(pos[1])
	if err != nil || n < 1 {
		return usagef("the version must be a number from 1, not %q", pos[1])
	}
	c := newAPIClient(env)
	path := "/api/v1/definitions/" + url.PathEscape(pos[0]) + "/versions/" + strconv.Itoa(n)
	if err := c.do(ctx, "DELETE", path, nil, nil); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s v%d unpublished\n", pos[0], n)
	return nil
}
