package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// axeVersion is the axe-core release the accessibility test injects,
// installed from npm into a cache folder on first use.
const axeVersion = "4.14.1"

var axeScript = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(os.TempDir(), "ductor-axe-"+axeVersion)
	file := filepath.Join(dir, "node_modules", "axe-core", "axe.min.js")
	if _, err := os.Stat(file); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		cmd := exec.Command("npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", dir, "axe-core@"+axeVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("npm install axe-core: %v\n%s", err, out)
		}
	}
	b, err := os.ReadFile(file)
	return string(b), err
})

// axeFinding is one serious or critical violation on a page.
type axeFinding struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeCheck runs axe-core on the page as it stands and returns its
// serious and critical violations.
func axeCheck(t *testing.T, ctx context.Context) []axeFinding {
	t.Helper()
	src, err := axeScript()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](src+";0")); err != nil {
		t.Fatalf("inject axe-core: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ["violations"]}).then((r) => JSON.stringify(
		r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
			.map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" "))}))))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var out []axeFinding
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every dashboard page, the editor and the inspector included, has no
// serious or critical accessibility violation by axe-core (contrast
// included), in the light theme and the dark.
func TestDashboardPagesPassAxe(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	if code, out := api(t, p, "POST", "/definitions/nightly/versions", "application/yaml",
		"key: nightly\nsteps:\n  - {ref: report, type: task, with: {handler: builtin.noop}}\n  - {ref: ok, type: approval, with: {approvers: ['role:owner']}}\nedges:\n  - {from: report, to: ok}\n"); code != http.StatusCreated {
		t.Fatalf("publish: %d %v", code, out)
	}
	code, out := api(t, p, "POST", "/runs", "application/json", `{"definition": "nightly"}`)
	if code >= 300 {
		t.Fatalf("start: %d %v", code, out)
	}
	id, _ := out["id"].(string)
	ctx := newBrowser(t)
	acceptDialogs(ctx)
	devLogin(t, ctx, p)
	var found []string
	for _, path := range []string{
		"/t/dev", "/t/dev/runs", "/t/dev/runs/" + id, "/t/dev/runs/" + id + "?node=ok", "/t/dev/inbox",
		"/t/dev/definitions", "/t/dev/definitions/nightly/edit", "/t/dev/schedules", "/t/dev/webhooks",
		"/t/dev/subscriptions", "/t/dev/usage", "/t/dev/settings", "/t/dev/settings/keys", "/t/dev/settings/members",
		"/t/dev/settings/secrets", "/t/dev/settings/audit", "/t/dev/runs/00000000-0000-4000-8000-000000000001",
	} {
		run(t, ctx, "open "+path, chromedp.Navigate(p.BaseURL+path), chromedp.WaitVisible(chromedp.CSS(".user-email")))
		for _, scheme := range []string{"light", "dark"} {
			if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			}); err != nil {
				t.Fatalf("emulate %s: %v", scheme, err)
			}
			settle(t, ctx)
			for _, v := range axeCheck(t, ctx) {
				found = append(found, fmt.Sprintf("%s (%s): %s (%s) %s at %s", path, scheme, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; ")))
			}
		}
	}
	if len(found) > 0 {
		t.Fatalf("%d serious or critical findings:\n%s", len(found), strings.Join(found, "\n"))
	}
}
