package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	t.Parallel()
	v, rev := fromBuildInfo(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"},
	}})
	if v != "devel-0123456789ab+dirty" || rev != "0123456789abcdef+dirty" {
		t.Errorf("devel build = %q %q", v, rev)
	}
	if v, rev := fromBuildInfo(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}); v != "devel" || rev != "" {
		t.Errorf("build without VCS information = %q %q", v, rev)
	}
	if v, rev := fromBuildInfo(&debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}); v != "v1.4.0" || rev != "" {
		t.Errorf("module build = %q %q", v, rev)
	}
}

func TestStampedVersionWins(t *testing.T) {
	old := version
	t.Cleanup(func() { version = old })
	version = "v9.9.9"
	if String() != "v9.9.9" || UserAgent() != "Ductor/v9.9.9" {
		t.Errorf("String() = %q, UserAgent() = %q", String(), UserAgent())
	}
	if !strings.HasPrefix(GoVersion(), "go") {
		t.Errorf("GoVersion() = %q", GoVersion())
	}
}
