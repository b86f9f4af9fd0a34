package workers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxMethods bounds the methods of one hand-written type: a type with
// more is doing the work of several. Only app/store's facade, one method
// per statement, and the pure engine may have more.
const maxMethods = 40

var manyMethodsAllowed = map[string]bool{"app/store.Store": true}

// No hand-written type of the module has more than maxMethods methods,
// counting those it declares in its package (generated code aside).
func TestNoTypeHasMoreThanFortyMethods(t *testing.T) {
	root := filepath.Join("..")
	counts := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if (rel != "." && strings.HasPrefix(d.Name(), ".")) || d.Name() == "node_modules" || rel == "queries" || rel == "bin" || rel == "app/engine" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "_templ.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			typ := fd.Recv.List[0].Type
			if st, ok := typ.(*ast.StarExpr); ok {
				typ = st.X
			}
			if ix, ok := typ.(*ast.IndexExpr); ok {
				typ = ix.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				counts[filepath.ToSlash(filepath.Dir(rel))+"."+id.Name]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if counts["workers.StepWorker"] == 0 {
		t.Fatal("the scan found no method of workers.StepWorker: it did not read the module")
	}
	for typ, n := range counts {
		if n > maxMethods && !manyMethodsAllowed[typ] {
			t.Errorf("%s has %d methods, more than %d: split it by what its parts do", typ, n, maxMethods)
		}
	}
}
