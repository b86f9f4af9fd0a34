package sdk_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A program that imports the SDK takes on nothing else: in a fresh module
// requiring only the SDK (this tree's, by a replace), `go list -m all`
// lists the two modules, none of the server's (River, pgx, cel-go…), and
// the SDK's go line is low enough not to raise the program's.
func TestAModuleImportingTheSDKTakesOnNothingElse(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go command")
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/client\n\ngo 1.22\n\n"+
		"require github.com/ductor/ductor/sdk v0.0.0\n\nreplace github.com/ductor/ductor/sdk => "+here+"\n")
	write(t, filepath.Join(dir, "main.go"), "package main\n\nimport \"github.com/ductor/ductor/sdk\"\n\n"+
		"func main() { _, _ = sdk.New(\"\", \"dk_x\") }\n")
	modules := strings.Fields(goCommand(t, dir, "list", "-m", "-f", "{{.Path}}@{{.GoVersion}}", "all"))
	for _, m := range modules {
		for _, banned := range []string{"github.com/riverqueue/", "github.com/jackc/pgx", "github.com/google/cel-go", "github.com/labstack/echo", "github.com/chromedp/"} {
			if strings.HasPrefix(m, banned) {
				t.Errorf("a module importing the SDK takes on %s", m)
			}
		}
	}
	want := []string{"example.com/client@1.22", "github.com/ductor/ductor/sdk@1.22"}
	if strings.Join(modules, " ") != strings.Join(want, " ") {
		t.Errorf("go list -m all = %v, want only %v: the SDK needs nothing but the standard library", modules, want)
	}
	goCommand(t, dir, "build", "./...")
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goCommand runs the go command in dir, offline: whatever it needs is in
// the module cache or it fails.
func goCommand(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
