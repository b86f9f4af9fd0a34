package pgcluster

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// binaryNames are the PostgreSQL server programs a cluster needs.
var binaryNames = []string{"initdb", "pg_ctl", "postgres", "pg_basebackup"}

// debianRoot is where Debian and Ubuntu install PostgreSQL server
// binaries, one bin directory per major version.
const debianRoot = "/usr/lib/postgresql"

// binaries holds the paths of the PostgreSQL server programs.
type binaries struct {
	initdb       string
	pgCtl        string
	pgBasebackup string
}

// findBinaries looks for initdb, pg_ctl, postgres and pg_basebackup on PATH first, then
// in the highest version under root/*/bin. lookPath is exec.LookPath
// outside tests.
func findBinaries(lookPath func(string) (string, error), root string) (binaries, error) {
	found, missing := lookAll(lookPath)
	if len(missing) == 0 {
		return found, nil
	}
	for _, dir := range versionDirs(root) {
		b, miss := lookAll(func(name string) (string, error) {
			return exec.LookPath(filepath.Join(dir, name))
		})
		if len(miss) == 0 {
			return b, nil
		}
	}
	return binaries{}, fmt.Errorf("pgcluster: PostgreSQL server programs not found (%s missing from PATH and from %s/*/bin): install PostgreSQL, e.g. `apt-get install postgresql`", strings.Join(missing, ", "), root)
}

func lookAll(lookPath func(string) (string, error)) (binaries, []string) {
	paths := map[string]string{}
	var missing []string
	for _, name := range binaryNames {
		p, err := lookPath(name)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		paths[name] = p
	}
	return binaries{initdb: paths["initdb"], pgCtl: paths["pg_ctl"], pgBasebackup: paths["pg_basebackup"]}, missing
}

// versionDirs lists root/*/bin, highest version first.
func versionDirs(root string) []string {
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "bin"))
	slices.SortFunc(dirs, func(a, b string) int {
		return slices.Compare(versionOf(b), versionOf(a))
	})
	return dirs
}

// versionOf parses "/usr/lib/postgresql/9.6/bin" as [9 6].
func versionOf(binDir string) []int {
	var v []int
	for _, part := range strings.Split(filepath.Base(filepath.Dir(binDir)), ".") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil
		}
		v = append(v, n)
	}
	return v
}
