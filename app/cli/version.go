package cli

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Version is the release, set at build time with
// -ldflags "-X github.com/ductor/ductor/app/cli.Version=v1.2.3"; when it
// is not, the module version `go install` recorded, or the commit.
var Version = ""

// version says which build this is.
func version() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "devel"
	}
	return "devel-" + rev + dirty
}

// runVersion prints `ductor VERSION (GO)`.
func runVersion(_ context.Context, env Env, args []string) error {
	if err := newFlags("version", env).Parse(args); err != nil {
		return err
	}
	goVersion := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
	}
	fmt.Fprintf(env.Stdout, "ductor %s (%s)\n", version(), goVersion)
	return nil
}
