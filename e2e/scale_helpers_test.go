package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// startDevAllowing runs dev on a fresh schema whose http steps may reach
// this machine's loopback (a test server stands in for the outside).
func startDevAllowing(t *testing.T) *program {
	t.Helper()
	_, url := testdb.SchemaURL(t)
	return start(t, map[string]string{"DATABASE_URL": url, "DUCTOR_ADDR": "127.0.0.1:0", "DUCTOR_HTTP_ALLOW": "127.0.0.1/32"}, "dev")
}

// acceptDialogs answers every confirm of the tab with yes and counts them.
func acceptDialogs(ctx context.Context) *atomic.Int32 {
	var yes atomic.Bool
	yes.Store(true)
	return answerDialogs(ctx, &yes)
}

// shotDir is where a browser test keeps its screenshots: the test's
// artifacts under go test -artifacts, else screenshotDir.
func shotDir(t *testing.T) string {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return t.ArtifactDir()
	}
	return screenshotDir()
}

// screenshotDir is where the browser tests keep their screenshots:
// DUCTOR_SCREENSHOTS, or ductor-screenshots in the temporary directory,
// printed once.
var screenshotDir = sync.OnceValue(func() string {
	dir := os.Getenv("DUCTOR_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ductor-screenshots")
	}
	_ = os.MkdirAll(dir, 0o755)
	fmt.Fprintln(os.Stderr, "e2e: screenshots in", dir)
	return dir
})

// shoot saves the whole page at 1440 and 800 px wide, light and dark:
// NAME-1440.png, NAME-800.png, NAME-1440-dark.png, NAME-800-dark.png.
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	for _, dark := range []bool{false, true} {
		scheme, suffix := "light", ""
		if dark {
			scheme, suffix = "dark", "-dark"
		}
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		if err != nil {
			t.Fatalf("emulate %s: %v", scheme, err)
		}
		for _, w := range []int64{1440, 800} {
			run(t, ctx, fmt.Sprintf("%d px wide", w), chromedp.EmulateViewport(w, 900))
			settle(t, ctx)
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot %s at %d: %v", name, w, err)
			}
			path := filepath.Join(shotDir(t), fmt.Sprintf("%s-%d%s.png", name, w, suffix))
			if err := os.WriteFile(path, png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, _ = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
	run(t, ctx, "back to the default size", chromedp.EmulateViewport(1280, 900))
}

// settle waits two animation frames, so a resize has been laid out and
// painted.
func settle(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("wait for a frame: %v", err)
	}
}

// waitAPI polls the API until ok holds of the answer.
func waitAPI(t *testing.T, p *program, path, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	var out map[string]any
	if !testwait.Until(context.Background(), 60*time.Second, func() bool {
		_, out = api(t, p, "GET", path, "", "")
		return ok(out)
	}) {
		t.Fatalf("%s never held: %v", what, out)
	}
	return out
}

func jsNum(ctx context.Context, t *testing.T, js string) float64 {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}
