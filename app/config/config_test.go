package config

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func load(t *testing.T, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg, _, err := Load(fs, args, func(k string) string { return env[k] }, "127.0.0.1:8080")
	return cfg, err
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:8080" || len(cfg.Roles) != 4 || cfg.DatabaseURL != "" || cfg.APIRate != 50 || cfg.RescueWindow != 30*time.Second ||
		cfg.LogFormat != "" || cfg.PruneInterval != time.Minute {
		t.Fatalf("defaults = %+v", cfg)
	}
}

func TestFlagsOverrideEnvironment(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, map[string]string{"DUCTOR_ADDR": "127.0.0.1:1"}, "--addr", "127.0.0.1:2", "--roles", "api,steps")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:2" {
		t.Errorf("addr = %q, want the flag's", cfg.Addr)
	}
	if !cfg.Roles.Has(RoleAPI) || cfg.Roles.Has(RoleWeb) || !cfg.Roles.Works() {
		t.Errorf("roles = %v", cfg.Roles)
	}
}

func TestBadSettingNamesIt(t *testing.T) {
	t.Parallel()
	cases := map[string]map[string]string{
		"DATABASE_URL":           {"DATABASE_URL": "mysql://x"},
		"DUCTOR_ADDR":            {"DUCTOR_ADDR": "nohostport"},
		"DUCTOR_BASE_URL":        {"DUCTOR_BASE_URL": "ftp://x"},
		"OIDC_ISSUER":            {"OIDC_ISSUER": "not a url"},
		"DUCTOR_SECRET_KEY":      {"DUCTOR_SECRET_KEY": "short"},
		"DUCTOR_HTTP_ALLOW":      {"DUCTOR_HTTP_ALLOW": "10.0.0.0/8, nonsense"},
		"DUCTOR_LOG_LEVEL":       {"DUCTOR_LOG_LEVEL": "loud"},
		"DUCTOR_ROLES":           {"DUCTOR_ROLES": "web,chef"},
		"DUCTOR_API_RATE":        {"DUCTOR_API_RATE": "-3"},
		"DUCTOR_RESCUE_WINDOW":   {"DUCTOR_RESCUE_WINDOW": "soon"},
		"DUCTOR_LOG_FORMAT":      {"DUCTOR_LOG_FORMAT": "xml"},
		"DUCTOR_PRUNE_INTERVAL":  {"DUCTOR_PRUNE_INTERVAL": "10ms"},
		"DUCTOR_STEP_BATCH":      {"DUCTOR_STEP_BATCH": "0"},
		"DUCTOR_LOCAL_STEPS":     {"DUCTOR_LOCAL_STEPS": "sometimes"},
		"DUCTOR_TRUSTED_PROXIES": {"DUCTOR_TRUSTED_PROXIES": "10.0.0.0/8, lb.internal"},
	}
	for setting, env := range cases {
		_, err := load(t, env)
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != setting {
			t.Errorf("%s: err = %v, want a config error naming it", setting, err)
		}
	}
}

func TestHTTPAllowParsesCIDRs(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, map[string]string{"DUCTOR_HTTP_ALLOW": "10.1.2.3/8, 127.0.0.1/32"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.HTTPAllow) != 2 || cfg.HTTPAllow[0].String() != "10.0.0.0/8" {
		t.Fatalf("HTTPAllow = %v", cfg.HTTPAllow)
	}
}

// Trusted proxies are none by default; the flag wins over the variable.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	if cfg, err := load(t, nil); err != nil || len(cfg.TrustedProxies) != 0 {
		t.Fatalf("default = %v, %v; want none", cfg.TrustedProxies, err)
	}
	cfg, err := load(t, map[string]string{"DUCTOR_TRUSTED_PROXIES": "10.0.0.0/8"}, "--trusted-proxies", "192.0.2.9/24, 2001:db8::/32")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.TrustedProxies) != 2 || cfg.TrustedProxies[0].String() != "192.0.2.0/24" || cfg.TrustedProxies[1].String() != "2001:db8::/32" {
		t.Fatalf("TrustedProxies = %v", cfg.TrustedProxies)
	}
}

func TestRequireForServe(t *testing.T) {
	t.Parallel()
	cfg, _ := load(t, nil)
	var ce *Error
	if err := cfg.RequireForServe(); !errors.As(err, &ce) || ce.Setting != "DATABASE_URL" {
		t.Fatalf("no database: %v", err)
	}
	cfg, _ = load(t, map[string]string{"DATABASE_URL": "postgres://x/y"})
	if err := cfg.RequireForServe(); !errors.As(err, &ce) || ce.Setting != "OIDC_ISSUER" {
		t.Fatalf("web without OIDC: %v", err)
	}
	cfg, _ = load(t, map[string]string{"DATABASE_URL": "postgres://x/y", "OIDC_ISSUER": "https://id.example", "OIDC_CLIENT_ID": "c"})
	if err := cfg.RequireForServe(); !errors.As(err, &ce) || ce.Setting != "DUCTOR_SECRET_KEY" {
		t.Fatalf("web without secret: %v", err)
	}
	cfg, _ = load(t, map[string]string{"DATABASE_URL": "postgres://x/y", "DUCTOR_ROLES": "api,coordinator"})
	if err := cfg.RequireForServe(); err != nil {
		t.Fatalf("api-only serve needs no OIDC: %v", err)
	}
}

// A secret setting may come from the file its _FILE variable names (a
// mounted secret), without the file's final line break; the flag still
// wins, and the variable and its _FILE together are an error.
func TestSecretsFromFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := strings.Repeat("k", 40)
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	keyFile, oidcFile := write("key", key+"\n"), write("oidc", "client-secret\r\n")
	cfg, err := load(t, map[string]string{"DUCTOR_SECRET_KEY_FILE": keyFile, "OIDC_CLIENT_SECRET_FILE": oidcFile})
	if err != nil || cfg.SecretKey != key || cfg.OIDCClientSecret != "client-secret" {
		t.Fatalf("from files: %+v, %v", cfg, err)
	}
	flagKey := strings.Repeat("f", 32)
	if cfg, err := load(t, map[string]string{"DUCTOR_SECRET_KEY_FILE": keyFile}, "--secret-key", flagKey); err != nil || cfg.SecretKey != flagKey {
		t.Errorf("the flag beside a file: %q, %v", cfg.SecretKey, err)
	}
	cases := map[string]struct {
		env  map[string]string
		want string
	}{
		"both":      {map[string]string{"DUCTOR_SECRET_KEY": key, "DUCTOR_SECRET_KEY_FILE": keyFile}, "DUCTOR_SECRET_KEY_FILE: set DUCTOR_SECRET_KEY or DUCTOR_SECRET_KEY_FILE, not both"},
		"missing":   {map[string]string{"OIDC_CLIENT_SECRET_FILE": filepath.Join(dir, "nope")}, "OIDC_CLIENT_SECRET_FILE: cannot read the file"},
		"empty":     {map[string]string{"DUCTOR_SECRET_KEY_FILE": write("empty", "\n")}, "DUCTOR_SECRET_KEY_FILE: "},
		"too short": {map[string]string{"DUCTOR_SECRET_KEY_FILE": write("short", "short\n")}, "DUCTOR_SECRET_KEY: must be at least 32 characters"},
	}
	for name, c := range cases {
		_, err := load(t, c.env)
		if !IsConfigError(err) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), key) {
			t.Errorf("%s: the error shows the secret: %v", name, err)
		}
	}
}
