package definition

import (
	"bytes"

	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// committedSchema is where the repository keeps DocumentSchema for
// editors that read a file.
const committedSchema = "../../docs/schema/definition.json"

func TestCommittedSchemaIsCurrent(t *testing.T) {
	if *update {
		if err := os.WriteFile(committedSchema, DocumentSchema(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(committedSchema)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, DocumentSchema()) {
		t.Fatalf("%s is stale: run `make generate` (go test ./app/definition -run TestCommittedSchemaIsCurrent -update)", committedSchema)
	}
}

func TestSchemaCompiles(t *testing.T) {
	t.Parallel()
	if _, err := compiledDocumentSchema(); err != nil {
		t.Fatal(err)
	}
}

// Every field of every table is in the schema, described.
func TestSchemaDescribesEveryField(t *testing.T) {
	t.Parallel()
	s := buildSchema()
	defs := s["$defs"].(schema)
	check := func(where string, props schema, fs []Field) {
		for _, f := range fs {
			p, ok := props[f.Name].(schema)
			if !ok {
				t.Errorf("%s: no schema for %s", where, f.Name)
				continue
			}
			if f.Doc == "" || p["description"] == nil && p["$ref"] == nil {
				t.Errorf("%s.%s has no description", where, f.Name)
			}
		}
	}
	check("document", s["properties"].(schema), DocumentFields)
	check("step", defs["step"].(schema)["properties"].(schema), StepFields)
	for _, spec := range WithSpecs {
		check(string(spec.Type), defs[withDef(spec.Type)].(schema)["properties"].(schema), spec.Fields)
	}
}

// The schema refuses what the compiler refuses for sure: unknown
// fields, unknown types, a missing required setting.
func TestSchemaRefuses(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"unknown field":    "key: k\nsteps: [{ref: a, type: transform, with: {expr: '1'}, colour: red}]\n",
		"alias type":       "key: k\nsteps: [{ref: a, type: sleep, with: {duration: 1s}}]\n",
		"missing handler":  "key: k\nsteps: [{ref: a, type: task, with: {}}]\n",
		"unknown with":     "key: k\nsteps: [{ref: a, type: wait, with: {duration: 1s, secs: 2}}]\n",
		"two wait kinds":   "key: k\nsteps: [{ref: a, type: wait, with: {duration: 1s, cron: '* * * * *'}}]\n",
		"retry on wait":    "key: k\nsteps: [{ref: a, type: wait, with: {duration: 1s}, retry: {max_attempts: 2}}]\n",
		"bad duration":     "key: k\nsteps: [{ref: a, type: wait, with: {duration: soon}}]\n",
		"inline workflow":  "key: k\nsteps: [{ref: a, type: scatter, with: {items_expr: '[1]', workflow: w, do: {type: transform, with: {expr: item}}}}]\n",
		"no steps":         "key: k\n",
		"bad key":          "key: Not A Key\nsteps: [{ref: a, type: transform, with: {expr: '1'}}]\n",
		"edge with both":   "key: k\nsteps: [{ref: a, type: transform, with: {expr: '1'}}]\nedges: [{from: a, to: a, choice: []}]\n",
		"template on wait": "key: k\nsteps: [{ref: a, type: scatter, with: {items_expr: '[1]', do: {type: wait, with: {duration: 1s}}}}]\n",
	} {
		if err := ValidateSchema([]byte(doc), FormatYAML); err == nil {
			t.Errorf("%s: the schema accepts\n%s", name, doc)
		}
	}
}

// TestSchemaAcceptsEveryDefinitionInTheRepository: every definition the
// compiler accepts, the schema accepts too, whether it lives in a test's
// string literal or a testdata file. (The documentation's examples are
// checked by the docs package's test.)
func TestSchemaAcceptsEveryDefinitionInTheRepository(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, c := range repositoryDefinitions(t) {
		if _, err := Compile([]byte(c.doc), FormatAuto); err != nil {
			continue
		}
		checked++
		if err := ValidateSchema([]byte(c.doc), FormatAuto); err != nil {
			t.Errorf("%s: the compiler accepts a definition the schema refuses: %v\n%s", c.where, err, c.doc)
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d definitions: is the search broken?", checked)
	}
	t.Logf("%d definitions checked", checked)
}

type found struct{ where, doc string }

// repositoryDefinitions lists the string literals of the repository's Go
// files that look like definition documents, and its testdata documents.
func repositoryDefinitions(t *testing.T) []found {
	t.Helper()
	var out []found
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "../.." || d.Name() == "bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		switch {
		case strings.HasSuffix(path, ".go"):
			out = append(out, goLiterals(t, path)...)
		case strings.Contains(path, "testdata") && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".json")):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out = append(out, found{path, string(b)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func goLiterals(t *testing.T, path string) []found {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []found
	ast.Inspect(f, func(n ast.Node) bool {
		e, ok := n.(ast.Expr)
		if !ok {
			return true
		}
		s, isString := stringConstant(e)
		if isString && strings.Contains(s, "steps") && strings.Contains(s, "key") {
			out = append(out, found{path, s})
			return false
		}
		return true
	})
	return out
}

// stringConstant reads a string literal, or a sum of them.
func stringConstant(e ast.Expr) (string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(x.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", false
		}
		l, ok := stringConstant(x.X)
		r, ok2 := stringConstant(x.Y)
		return l + r, ok && ok2
	case *ast.ParenExpr:
		return stringConstant(x.X)
	}
	return "", false
}
