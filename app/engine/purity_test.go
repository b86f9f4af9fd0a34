package engine

import (
	"os/exec"
	"strings"
	"testing"
)

// The core packages stay pure: no database driver, web framework, queue
// or generated queries among their transitive imports.
func TestCoreImportsStayPure(t *testing.T) {
	t.Parallel()
	forbidden := []string{
		"github.com/jackc/pgx",
		"github.com/labstack/echo",
		"github.com/riverqueue/river",
		"github.com/ductor/ductor/queries",
		"database/sql",
		"net/http",
	}
	for _, pkg := range []string{
		"github.com/ductor/ductor/app/engine",
		"github.com/ductor/ductor/app/definition",
		"github.com/ductor/ductor/app/expr",
		"github.com/ductor/ductor/app/schedule",
		"github.com/ductor/ductor/app/flowcontrol",
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
