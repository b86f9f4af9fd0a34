package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
)

const seedUsage = "ductor seed -f FILE"

// seedHelp documents the seed file.
const seedHelp = `ductor seed -f FILE loads dev and demo data straight into DATABASE_URL.

The seed file is YAML or JSON:

  tenants:
    - slug: acme                 # required; created unless it exists
      name: Acme Corp            # default: the slug
      tier: standard             # interactive, standard (default), bulk or a tier made with tier set
      definitions:               # each published; an unchanged one keeps its version
        - file: flows/orders.yaml  # relative to the seed file
        - document:              # or the definition inline
            key: hello
            steps: [{ref: hi, type: transform, with: {expr: '"hi"'}}]
      api_keys:                  # a key is created once per name; its secret is printed once
        - name: ci
          scopes: ["runs:write", "runs:read"]   # default: admin
      members:                   # people, matched by their login's email
        - {email: dana@example.com, role: owner}
      schedules:                 # created once per id (a definition may also declare its own)
        - id: hello-nightly
          definition: hello
          spec: {cron: "0 2 * * *", timezone: Europe/Paris}   # or {interval: 10m}
          input: {}
          overlap: skip          # and catchup_window, pause_on_failure, paused
      webhooks:                  # created once per id; its secret is printed once (needs DUCTOR_SECRET_KEY)
        - {id: shop, event: order.placed, scheme: standard}   # or scheme: github

Every definition is compiled before anything is written, and everything is
written in one transaction: a seed with a problem changes nothing. Seeding
again creates only what is missing; existing tenants are left as they are.
`

type seedFile struct {
	Tenants []seedTenant `yaml:"tenants"`
}

type seedTenant struct {
	Slug        string           `yaml:"slug"`
	Name        string           `yaml:"name"`
	Tier        string           `yaml:"tier"`
	Definitions []seedDefinition `yaml:"definitions"`
	APIKeys     []seedKey        `yaml:"api_keys"`
	Members     []seedMember     `yaml:"members"`
	Schedules   []seedSchedule   `yaml:"schedules"`
	Webhooks    []seedWebhook    `yaml:"webhooks"`
}

type seedDefinition struct {
	File     string `yaml:"file"`
	Document any    `yaml:"document"`
}

type seedKey struct {
	Name   string   `yaml:"name"`
	Scopes []string `yaml:"scopes"`
}

type seedMember struct {
	Email string `yaml:"email"`
	Role  string `yaml:"role"`
}

// runSeed handles `seed -f FILE`.
func runSeed(ctx context.Context, env Env, args []string) error {
	fs := newFlags("seed -f FILE", env)
	fs.about = seedHelp
	file := fs.String("f", "", "the seed file (YAML or JSON)")
	cfg, _, err := loadConfig(fs, args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if *file == "" {
		return usagef("want `%s` (`ductor seed -h` describes the file)", seedUsage)
	}
	var box *secrets.Box
	if cfg.SecretKey != "" {
		if box, err = secrets.NewBox(cfg.SecretKey); err != nil {
			return err
		}
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		tiers, err := s.TierList(ctx)
		if err != nil {
			return err
		}
		plan, err := planSeed(*file, tiers)
		if err != nil {
			return err
		}
		plan.box = box
		var out []string
		err = s.InTx(ctx, func(tx *store.Store) error {
			out, err = plan.apply(ctx, tx)
			return err
		})
		if err != nil {
			return err
		}
		for _, line := range out {
			fmt.Fprintln(env.Stdout, line)
		}
		return nil
	})
}

func readSeed(file string) (seedFile, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return seedFile{}, err
	}
	var sf seedFile
	if err := yaml.UnmarshalWithOptions(raw, &sf, yaml.Strict()); err != nil {
		return seedFile{}, fmt.Errorf("seed file %s: %s", file, firstLineOf(err.Error()))
	}
	return sf, nil
}

func firstLineOf(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

// seedPlan is a checked seed file: tiers, scopes and roles parsed and
// every definition compiled.
type seedPlan struct {
	tenants []plannedTenant
	box     *secrets.Box // seals webhook secrets; nil without DUCTOR_SECRET_KEY
}

type plannedTenant struct {
	seedTenant
	tier      store.Tier
	defs      []plannedDefinition
	scopes    [][]auth.Scope
	roles     []auth.Role
	schedules []store.Schedule
}

type plannedDefinition struct {
	compiled *definition.Compiled
	source   []byte
	format   definition.Format
}

// planSeed reads and checks the whole seed file, reporting every problem.
// tiers are the database's, which a tenant's tier must be one of.
func planSeed(file string, tiers []store.TierInfo) (seedPlan, error) {
	sf, err := readSeed(file)
	if err != nil {
		return seedPlan{}, err
	}
	var plan seedPlan
	var errs []error
	for i, t := range sf.Tenants {
		pt, tErrs := planTenant(filepath.Dir(file), fmt.Sprintf("tenants[%d]", i), t, tiers)
		plan.tenants = append(plan.tenants, pt)
		errs = append(errs, tErrs...)
	}
	if len(errs) > 0 {
		return seedPlan{}, fmt.Errorf("seed file %s has problems, nothing was written:\n%w", file, errors.Join(errs...))
	}
	return plan, nil
}

func planTenant(dir, at string, t seedTenant, tiers []store.TierInfo) (plannedTenant, []error) {
	pt := plannedTenant{seedTenant: t}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(at+"."+format, args...)) }
	if t.Slug == "" {
		fail("slug: required")
	}
	pt.tier = store.Tier(orDefault(t.Tier, string(store.TierStandard)))
	if !slices.ContainsFunc(tiers, func(ti store.TierInfo) bool { return ti.Name == pt.tier }) {
		names := make([]string, len(tiers))
		for i, ti := range tiers {
			names[i] = string(ti.Name)
		}
		fail("tier: unknown tier %q (known: %s)", pt.tier, strings.Join(names, ", "))
	}
	for i, d := range t.Definitions {
		pd, err := planDefinition(dir, d)
		for _, msg := range problemLines(err) {
			fail("definitions[%d]: %s", i, msg)
		}
		pt.defs = append(pt.defs, pd)
	}
	for i, k := range t.APIKeys {
		sc, err := auth.ParseScopes(k.Scopes)
		if err != nil || k.Name == "" {
			fail("api_keys[%d]: a name and known scopes are required: %v", i, err)
		}
		pt.scopes = append(pt.scopes, sc)
	}
	for i, m := range t.Members {
		r, err := auth.ParseRole(m.Role)
		if err != nil || m.Email == "" {
			fail("members[%d]: an email and a known role are required: %v", i, err)
		}
		pt.roles = append(pt.roles, r)
	}
	for i, sc := range t.Schedules {
		planned, err := planSchedule(sc)
		if err != nil {
			fail("schedules[%d]: %v", i, err)
		}
		pt.schedules = append(pt.schedules, planned)
	}
	for i, w := range t.Webhooks {
		if err := planWebhook(w); err != nil {
			fail("webhooks[%d]: %v", i, err)
		}
	}
	return pt, errs
}

// problemLines lists an error's definition problems one per line, or the
// error itself.
func problemLines(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	for _, p := range problemsOf(err) {
		out = append(out, p.String())
	}
	if len(out) == 0 {
		out = append(out, err.Error())
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// planDefinition compiles a file's or an inline definition.
func planDefinition(dir string, d seedDefinition) (plannedDefinition, error) {
	var pd plannedDefinition
	switch {
	case (d.File == "") == (d.Document == nil):
		return pd, errors.New("give exactly one of file and document")
	case d.File != "":
		path := d.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		docs, err := readApplyDocs(path)
		if err == nil && len(docs) != 1 {
			err = errors.New("a seed's definition file holds one document")
		}
		if err != nil {
			return pd, fmt.Errorf("%s: %w", d.File, err)
		}
		doc := docs[0]
		pd.source, pd.format = doc.body, definition.FormatJSON
		if doc.contentType == "application/yaml" {
			pd.format = definition.FormatYAML
		}
	default:
		raw, err := json.Marshal(d.Document)
		if err != nil {
			return pd, fmt.Errorf("document: %w", err)
		}
		pd.source, pd.format = raw, definition.FormatJSON
	}
	compiled, err := definition.Compile(pd.source, pd.format)
	pd.compiled = compiled
	return pd, err
}
