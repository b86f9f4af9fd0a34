package flowcontrol

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Flow control's core stays pure: no database driver, web framework,
// queue or generated queries among its transitive imports, and no clock
// read in its code (the shell passes the database's now).
func TestFlowControlStaysPure(t *testing.T) {
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
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("flowcontrol imports %s", dep)
			}
		}
	}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, clock := range []string{"time.Now(", "time.Since(", "time.Until(", "time.Sleep(", "time.After("} {
			if strings.Contains(string(src), clock) {
				t.Errorf("%s reads the clock: %s", f, clock)
			}
		}
	}
}
