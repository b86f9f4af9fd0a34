package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The core packages, by their folders under app/.
var core = []string{"engine", "definition", "expr", "schedule", "flowcontrol"}

// The core packages stay pure: no database driver, web framework, queue,
// store or generated queries among their transitive imports.
func TestCoreImportsStayPure(t *testing.T) {
	t.Parallel()
	forbidden := []string{
		"github.com/jackc/pgx",
		"github.com/labstack/echo",
		"github.com/riverqueue/river",
		"github.com/ductor/ductor/queries",
		"github.com/ductor/ductor/app/store",
		"database/sql",
		"net/http",
	}
	for _, dir := range core {
		pkg := "github.com/ductor/ductor/app/" + dir
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

// The core packages read no clock: their callers pass the time in (the
// database's, or the tick's).
func TestCoreReadsNoClock(t *testing.T) {
	t.Parallel()
	for _, dir := range core {
		files, _ := filepath.Glob(filepath.Join("..", dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, clock := range []string{"time.Now(", "time.Since(", "time.Until(", "time.Sleep(", "time.After(", "time.Tick(", "time.NewTimer(", "time.NewTicker("} {
				if strings.Contains(string(src), clock) {
					t.Errorf("%s reads the clock: %s", f, clock)
				}
			}
		}
	}
}
