package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/auth"
)

// nodeCodeTrees hold the code that fails nodes: the engine, the step
// executor and built-ins, the shell (sweeps, children), the runs service,
// the server (bridge workers' results) and the River adapters. Package
// expr's codes are its own (compile problems); those that reach a node
// are the engine's.
var nodeCodeTrees = []string{"../app", "../workers"}

var notNodeCodes = []string{"../app/expr", "../app/apperr", "../app/checker"}

// Every API error code of package apperr is a row of errors.md's API
// table, and every node error code Ductor's code can produce is a row of
// its step table: the codes are read from the source, so a new one fails
// this test until it is documented.
func TestErrorsPageListsEveryCode(t *testing.T) {
	t.Parallel()
	page := sections(t, "errors.md")
	api := tableCodes(page["API error codes"])
	for _, code := range apperrCodes(t) {
		if !api[code] {
			t.Errorf("apperr code %q has no row in errors.md's API error codes", code)
		}
	}
	steps := tableRows(page["Step error codes"])
	codes := nodeCodes(t)
	for _, want := range []string{"task_failed", "no_worker", "worker_lost", "workflow_not_found", "depth_exceeded", "end_run"} {
		if !slices.Contains(codes, want) {
			t.Fatalf("found node codes %v, missing %q: the source scan is broken", codes, want)
		}
	}
	graph, err := os.ReadFile("graph.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range codes {
		row, ok := steps[code]
		switch {
		case !ok:
			t.Errorf("node error code %q has no row in errors.md's step error codes", code)
		case !strings.Contains(row, "Reserved") && !strings.Contains(string(graph), "`"+code+"`"):
			t.Errorf("node error code %q is missing from graph.md's list of codes", code)
		}
	}
}

// The scopes table of api-keys.md lists exactly the scopes the server
// knows, in auth.AllScopes's order.
func TestScopesTableMatchesServer(t *testing.T) {
	t.Parallel()
	rows := tableColumn(sections(t, "api-keys.md")["Scopes"])
	var want []string
	for _, s := range auth.AllScopes {
		want = append(want, string(s))
	}
	if !slices.Equal(rows, want) {
		t.Errorf("api-keys.md's scopes table lists\n  %v\nthe server knows\n  %v", rows, want)
	}
}

// sections splits a Markdown file by its level-2 headings.
func sections(t *testing.T, file string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	name := ""
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			name = strings.TrimSpace(h)
			continue
		}
		out[name] += line
	}
	return out
}

var firstCell = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")

// tableColumn lists the code-formatted first cells of a section's table
// rows, in order.
func tableColumn(section string) []string {
	var out []string
	for _, m := range firstCell.FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}

// tableRows maps the code-formatted first cells of a section's table
// rows to their lines.
func tableRows(section string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if m := firstCell.FindStringSubmatch(line); m != nil {
			out[m[1]] = line
		}
	}
	return out
}

func tableCodes(section string) map[string]bool {
	out := map[string]bool{}
	for _, c := range tableColumn(section) {
		out[c] = true
	}
	return out
}

// apperrCodes reads the constants of type Code in package apperr.
func apperrCodes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range parseDir(t, "../app/apperr") {
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Code" {
					out = append(out, stringValues(vs)...)
				}
			}
			return true
		})
	}
	if len(out) < 10 {
		t.Fatalf("found only %d apperr codes: %v", len(out), out)
	}
	return out
}

// nodeCodes reads, from the non-test files under nodeCodeTrees, the
// string constants named Code…, the literals given as the Code field of
// a composite literal (engine.Error{Code: "worker_lost"}), and the
// literals passed to childFailed.
func nodeCodes(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range parseTrees(t, nodeCodeTrees, notNodeCodes) {
		ast.Inspect(f, func(n ast.Node) bool {
			collectCodes(n, seen)
			return true
		})
	}
	var out []string
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

func collectCodes(n ast.Node, seen map[string]bool) {
	switch n := n.(type) {
	case *ast.ValueSpec:
		for i, name := range n.Names {
			if strings.HasPrefix(name.Name, "Code") && i < len(n.Values) {
				if s, ok := literal(n.Values[i]); ok {
					seen[s] = true
				}
			}
		}
	case *ast.CompositeLit:
		if typeName(n.Type) == "Warn" {
			return // a run's warning, not an error: errors.md lists them apart
		}
		for _, e := range n.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if id, ok := kv.Key.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			if s, ok := literal(kv.Value); ok && s != "" {
				seen[s] = true
			}
		}
	case *ast.CallExpr:
		if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "childFailed" {
			for _, a := range n.Args {
				if s, ok := literal(a); ok {
					seen[s] = true
				}
			}
		}
	}
}

func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.UnaryExpr:
		return typeName(e.X)
	}
	return ""
}

func stringValues(vs *ast.ValueSpec) []string {
	var out []string
	for _, v := range vs.Values {
		if s, ok := literal(v); ok {
			out = append(out, s)
		}
	}
	return out
}

func literal(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// parseDir parses a package's non-test Go files.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var out []*ast.File
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// parseTrees parses the non-test Go files under roots, but for those
// under skip.
func parseTrees(t *testing.T, roots, skip []string) []*ast.File {
	t.Helper()
	var out []*ast.File
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if slices.Contains(skip, path) {
				return filepath.SkipDir
			}
			if m, _ := filepath.Glob(filepath.Join(path, "*.go")); len(m) > 0 {
				out = append(out, parseDir(t, path)...)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
