package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The repository's license is Apache-2.0, its security policy says how
// to report and what is supported, and its changelog keeps the
// Keep a Changelog form: Unreleased first, then each version with its
// date, newest first, each with its link.
func TestLicenseChangelogAndSecurityPolicy(t *testing.T) {
	t.Parallel()
	license := readRepoFile(t, "LICENSE")
	if !strings.Contains(license, "Apache License\n                           Version 2.0, January 2004") ||
		!strings.Contains(license, "END OF TERMS AND CONDITIONS") {
		t.Error("LICENSE is not the Apache License 2.0")
	}
	security := readRepoFile(t, "SECURITY.md")
	for _, h := range []string{"## Reporting a vulnerability", "## Supported versions"} {
		if !strings.Contains(security, h) {
			t.Errorf("SECURITY.md has no %q", h)
		}
	}
	checkChangelog(t, readRepoFile(t, "CHANGELOG.md"))
}

var (
	versionHeading = regexp.MustCompile(`(?m)^## \[([^\]]+)\](.*)$`)
	datedVersion   = regexp.MustCompile(`^ - \d{4}-\d{2}-\d{2}$`)
	semver         = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$`)
)

func checkChangelog(t *testing.T, log string) {
	t.Helper()
	headings := versionHeading.FindAllStringSubmatch(log, -1)
	if len(headings) < 2 || headings[0][1] != "Unreleased" || headings[0][2] != "" {
		t.Fatalf("CHANGELOG.md must start with ## [Unreleased], then the versions: %v", headings)
	}
	var versions []string
	for _, h := range headings[1:] {
		v := h[1]
		if !semver.MatchString(v) || !datedVersion.MatchString(h[2]) {
			t.Errorf("CHANGELOG.md: %q is not \"## [X.Y.Z] - YYYY-MM-DD\"", h[0])
		}
		if !strings.Contains(log, "\n["+v+"]: ") {
			t.Errorf("CHANGELOG.md: version %s has no link reference", v)
		}
		versions = append(versions, v)
	}
	if versions[len(versions)-1] != "0.1.0" {
		t.Errorf("CHANGELOG.md's oldest version is %s, want 0.1.0", versions[len(versions)-1])
	}
	for i := 1; i < len(versions); i++ {
		if !newer(versions[i-1], versions[i]) {
			t.Errorf("CHANGELOG.md: %s is listed above %s but is not newer", versions[i-1], versions[i])
		}
	}
}

// newer reports whether a is a later release than b (pre-releases aside).
func newer(a, b string) bool {
	ma, mb := semver.FindStringSubmatch(a), semver.FindStringSubmatch(b)
	if ma == nil || mb == nil {
		return false
	}
	for i := 1; i <= 3; i++ {
		if len(ma[i]) != len(mb[i]) {
			return len(ma[i]) > len(mb[i])
		}
		if ma[i] != mb[i] {
			return ma[i] > mb[i]
		}
	}
	return ma[4] == "" && mb[4] != ""
}

// `make release` refuses, before it builds anything, a version that is
// not semver and one that the changelog has no section for.
func TestMakeReleaseChecksVersionAndChangelog(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	for version, want := range map[string]string{
		"1.2":     "is not vMAJOR.MINOR.PATCH",
		"v0.0.99": `CHANGELOG.md has no section "## [0.0.99] - YYYY-MM-DD"`,
	} {
		out, err := exec.Command("make", "-s", "-C", "..", "release", "VERSION="+version).CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("make release VERSION=%s: %v\n%s\nwant a refusal saying %q", version, err, out, want)
		}
	}
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// The links of the operator's pages lead to files that exist and to
// headings those files have.
func TestOperatorPagesLinks(t *testing.T) {
	t.Parallel()
	for _, page := range []string{"errors.md", "limits.md", "operations.md", "versioning.md", "api-keys.md", "cli.md", "README.md"} {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			if file == "" {
				file = page
			}
			body, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: link %s: %v", page, target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(file, ".md") && !hasAnchor(string(body), anchor) {
				t.Errorf("%s: link %s: %s has no heading with that anchor", page, target, filepath.Base(file))
			}
		}
	}
}

func hasAnchor(md, anchor string) bool {
	for _, m := range mdHeading.FindAllStringSubmatch(md, -1) {
		if slug(m[1]) == anchor {
			return true
		}
	}
	return false
}

// slug is GitHub's anchor of a heading: lower case, spaces to hyphens,
// punctuation other than hyphens and underscores dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
