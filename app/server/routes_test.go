package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// registrations are the methods of echo.Echo and echo.Group that add a
// route, with how many arguments such a call has at least (Add and Match
// take the method or methods before the path).
var registrations = map[string]int{
	"GET": 2, "POST": 2, "PUT": 2, "PATCH": 2, "DELETE": 2, "HEAD": 2, "OPTIONS": 2, "CONNECT": 2, "TRACE": 2,
	"Any": 2, "RouteNotFound": 2, "Static": 2, "File": 2, "Match": 3, "Add": 3,
}

// routeRegistrations lists the route registrations in the Go files under
// dir (tests aside), as "file:line .METHOD(", by the file they are in.
func routeRegistrations(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if min, known := registrations[sel.Sel.Name]; known && len(call.Args) >= min {
				pos := fset.Position(call.Pos())
				out[path] = append(out[path], pos.String()+" ."+sel.Sel.Name+"(")
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every route is registered in a file named routes*.go, so the routes
// files are the whole map of what the server serves.
func TestRoutesAreRegisteredOnlyInRoutesFiles(t *testing.T) {
	t.Parallel()
	found := routeRegistrations(t, ".")
	n := 0
	for path, calls := range found {
		n += len(calls)
		if !strings.HasPrefix(filepath.Base(path), "routes") {
			for _, c := range calls {
				t.Errorf("%s registers a route outside a routes*.go file: move it to one", c)
			}
		}
	}
	if n < 50 {
		t.Fatalf("found only %d route registrations: the scan misses them", n)
	}
}
