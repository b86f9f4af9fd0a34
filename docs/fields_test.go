package docs

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/definition"
)

var update = flag.Bool("update", false, "rewrite the field tables rendered from the compiler's")

// fieldTables are the tables the reference renders between
// <!-- fields: NAME --> and <!-- /fields -->.
func fieldTables() map[string][]definition.Field {
	out := map[string][]definition.Field{
		"document": definition.DocumentFields,
		"limits":   definition.LimitsFields,
		"step":     definition.StepFields,
		"retry":    definition.RetryFields,
		"edge":     definition.EdgeFields,
		"choice":   definition.ChoiceFields,
	}
	for prefix, fs := range map[string][]definition.Field{"document": definition.DocumentFields, "step": definition.StepFields} {
		for _, f := range fs {
			if f.Kind == definition.KindObject && len(f.Fields) > 0 || f.Kind == definition.KindList && f.Name == "concurrency" {
				out[prefix+"."+f.Name] = f.Fields
			}
		}
	}
	for _, s := range definition.WithSpecs {
		out[string(s.Type)] = s.Fields
		for _, f := range s.Fields {
			if len(f.Fields) > 0 {
				out[string(s.Type)+"."+f.Name] = f.Fields
			}
		}
	}
	return out
}

var fieldsSection = regexp.MustCompile(`(?s)(<!-- fields: ([a-z_.]+) -->\n).*?(<!-- /fields -->)`)

// TestFieldTablesAreCurrent: the reference's field tables are the
// compiler's, and every step type's table is in docs/steps.md. Run with
// -update (or `make generate`) to rewrite them.
func TestFieldTablesAreCurrent(t *testing.T) {
	tables := fieldTables()
	files := markdownFiles(t)
	seen := map[string]bool{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got := fieldsSection.ReplaceAllFunc(src, func(m []byte) []byte {
			parts := fieldsSection.FindSubmatch(m)
			name := string(parts[2])
			fs, ok := tables[name]
			if !ok {
				t.Errorf("%s: no field table %q", file, name)
				return m
			}
			seen[name] = true
			return []byte(string(parts[1]) + renderFields(fs) + string(parts[3]))
		})
		if bytes.Equal(got, src) {
			continue
		}
		if *update {
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: field tables are stale: run `make generate`", file)
	}
	for _, s := range definition.WithSpecs {
		if !seen[string(s.Type)] {
			t.Errorf("no <!-- fields: %s --> table in the reference", s.Type)
		}
	}
}

func renderFields(fs []definition.Field) string {
	var b strings.Builder
	b.WriteString("| field | type | default | meaning |\n|---|---|---|---|\n")
	for _, f := range fs {
		k := kindOf(f)
		if f.Group != "" {
			k += groupOf(fs, f.Group)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, cell(k), cell(defaultOf(f)), cell(f.Doc))
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// kindNames say a kind in words.
var kindNames = map[definition.FieldKind]string{
	definition.KindHeaders: "object of strings",
	definition.KindStatus:  "integer or list of integers",
	definition.KindStrings: "list of strings",
	definition.KindSchema:  "JSON Schema",
	definition.KindTime:    "RFC 3339 time",
	definition.KindList:    "list of objects",
	definition.KindCron:    "cron (5 fields)",
	definition.KindAny:     "any JSON",
	definition.KindLimit:   "integer or expression (int)",
}

func kindOf(f definition.Field) string {
	k := string(f.Kind)
	if n, ok := kindNames[f.Kind]; ok {
		k = n
	}
	switch f.Kind {
	case definition.KindExpr:
		if e := f.Expr.String(); e != "any" {
			k += " (" + e + ")"
		}
	case definition.KindEnum, definition.KindEdge:
		vals := make([]string, len(f.Enum))
		for i, v := range f.Enum {
			vals[i] = "`" + v + "`"
		}
		k = strings.Join(vals, " | ")
	case definition.KindInteger, definition.KindNumber:
		if f.Max > 0 {
			k += fmt.Sprintf(" %d–%d", f.Min, f.Max)
		}
	}
	if f.Required {
		k += ", **required**"
	}
	if f.Mode != "" {
		k += fmt.Sprintf(" (%s mode)", f.Mode)
	}
	if len(f.Types) > 0 {
		names := make([]string, len(f.Types))
		for i, t := range f.Types {
			names[i] = string(t)
		}
		k += " (" + strings.Join(names, ", ") + ")"
	}
	return k
}

// groupOf says which exclusive group a field is in.
func groupOf(fs []definition.Field, group string) string {
	var names []string
	for _, f := range fs {
		if f.Group == group {
			names = append(names, "`"+f.Name+"`")
		}
	}
	how := "at most one of"
	for _, s := range definition.WithSpecs {
		if s.Groups[group] {
			how = "exactly one of"
		}
	}
	return " (" + how + " " + strings.Join(names, ", ") + ")"
}

func defaultOf(f definition.Field) string {
	if f.DefaultDoc != "" {
		return f.DefaultDoc
	}
	switch v := f.Default.(type) {
	case nil:
		return ""
	case string:
		if v == "" {
			return `""`
		}
		return "`" + v + "`"
	case []any:
		return "`[]`"
	}
	if f.Kind == definition.KindDuration {
		return "none"
	}
	return fmt.Sprintf("`%v`", f.Default)
}
