// Package version tells which build of Ductor is running: the version
// stamped at build time, or else the module version and VCS revision Go
// recorded in the binary. It is the one source of the version that
// `ductor version`, /healthz, the User-Agent of http steps,
// ductor_build_info and the traces' service.version report.
package version

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// version is set at build time:
//
//	go build -ldflags "-X github.com/ductor/ductor/app/version.version=v1.2.3"
var version string

var info = sync.OnceValues(func() (string, string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel", ""
	}
	return fromBuildInfo(bi)
})

// fromBuildInfo is the module's version (for a build from a work tree,
// devel and the revision's first 12 digits, devel-0123456789ab) and the
// VCS revision; both are marked +dirty when the tree had changes.
func fromBuildInfo(bi *debug.BuildInfo) (string, string) {
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
		if rev != "" {
			v += "-" + rev[:min(len(rev), 12)] + dirty
		}
	}
	if rev != "" {
		rev += dirty
	}
	return v, rev
}

// String is the running build's version.
func String() string {
	if version != "" {
		return version
	}
	v, _ := info()
	return v
}

// Revision is the VCS revision the binary was built from, if Go recorded
// it.
func Revision() string {
	_, rev := info()
	return rev
}

// GoVersion is the Go release the binary was built with.
func GoVersion() string { return runtime.Version() }

// UserAgent is what Ductor's outbound requests name themselves.
func UserAgent() string { return "Ductor/" + String() }
