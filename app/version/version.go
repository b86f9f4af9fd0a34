// Package version tells which build of Ductor is running: the version
// stamped at build time, or else the module version and VCS revision Go
// recorded in the binary.
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

// fromBuildInfo is the module's version (devel for a build from a work
// tree) and the VCS revision, marked +dirty when the tree had changes.
func fromBuildInfo(bi *debug.BuildInfo) (string, string) {
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
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
