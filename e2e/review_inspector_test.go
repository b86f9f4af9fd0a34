package e2e

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// A waiting run in the inspector, in Chromium: an event_set's wait says
// which of its events have come; the live note stays quiet while nothing
// changes; a pending approval's panel links to its card in the inbox;
// after Continue as new the page says where the work goes on, and links
// there.
func TestInspectorWaitsInboxLinkAndContinueAsNewInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	id := publishRun(t, p, "dispatch", `
key: dispatch
steps:
  - { ref: gate, type: event_set, with: { events: [ { name: order.paid }, { name: order.packed } ], policy: all_required } }
  - { ref: ok, type: approval, with: { approvers: [ "role:owner" ], title: Ship it } }
`, map[string]any{"order": 9})
	waitAPI(t, p, "/runs/"+id, "the run to wait", func(r map[string]any) bool { return r["status"] == "waiting" })
	if code, out := api(t, p, "POST", "/events", "application/json", `{"name": "order.paid", "data": {"order": 9}}`); code/100 != 2 {
		t.Fatalf("publish the event: %d %v", code, out)
	}
	ctx := newBrowser(t)
	dialogs := acceptDialogs(ctx)
	devLogin(t, ctx, p)

	t.Run("event set", func(t *testing.T) {
		want := "order.paid, order.packed (1 of 2 received: order.paid)"
		run(t, ctx, "open the event set", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id+"?node=gate"),
			chromedp.WaitVisible(chromedp.CSS("#node-waiting")))
		for try := 0; try < 20 && !strings.Contains(text(t, ctx, "#node-waiting"), want); try++ {
			<-time.After(250 * time.Millisecond)
			run(t, ctx, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#node-waiting")))
		}
		if got := text(t, ctx, "#node-waiting"); !strings.Contains(got, want) {
			t.Errorf("the event set's panel waits for %q, want %q", got, want)
		}
		if got := text(t, ctx, `#steps tr[data-ref="gate"]`); !strings.Contains(got, "1 of 2 received") {
			t.Errorf("the event set's row says %q", got)
		}
		// Nothing changes for three seconds: the live note says nothing.
		<-time.After(3 * time.Second)
		if got := text(t, ctx, "#live-note"); got != "" {
			t.Errorf("with nothing changed the live note says %q", got)
		}
		shoot(t, ctx, "review-inspector-event-set")
		inspectorAxeClean(t, ctx, "the event set")
	})

	t.Run("approval links to the inbox", func(t *testing.T) {
		run(t, ctx, "open the approval", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id+"?node=ok"),
			chromedp.WaitVisible(chromedp.CSS("#node-approval-inbox")))
		href := attrOf(t, ctx, "#node-approval-inbox", "href")
		shoot(t, ctx, "review-inspector-approval")
		run(t, ctx, "follow it", chromedp.Click(chromedp.CSS("#node-approval-inbox")),
			chromedp.WaitVisible(chromedp.CSS("article.approval")))
		anchor := href[strings.Index(href, "#")+1:]
		if !strings.HasPrefix(anchor, "approval-") || count(t, ctx, "article.approval#"+anchor) != 1 {
			t.Errorf("the inbox link %s names no card of the inbox", href)
		}
		if got := text(t, ctx, "article.approval#"+anchor+" h2"); !strings.Contains(got, "Ship it") {
			t.Errorf("the linked card is %q", got)
		}
	})

	t.Run("continue as new", func(t *testing.T) {
		before := dialogs.Load()
		run(t, ctx, "continue as new", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id),
			chromedp.WaitVisible(chromedp.CSS("#can-details")),
			chromedp.Click(chromedp.CSS("#can-details summary")),
			chromedp.Click(chromedp.CSS("#continue-as-new"), chromedp.NodeVisible),
			chromedp.WaitVisible(chromedp.CSS("#continued-banner a")))
		if got := dialogs.Load() - before; got != 1 {
			t.Errorf("%d questions before continuing as new, want 1", got)
		}
		next := text(t, ctx, "#continued-banner a")
		_, r := api(t, p, "GET", "/runs/"+id, "", "")
		if r["continued_to_run_id"] != next {
			t.Errorf("the banner names %s; the API continued the run as %v", next, r["continued_to_run_id"])
		}
		shoot(t, ctx, "review-inspector-continued")
		inspectorAxeClean(t, ctx, "the continued run")
		run(t, ctx, "follow the banner", chromedp.Click(chromedp.CSS("#continued-banner a")),
			chromedp.WaitVisible(chromedp.CSS("#predecessor-link")))
		if got := text(t, ctx, "#run-id"); got != next {
			t.Errorf("the banner led to run %s, want %s", got, next)
		}
	})
}

// liveNote is what the inspector's live note may say: what changed (the
// run's status, steps that ended), at a UTC time of 24 hours, like every
// other time on the page.
var liveNote = regexp.MustCompile(`^(Run [a-z_]+|Step [a-z0-9_]+ [a-z_]+|\d+ (child|children)( more)? of [a-z0-9_]+ failed( \(\d+ in all\))?)(, (run [a-z_]+|step [a-z0-9_]+ [a-z_]+|\d+ (child|children)( more)? of [a-z0-9_]+ failed( \(\d+ in all\))?))* at \d\d:\d\d:\d\d UTC$`)

// A running scatter in the inspector, in Chromium: its box on the graph
// shows its progress (n/30) as its children end; the live note says
// what changed at a UTC 24-hour time (the steps that ended, the run's new
// status), nothing at the refreshes that change neither, nor once the run
// has ended; the graph's arrowheads follow the theme (light on the dark graph).
func TestInspectorProgressLiveNoteAndArrowheadsInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	id := publishRun(t, p, "slowfan", `
key: slowfan
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, concurrency: 2, do: {type: task, with: {handler: builtin.sleep, input_expr: '{"ms": 500}'}}}
  - { ref: after, type: transform, with: { expr: '1' } }
edges:
  - { from: fan, to: after }
`, map[string]any{"items": make([]int, 30)})
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "open the run", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id),
		chromedp.WaitVisible(chromedp.CSS(`#run-graph g.gnode[data-ref="fan"]`)),
		chromedp.Evaluate[chromedp.Void](`(() => {
			window.notes = [];
			window.progress = new Set();
			const note = document.getElementById("live-note");
			new MutationObserver(() => window.notes.push(note.textContent)).observe(note, { childList: true, characterData: true, subtree: true });
			const seen = () => { const g = document.querySelector('#run-graph g.gnode[data-ref="fan"] .gprogress'); if (g) window.progress.add(g.textContent); };
			seen();
			new MutationObserver(seen).observe(document.getElementById("graph-body"), { childList: true, subtree: true });
		})()`))
	waitFor(t, ctx, "the scatter's progress on its box", `(() => {
		const g = document.querySelector('#run-graph g.gnode[data-ref="fan"] .gprogress');
		const m = g && /^(\d+)\/30$/.exec(g.textContent);
		return !!m && Number(m[1]) > 0 && Number(m[1]) < 30;
	})()`)
	if got := attrOf(t, ctx, `#run-graph g.gnode[data-ref="fan"]`, "data-state"); got != "running" {
		t.Errorf("the scatter's box is %q while its children run", got)
	}
	shoot(t, ctx, "review-inspector-progress")
	waitAPI(t, p, "/runs/"+id, "the run to succeed", func(r map[string]any) bool { return r["status"] == "succeeded" })
	waitFor(t, ctx, "the page to follow", `document.getElementById("run-status").textContent === "succeeded"`)
	// The badge is painted from the stream at once; the note speaks at
	// the refresh that follows.
	waitFor(t, ctx, "the live note to say the run succeeded", `window.notes.some((n) => n.startsWith("Run succeeded"))`)
	var notes []string
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.notes`))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range raw {
		if n != "" {
			notes = append(notes, n)
		}
	}
	if len(notes) == 0 {
		t.Fatal("the live note never spoke while the run moved")
	}
	t.Logf("the live note said %q", notes)
	for _, n := range notes {
		if !liveNote.MatchString(n) || strings.Contains(n, "AM") || strings.Contains(n, "PM") {
			t.Errorf("the live note said %q", n)
		}
	}
	if n := jsNum(ctx, t, `window.progress.size`); n < 2 {
		t.Errorf("the box's progress took %v values, want it to move", n)
	}
	// It says what changed, once: the scatter's end, the run's new
	// status; not the time at each refresh while the children end (about
	// one a second), which change neither.
	said := strings.Join(notes, " | ")
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, "Run succeeded") }) {
		t.Errorf("the live note never said the run succeeded: %q", notes)
	}
	if !strings.Contains(strings.ToLower(said), "step fan succeeded") || !strings.Contains(strings.ToLower(said), "step after succeeded") {
		t.Errorf("the live note never said the steps that ended: %q", notes)
	}
	// (The run may have been pending when the page loaded: a fourth.)
	if len(notes) > 4 {
		t.Errorf("the live note spoke %d times for three changes: %q", len(notes), notes)
	}
	for i := 1; i < len(notes); i++ {
		if notes[i] == notes[i-1] {
			t.Errorf("the live note said %q twice", notes[i])
		}
	}
	// Once the run has ended nothing changes: the note says no more.
	spoke := len(raw)
	<-time.After(2500 * time.Millisecond)
	if n := jsNum(ctx, t, `window.notes.length`); int(n) != spoke {
		t.Errorf("after the run ended the live note spoke %v times, not %d", n, spoke)
	}
	shoot(t, ctx, "review-inspector-live-note")
	arrowheads(t, ctx)
}

// arrowheads checks the graph's arrowheads follow the theme, shoots the
// graph and checks it with axe.
func arrowheads(t *testing.T, ctx context.Context) {
	t.Helper()

	// The arrowheads in the dark: light on the dark background, as in the
	// light theme dark on the light one.
	fill := func(scheme string) string {
		t.Helper()
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		}); err != nil {
			t.Fatal(err)
		}
		settle(t, ctx)
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#arrow-fired path")).fill + " on " + getComputedStyle(document.body).backgroundColor`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	light, dark := fill("light"), fill("dark")
	_, _ = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
	if strings.HasPrefix(dark, "rgb(0, 0, 0) ") || light == dark || luminance(t, dark) < 0.5 {
		t.Errorf("the fired arrowheads are %s in the dark (%s in the light)", dark, light)
	}
	shoot(t, ctx, "review-inspector-arrowheads")
	inspectorAxeClean(t, ctx, "the finished scatter")
}

// luminance is the brightness, 0 to 1, of the first rgb() colour in s.
func luminance(t *testing.T, s string) float64 {
	t.Helper()
	m := regexp.MustCompile(`rgb\((\d+), (\d+), (\d+)\)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no colour in %q", s)
	}
	var sum float64
	for _, c := range m[1:] {
		var v float64
		for _, d := range c {
			v = v*10 + float64(d-'0')
		}
		sum += v
	}
	return sum / (3 * 255)
}
