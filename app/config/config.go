// Package config reads Ductor's settings from the environment and from
// matching command-line flags (flags win). A bad setting is reported as one
// line that names it.
package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is every setting a Ductor process reads.
type Config struct {
	DatabaseURL string
	Addr        string
	BaseURL     string
	SecretKey   string
	// SecretKeyPrevious is the key DUCTOR_SECRET_KEY replaced, accepted
	// for opening stored secrets until `ductor secrets rekey` has
	// re-sealed them; empty when none.
	SecretKeyPrevious string
	OIDCIssuer        string
	OIDCClientID      string
	OIDCClientSecret  string
	HTTPAllow         []netip.Prefix
	LogLevel          slog.Level
	Roles             Roles
	// APIRate is how many requests a second each API key may make, with
	// bursts of twice as many; 0 turns the limit off.
	APIRate float64
	// RescueWindow is how long past its timeout a step's attempt may go
	// without a result before it is reported lost and retried.
	RescueWindow time.Duration
	// LogFormat is json or text; empty lets the command choose (serve:
	// json, dev: text).
	LogFormat string
	// PruneInterval is how often a coordinator deletes the finished runs
	// past their tenant's retention; 0 turns pruning off.
	PruneInterval time.Duration
	// StepBatch is how many ready steps of one tenant one River job may
	// carry (1: one step a job).
	StepBatch int
	// LocalSteps lets a process with the coordinator and steps roles run
	// the task and http steps its own ticks dispatch without a River job
	// (on by default; DUCTOR_LOCAL_STEPS=off turns it off).
	LocalSteps bool
	// TrustedProxies are the peers whose X-Forwarded-For and X-Real-IP
	// headers name the client; none by default.
	TrustedProxies []netip.Prefix
	// SubscriptionMaxAge, SubscriptionDisableAfter and
	// SubscriptionTimeout tune outbound webhook deliveries (see
	// subscriptions.Config); zero values take its defaults.
	SubscriptionMaxAge       time.Duration
	SubscriptionDisableAfter int
	SubscriptionTimeout      time.Duration
	// UsageTenantLabels labels the usage metrics by tenant as well as
	// tier (off: the number of tenants is unbounded).
	UsageTenantLabels bool
}

// Role is a part of Ductor a process runs.
type Role string

const (
	RoleWeb         Role = "web"
	RoleAPI         Role = "api"
	RoleCoordinator Role = "coordinator"
	RoleSteps       Role = "steps"
)

// AllRoles is what a process runs unless --roles says otherwise.
var AllRoles = Roles{RoleWeb, RoleAPI, RoleCoordinator, RoleSteps}

// Roles is a set of roles.
type Roles []Role

// Has reports whether r includes role.
func (r Roles) Has(role Role) bool { return slices.Contains(r, role) }

// Serves reports whether the process answers HTTP.
func (r Roles) Serves() bool { return r.Has(RoleWeb) || r.Has(RoleAPI) }

// Works reports whether the process runs River workers.
func (r Roles) Works() bool { return r.Has(RoleCoordinator) || r.Has(RoleSteps) }

// Error names the setting that is wrong.
type Error struct {
	Setting string
	Problem string
}

func (e *Error) Error() string { return e.Setting + ": " + e.Problem }

type setting struct {
	env, flag, usage, def string
	value                 string
	// file lets ENV_FILE name a file that holds the value (a secret
	// mounted by Docker, Kubernetes or systemd).
	file bool
}

// Load registers the settings on fs, parses args, and validates. Defaults
// differ by command: dev listens on loopback only.
func Load(fs *flag.FlagSet, args []string, getenv func(string) string, defaultAddr string) (Config, []string, error) {
	settings := []*setting{
		{env: "DATABASE_URL", flag: "database-url", usage: "Postgres connection URL"},
		{env: "DUCTOR_ADDR", flag: "addr", usage: "listen address (host:port)", def: defaultAddr},
		{env: "DUCTOR_BASE_URL", flag: "base-url", usage: "public URL of the dashboard"},
		{env: "DUCTOR_SECRET_KEY", flag: "secret-key", usage: "key that seals stored secrets: tenant, webhook and subscription secrets (at least 32 characters)", file: true},
		{env: "DUCTOR_SECRET_KEY_PREVIOUS", flag: "secret-key-previous", usage: "the key DUCTOR_SECRET_KEY replaced, still accepted for opening stored secrets until `ductor secrets rekey`"},
		{env: "OIDC_ISSUER", flag: "oidc-issuer", usage: "OIDC issuer URL"},
		{env: "OIDC_CLIENT_ID", flag: "oidc-client-id", usage: "OIDC client id"},
		{env: "OIDC_CLIENT_SECRET", flag: "oidc-client-secret", usage: "OIDC client secret", file: true},
		{env: "DUCTOR_HTTP_ALLOW", flag: "http-allow", usage: "comma-separated CIDRs that http steps may reach although private"},
		{env: "DUCTOR_LOG_LEVEL", flag: "log-level", usage: "debug, info, warn or error", def: "info"},
		{env: "DUCTOR_ROLES", flag: "roles", usage: "comma-separated roles: web,api,coordinator,steps", def: "web,api,coordinator,steps"},
		{env: "DUCTOR_API_RATE", flag: "api-rate", usage: "API requests a second each key may make, in bursts of twice as many (0: no limit)", def: "50"},
		{env: "DUCTOR_RESCUE_WINDOW", flag: "rescue-window", usage: "how long past its timeout a step may go without a result before it is retried", def: "30s"},
		{env: "DUCTOR_LOG_FORMAT", flag: "log-format", usage: "json or text (default: json for serve, text for dev)"},
		{env: "DUCTOR_PRUNE_INTERVAL", flag: "prune-interval", usage: "how often finished runs past their tenant's retention are deleted (0: never)", def: "1m"},
		{env: "DUCTOR_STEP_BATCH", flag: "step-batch", usage: "most ready steps of one tenant one job carries, 1 to 16 (1: one step a job)", def: "2"},
		{env: "DUCTOR_LOCAL_STEPS", flag: "local-steps", usage: "run the task and http steps a process decides in that process, without a queue hop, on or off", def: "on"},
		{env: "DUCTOR_SUBSCRIPTION_MAX_AGE", flag: "subscription-max-age", usage: "how long an outbound webhook delivery is tried for", def: "24h"},
		{env: "DUCTOR_SUBSCRIPTION_DISABLE_AFTER", flag: "subscription-disable-after", usage: "failed deliveries in a row that disable a subscription", def: "20"},
		{env: "DUCTOR_SUBSCRIPTION_TIMEOUT", flag: "subscription-timeout", usage: "how long one outbound webhook attempt waits for an answer", def: "10s"},
		{env: "DUCTOR_TRUSTED_PROXIES", flag: "trusted-proxies", usage: "comma-separated CIDRs of the proxies whose X-Forwarded-For and X-Real-IP name the client (default: none)"},
		{env: "DUCTOR_USAGE_TENANT_LABELS", flag: "usage-tenant-labels", usage: "label the usage metrics by tenant id too, true or false (their series grow with the tenants)", def: "false"},
	}
	for _, s := range settings {
		s.value = s.def
		if v := getenv(s.env); v != "" {
			s.value = v
		}
		from := " ($" + s.env + ")"
		if s.file {
			from = " ($" + s.env + ", or a file named by $" + s.env + "_FILE)"
		}
		fs.StringVar(&s.value, s.flag, s.value, s.usage+from)
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, nil, err
	}
	if err := readFiles(fs, settings, getenv); err != nil {
		return Config{}, nil, err
	}
	get := func(env string) string {
		for _, s := range settings {
			if s.env == env {
				return strings.TrimSpace(s.value)
			}
		}
		panic("unknown setting " + env)
	}
	cfg, err := build(get)
	return cfg, fs.Args(), err
}

// readFiles sets each file setting that neither its flag nor its
// variable gives from the file ENV_FILE names, without its final line
// break. Setting both ENV and ENV_FILE is an error.
func readFiles(fs *flag.FlagSet, settings []*setting, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, s := range settings {
		path := getenv(s.env + "_FILE")
		if !s.file || path == "" || given[s.flag] {
			continue
		}
		if getenv(s.env) != "" {
			return &Error{s.env + "_FILE", "set " + s.env + " or " + s.env + "_FILE, not both"}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return &Error{s.env + "_FILE", fmt.Sprintf("cannot read the file: %v", err)}
		}
		s.value = strings.TrimRight(string(b), "\r\n")
		if s.value == "" {
			return &Error{s.env + "_FILE", fmt.Sprintf("%s is empty", path)}
		}
	}
	return nil
}

func build(get func(string) string) (Config, error) {
	cfg := Config{
		DatabaseURL:       get("DATABASE_URL"),
		Addr:              get("DUCTOR_ADDR"),
		BaseURL:           get("DUCTOR_BASE_URL"),
		SecretKey:         get("DUCTOR_SECRET_KEY"),
		SecretKeyPrevious: get("DUCTOR_SECRET_KEY_PREVIOUS"),
		OIDCIssuer:        get("OIDC_ISSUER"),
		OIDCClientID:      get("OIDC_CLIENT_ID"),
		OIDCClientSecret:  get("OIDC_CLIENT_SECRET"),
	}
	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	check(checkDatabaseURL(cfg.DatabaseURL))
	check(checkAddr(cfg.Addr))
	check(checkURL("DUCTOR_BASE_URL", cfg.BaseURL))
	check(checkURL("OIDC_ISSUER", cfg.OIDCIssuer))
	check(checkSecret(cfg.SecretKey))
	check(checkPreviousSecret(cfg.SecretKey, cfg.SecretKeyPrevious))
	var err error
	cfg.HTTPAllow, err = parseCIDRs("DUCTOR_HTTP_ALLOW", get("DUCTOR_HTTP_ALLOW"))
	check(err)
	cfg.LogLevel, err = parseLevel(get("DUCTOR_LOG_LEVEL"))
	check(err)
	cfg.Roles, err = parseRoles(get("DUCTOR_ROLES"))
	check(err)
	cfg.APIRate, err = parseRate(get("DUCTOR_API_RATE"))
	check(err)
	cfg.RescueWindow, err = parseWindow(get("DUCTOR_RESCUE_WINDOW"))
	check(err)
	cfg.LogFormat, err = parseLogFormat(get("DUCTOR_LOG_FORMAT"))
	check(err)
	cfg.PruneInterval, err = parseInterval(get("DUCTOR_PRUNE_INTERVAL"))
	check(err)
	cfg.StepBatch, err = parseStepBatch(get("DUCTOR_STEP_BATCH"))
	check(err)
	cfg.LocalSteps, err = parseOnOff("DUCTOR_LOCAL_STEPS", get("DUCTOR_LOCAL_STEPS"))
	check(err)
	cfg.TrustedProxies, err = parseCIDRs("DUCTOR_TRUSTED_PROXIES", get("DUCTOR_TRUSTED_PROXIES"))
	check(err)
	cfg.SubscriptionMaxAge, err = parseDuration("DUCTOR_SUBSCRIPTION_MAX_AGE", get("DUCTOR_SUBSCRIPTION_MAX_AGE"), time.Minute, 7*24*time.Hour)
	check(err)
	cfg.SubscriptionTimeout, err = parseDuration("DUCTOR_SUBSCRIPTION_TIMEOUT", get("DUCTOR_SUBSCRIPTION_TIMEOUT"), 100*time.Millisecond, time.Minute)
	check(err)
	cfg.SubscriptionDisableAfter, err = strconv.Atoi(get("DUCTOR_SUBSCRIPTION_DISABLE_AFTER"))
	if err != nil || cfg.SubscriptionDisableAfter < 1 || cfg.SubscriptionDisableAfter > 1000 {
		err = &Error{"DUCTOR_SUBSCRIPTION_DISABLE_AFTER", fmt.Sprintf("%q is not a number of deliveries from 1 to 1000", get("DUCTOR_SUBSCRIPTION_DISABLE_AFTER"))}
	}
	check(err)
	cfg.UsageTenantLabels, err = parseSwitch("DUCTOR_USAGE_TENANT_LABELS", get("DUCTOR_USAGE_TENANT_LABELS"))
	check(err)
	if len(errs) > 0 {
		return cfg, errs[0]
	}
	return cfg, nil
}

// OIDCConfigured reports whether login through an identity provider is set up.
func (c Config) OIDCConfigured() bool {
	return c.OIDCIssuer != "" && c.OIDCClientID != ""
}

// RequireForServe checks what `ductor serve` needs beyond Load: a database,
// and for the web role OIDC settings and a secret key.
func (c Config) RequireForServe() error {
	if c.DatabaseURL == "" {
		return &Error{"DATABASE_URL", "required for serve"}
	}
	if !c.Roles.Has(RoleWeb) {
		return nil
	}
	if !c.OIDCConfigured() {
		return &Error{"OIDC_ISSUER", "the web role needs OIDC_ISSUER and OIDC_CLIENT_ID (or run without it: --roles api,coordinator,steps)"}
	}
	if c.SecretKey == "" {
		return &Error{"DUCTOR_SECRET_KEY", "the web role needs a secret key of at least 32 characters"}
	}
	return nil
}

func checkDatabaseURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return &Error{"DATABASE_URL", "must be a postgres:// URL"}
	}
	return nil
}

func checkAddr(v string) error {
	if _, _, err := net.SplitHostPort(v); err != nil {
		return &Error{"DUCTOR_ADDR", fmt.Sprintf("%q is not host:port", v)}
	}
	return nil
}

func checkURL(name, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &Error{name, fmt.Sprintf("%q is not an http(s) URL", v)}
	}
	return nil
}

func checkPreviousSecret(current, previous string) error {
	switch {
	case previous == "":
		return nil
	case current == "":
		return &Error{"DUCTOR_SECRET_KEY_PREVIOUS", "needs DUCTOR_SECRET_KEY, the key that replaced it"}
	case len(previous) < 32:
		return &Error{"DUCTOR_SECRET_KEY_PREVIOUS", "must be at least 32 characters"}
	case previous == current:
		return &Error{"DUCTOR_SECRET_KEY_PREVIOUS", "is the same as DUCTOR_SECRET_KEY"}
	}
	return nil
}

func checkSecret(v string) error {
	if v != "" && len(v) < 32 {
		return &Error{"DUCTOR_SECRET_KEY", "must be at least 32 characters"}
	}
	return nil
}

func parseCIDRs(name, v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, &Error{name, fmt.Sprintf("%q is not a CIDR", part)}
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func parseLevel(v string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		return 0, &Error{"DUCTOR_LOG_LEVEL", fmt.Sprintf("%q is not one of debug, info, warn, error", v)}
	}
	return l, nil
}

func parseRoles(v string) (Roles, error) {
	var out Roles
	for _, part := range strings.Split(v, ",") {
		r := Role(strings.TrimSpace(part))
		if !slices.Contains(AllRoles, r) {
			return nil, &Error{"DUCTOR_ROLES", fmt.Sprintf("unknown role %q (known: web, api, coordinator, steps)", part)}
		}
		if !out.Has(r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, &Error{"DUCTOR_ROLES", "no role given"}
	}
	return out, nil
}

// IsConfigError reports whether err is a setting error.
func IsConfigError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

func parseRate(v string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	r, err := strconv.ParseFloat(v, 64)
	if err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
		return 0, &Error{"DUCTOR_API_RATE", fmt.Sprintf("%q is not a number of requests a second (0 or more)", v)}
	}
	return r, nil
}

func parseWindow(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 100*time.Millisecond {
		return 0, &Error{"DUCTOR_RESCUE_WINDOW", fmt.Sprintf("%q is not a duration of at least 100ms (such as 30s)", v)}
	}
	return d, nil
}

func parseLogFormat(v string) (string, error) {
	if v != "" && v != "json" && v != "text" {
		return "", &Error{"DUCTOR_LOG_FORMAT", fmt.Sprintf("%q is not json or text", v)}
	}
	return v, nil
}

func parseInterval(v string) (time.Duration, error) {
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		return 0, &Error{"DUCTOR_PRUNE_INTERVAL", fmt.Sprintf("%q is not a duration of at least 1s (such as 1m), or 0", v)}
	}
	return d, nil
}

func parseStepBatch(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 16 {
		return 0, &Error{"DUCTOR_STEP_BATCH", fmt.Sprintf("%q is not a number of steps from 1 to 16", v)}
	}
	return n, nil
}

// parseDuration reads a duration setting from lo to hi.
func parseDuration(env, v string, lo, hi time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		return 0, &Error{env, fmt.Sprintf("%q is not a duration from %s to %s", v, lo, hi)}
	}
	return d, nil
}

// parseSwitch reads a setting that is on or off.
// parseOnOff reads a switch written on or off (or true or false).
func parseOnOff(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, &Error{Setting: name, Problem: fmt.Sprintf("%q is not on or off", v)}
	}
	return on, nil
}

func parseSwitch(name, v string) (bool, error) {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, &Error{Setting: name, Problem: fmt.Sprintf("%q is not true or false", v)}
	}
	return on, nil
}
