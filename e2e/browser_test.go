package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// newBrowser starts Debian's headless Chromium and returns a tab context.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: `make test` installs it (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	// A bound on the whole test's browsing, beyond each wait's own: the
	// longest tests take a minute and more while the suite's other tests
	// load the machine.
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	return ctx
}

func TestHomePageRendersInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.BaseURL+"/")); err != nil {
		t.Fatalf("open home page: %v", err)
	}
	heading, err := chromedp.Run(ctx, chromedp.Text("h1"))
	if err != nil {
		t.Fatalf("read heading: %v", err)
	}
	// The hashed stylesheet loaded: the header has its bottom border.
	border, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("header.top")).borderBottomStyle`))
	if err != nil {
		t.Fatalf("read header style: %v", err)
	}
	if !strings.Contains(heading, "Ductor is running") {
		t.Errorf("h1 = %q", heading)
	}
	if border != "solid" {
		t.Errorf("header border style = %q: the stylesheet did not load", border)
	}
}
