package e2e

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/ductor/ductor/app/cli"
	"github.com/ductor/ductor/app/config"
)

// composeFile is deploy/compose.yaml as far as the test reads it.
type composeFile struct {
	Services map[string]struct {
		Image       string         `yaml:"image"`
		Build       map[string]any `yaml:"build"`
		Command     []string       `yaml:"command"`
		Environment map[string]string
		Ports       []string
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Healthcheck map[string]any `yaml:"healthcheck"`
	} `yaml:"services"`
}

// TestComposeFile checks deploy/compose.yaml's structure, since no Docker
// engine runs here: Postgres, the migrations once it is healthy, and two
// ductor replicas with split roles, started once migrated, each with a
// command and settings the ductor command accepts. Where `docker compose`
// exists, it validates the file too.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	pg, ok := f.Services["postgres"]
	if !ok || !strings.HasPrefix(pg.Image, "postgres:") || pg.Healthcheck == nil {
		t.Fatalf("no postgres service with a healthcheck: %+v", pg)
	}
	migrate := f.Services["migrate"]
	if !slices.Equal(migrate.Command, []string{"migrate"}) || migrate.DependsOn["postgres"].Condition != "service_healthy" {
		t.Errorf("migrate = %+v, want `ductor migrate` once postgres is healthy", migrate)
	}
	var roles []string
	for name, s := range f.Services {
		if name == "postgres" {
			continue
		}
		if s.Build["context"] != ".." || s.Build["dockerfile"] != "Dockerfile" {
			t.Errorf("%s does not build the repository's Dockerfile: %v", name, s.Build)
		}
		if !strings.Contains(s.Environment["DATABASE_URL"], "@postgres:5432/") {
			t.Errorf("%s: DATABASE_URL %q does not name the postgres service", name, s.Environment["DATABASE_URL"])
		}
		checkSettings(t, name, s.Environment, s.Command)
		if name == "migrate" {
			continue
		}
		if !slices.Equal(s.Command, []string{"serve"}) || s.DependsOn["migrate"].Condition != "service_completed_successfully" {
			t.Errorf("%s = %+v, want serve once migrated", name, s)
		}
		roles = append(roles, strings.Split(s.Environment["DUCTOR_ROLES"], ",")...)
	}
	slices.Sort(roles)
	if !slices.Equal(roles, []string{"api", "coordinator", "steps"}) {
		t.Errorf("the replicas' roles are %v, want api, coordinator and steps split between them", roles)
	}
	if ports := f.Services["api"].Ports; len(ports) != 1 || ports[0] != "8080:8080" {
		t.Errorf("api publishes %v, want 8080:8080", ports)
	}
	if _, err := exec.LookPath("docker"); err == nil {
		if out, err := exec.Command("docker", "compose", "-f", "../deploy/compose.yaml", "config", "-q").CombinedOutput(); err == nil {
			t.Log("docker compose config: valid")
		} else if !bytes.Contains(out, []byte("unknown")) {
			t.Errorf("docker compose config: %v\n%s", err, out)
		}
	}
}

// checkSettings loads a service's environment as ductor would.
func checkSettings(t *testing.T, name string, env map[string]string, args []string) {
	t.Helper()
	if _, _, err := config.Load(newFlagSet(), nil, func(k string) string { return env[k] }, ":8080"); err != nil {
		t.Errorf("%s: ductor refuses its settings: %v", name, err)
	}
	var out bytes.Buffer
	err := cli.Run(context.Background(), append(slices.Clone(args), "-h"), cli.Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &out})
	if !strings.Contains(out.String(), "Usage: ductor "+args[0]) {
		t.Errorf("%s: `ductor %s` is not a command: %v %s", name, strings.Join(args, " "), err, out.String())
	}
}

// The image checks its own health with `ductor healthcheck` (it has no
// curl), and the build context leaves out what the image does not need.
func TestDockerfileAndIgnore(t *testing.T) {
	t.Parallel()
	df, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^HEALTHCHECK .*CMD \["/ductor", "healthcheck"\]$`).Match(df) {
		t.Error("the Dockerfile's HEALTHCHECK does not run /ductor healthcheck")
	}
	if !strings.Contains(string(df), "app/version.version=") {
		t.Error("the Dockerfile does not stamp the version")
	}
	// go mod download reads the go.mod of every module replaced by a
	// directory (the SDK's): the Dockerfile copies each before it.
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	download := strings.Index(string(df), "RUN go mod download")
	for _, m := range regexp.MustCompile(`(?m)=> \./(\S+)$`).FindAllStringSubmatch(string(mod), -1) {
		if at := strings.Index(string(df), "\nCOPY "+m[1]+"/go.mod "); at < 0 || at > download {
			t.Errorf("the Dockerfile does not copy %s/go.mod before go mod download", m[1])
		}
	}
	ignore, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".git", "bin", ".ductor"} {
		if !slices.Contains(strings.Fields(string(ignore)), p) {
			t.Errorf(".dockerignore does not leave out %s", p)
		}
	}
}

func newFlagSet() *flag.FlagSet { return flag.NewFlagSet("ductor", flag.ContinueOnError) }
