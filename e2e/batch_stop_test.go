package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
)

// TestBatchStopInChromium: a bulk cancel still working is stopped from
// its page, after a confirmation; the page then shows it stopped, with
// its counts, and without the button, and the runs it had not reached
// are left waiting.
func TestBatchStopInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	if code, out := api(t, p, "POST", "/definitions/parked/versions", "application/yaml",
		"key: parked\nsteps:\n  - { ref: hold, type: signal, with: { name: never } }\n"); code != http.StatusCreated {
		t.Fatalf("publish: %d %v", code, out)
	}
	var kept []string
	for range 3 {
		code, out := api(t, p, "POST", "/runs", "application/json", `{"definition": "parked"}`)
		if code != http.StatusCreated {
			t.Fatalf("start: %d %v", code, out)
		}
		kept = append(kept, out["id"].(string))
	}
	for _, id := range kept {
		waitAPIStatus(t, p, id, "waiting")
	}
	// 40,000 ids that name no run come first: the sweep, 50 a round, is
	// still on them when the page stops the batch, and never reaches the
	// real runs after them.
	ids := make([]string, 0, 40_003)
	for range 40_000 {
		ids = append(ids, uuid.NewString())
	}
	ids = append(ids, kept...)
	raw, _ := json.Marshal(map[string]any{"action": "cancel", "run_ids": ids, "reason": "too wide"})
	code, b := api(t, p, "POST", "/runs/batch", "application/json", string(raw))
	if code != http.StatusAccepted {
		t.Fatalf("create the batch: %d %v", code, b)
	}
	id := b["id"].(string)

	ctx := newBrowser(t)
	dialogs := acceptDialogs(ctx)
	devLogin(t, ctx, p)
	run(t, ctx, "open the batch", chromedp.Navigate(p.BaseURL+"/t/dev/batches/"+id),
		chromedp.WaitVisible(chromedp.CSS("#batch-stop")))
	if got := text(t, ctx, "#batch-status"); got != "running" {
		t.Fatalf("the batch is %q before the stop", got)
	}
	run(t, ctx, "stop the batch", chromedp.Click(chromedp.CSS("#batch-stop")),
		chromedp.WaitVisible(chromedp.CSS("#batch-status.cancelled"))) // the page again, after the stop
	waitFor(t, ctx, "the page to show the batch stopped", `document.getElementById("batch-status").textContent === "stopped" &&
		document.getElementById("batch-stop") === null`)
	if dialogs.Load() != 1 {
		t.Errorf("%d confirmations, want 1", dialogs.Load())
	}
	shoot(t, ctx, "batch-stopped")
	_, got := api(t, p, "GET", "/batches/"+id, "", "")
	acted := got["done"].(float64) + got["failed"].(float64)
	if got["status"] != "stopped" || got["finished_at"] == nil || acted == 0 || acted >= float64(len(ids)) || got["total"] != float64(len(ids)) {
		t.Fatalf("the stopped batch reads %v, want stopped part way", got)
	}
	if counts := text(t, ctx, "#batch-counts"); counts == "" {
		t.Error("the stopped batch's page shows no counts")
	}
	for _, r := range kept {
		if _, run := api(t, p, "GET", "/runs/"+r, "", ""); run["status"] != "waiting" {
			t.Errorf("run %s the batch had not reached is %v, want it left waiting", r, run["status"])
		}
	}
	if code, again := api(t, p, "POST", "/batches/"+id+"/stop", "", ""); code != http.StatusConflict {
		t.Errorf("stopping it again: %d %v, want 409", code, again)
	}
}
