package docs

import (
	"bufio"
	"flag"
	"maps"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/ductor/ductor/app/config"
)

// deployCompose is deploy/compose.yaml as far as these tests read it.
type deployCompose struct {
	Ductor struct {
		EnvFile string `yaml:"env_file"`
	} `yaml:"x-ductor"`
	Services map[string]struct {
		Environment map[string]string `yaml:"environment"`
	} `yaml:"services"`
}

// The Compose file's ductor services read deploy/ductor.env, whose
// DUCTOR_SECRET_KEY ductor accepts and says it is an example; and the
// api service's commented dashboard block, uncommented (with the roles
// changed as it says), is a configuration `ductor serve` accepts for the
// web role.
func TestComposeSecretKeyAndOIDCBlock(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f deployCompose
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if f.Ductor.EnvFile != "ductor.env" {
		t.Fatalf("x-ductor's env_file = %q, want ductor.env", f.Ductor.EnvFile)
	}
	envFile := readEnvFile(t, "../deploy/ductor.env")
	if key := envFile["DUCTOR_SECRET_KEY"]; !strings.Contains(key, "EXAMPLE") {
		t.Errorf("deploy/ductor.env's DUCTOR_SECRET_KEY %q is not marked as an example", key)
	}

	api := maps.Clone(f.Services["api"].Environment)
	maps.Copy(api, envFile)
	maps.Copy(api, commentedBlock(t, string(raw)))
	api["DUCTOR_ROLES"] = "web,api"
	cfg, _, err := config.Load(flag.NewFlagSet("serve", flag.ContinueOnError), nil, func(k string) string { return api[k] }, ":8080")
	if err != nil {
		t.Fatalf("ductor refuses the api service's settings with the dashboard block: %v", err)
	}
	if err := cfg.RequireForServe(); err != nil {
		t.Errorf("serve with the web role refuses the dashboard block: %v", err)
	}
}

// readEnvFile reads KEY=VALUE lines, skipping comments.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=VALUE", path, line)
		}
		out[k] = v
	}
	return out
}

var commentedSetting = regexp.MustCompile(`^\s+# ([A-Z][A-Z_]+): (\S+)$`)

// commentedBlock reads the commented settings of the compose file
// (`      # NAME: value`).
func commentedBlock(t *testing.T, compose string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(compose))
	for sc.Scan() {
		if m := commentedSetting.FindStringSubmatch(sc.Text()); m != nil {
			out[m[1]] = m[2]
		}
	}
	for _, want := range []string{"OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "DUCTOR_BASE_URL"} {
		if out[want] == "" {
			t.Errorf("compose.yaml has no commented %s", want)
		}
	}
	return out
}
