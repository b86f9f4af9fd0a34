package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/config"
)

// `ductor secret` sets a value from a file or standard input, lists the
// metadata and deletes; no command prints a value.
func TestSecretVerbs(t *testing.T) {
	t.Parallel()
	b := startDev(t)
	file := filepath.Join(b.dir, "token.txt")
	if err := os.WriteFile(file, []byte("from-a-file-value"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := b.ductor(t, "secret", "set", "API_TOKEN", "--from-file", file, "--description", "the API"); !strings.Contains(out, `"version": 1`) || strings.Contains(out, "from-a-file-value") {
		t.Fatalf("set printed %s", out)
	}
	var out, errOut bytes.Buffer
	env := Env{Getenv: func(k string) string { return b.vars[k] }, Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader("from-stdin-value")}
	if err := Run(context.Background(), []string{"secret", "set", "API_TOKEN", "--from-stdin"}, env); err != nil || !strings.Contains(out.String(), `"version": 2`) {
		t.Fatalf("set --from-stdin: %v %s %s", err, out.String(), errOut.String())
	}
	list := b.json(t, "secret", "list")
	secrets, _ := list["secrets"].([]any)
	if len(secrets) != 1 || secrets[0].(map[string]any)["description"] != "the API" {
		t.Fatalf("list = %v", list)
	}
	if table := b.ductor(t, "secret", "list"); !strings.Contains(table, "API_TOKEN") || strings.Contains(table, "value") {
		t.Errorf("table = %s", table)
	}
	if _, _, err := b.try("secret", "set", "API_TOKEN"); !errors.Is(err, ErrUsage) {
		t.Errorf("set without a source: %v", err)
	}
	if _, _, err := b.try("secret", "set", "API_TOKEN", "--from-file", file, "--from-stdin"); !errors.Is(err, ErrUsage) {
		t.Errorf("set with two sources: %v", err)
	}
	b.ductor(t, "secret", "delete", "API_TOKEN")
	if _, _, err := b.try("secret", "delete", "API_TOKEN"); err == nil {
		t.Errorf("a second delete succeeded")
	}
	var cfgErr *config.Error
	if _, _, err := b.try("secrets", "rekey"); !errors.As(err, &cfgErr) || cfgErr.Setting != "DUCTOR_SECRET_KEY" {
		t.Errorf("rekey without a key: %v", err)
	}
}
