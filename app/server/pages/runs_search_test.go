package pages_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// The runs list searches by run id (whole or its first characters),
// subject and search attributes, picks definitions by prefix or part,
// counts what matches, shows durations, and pages back as well as on.
func TestRunsPageSearchesCountsAndPagesBack(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, gateFlow)
	b.publish(t, "key: quick-orders\nsteps:\n  - { ref: a, type: task, with: { handler: builtin.noop } }\n")
	var gated []string
	for i := range 55 {
		id := b.start(t, runs.Trigger{Definition: "gated", Subject: fmt.Sprintf("order-%d", i), SearchAttributes: map[string]any{"n": i}})
		gated = append(gated, id.String())
	}
	quick := b.start(t, runs.Trigger{Definition: "quick-orders", Subject: "invoice-1"})
	b.waitStatus(t, quick, engine.RunSucceeded)

	first := b.get(b.viewer, "/runs")
	wantPage(t, "first page", first, http.StatusOK, `id="runs-total">56 runs`, `class="mono small duration"`, " so far", `id="runs-next"`)
	if strings.Contains(first.Body, `id="runs-prev"`) {
		t.Error("the first page links newer runs")
	}
	second := b.br(b.viewer, pageLink(t, first.Body, "runs-next"))
	wantPage(t, "second page", second, http.StatusOK, `id="runs-prev"`, `id="runs-first"`)
	back := b.br(b.viewer, pageLink(t, second.Body, "runs-prev"))
	if got := rows(back.Body); len(got) != 50 || got[0] != quick.String() {
		t.Fatalf("back from the second page: %d runs starting %v, want the first page", len(got), got[:min(1, len(got))])
	}
	if strings.Contains(back.Body, `id="runs-prev"`) {
		t.Error("the page back to the newest links newer runs still")
	}

	for _, c := range []struct {
		query string
		want  []string
	}{
		{"?q=" + quick.String(), []string{quick.String()}},
		{"?q=" + quick.String()[:8], []string{quick.String()}},
		{"?q=invoice", []string{quick.String()}},
		{"?q=order-5", gated[50:55]},
		{"?q=n%3D7", []string{gated[7]}},
		{"?definition=quick&definition_match=prefix", []string{quick.String()}},
		{"?definition=ORDERS&definition_match=contains", []string{quick.String()}},
		{"?definition=quick", nil},
	} {
		page := b.get(b.viewer, "/runs"+c.query)
		got := rows(page.Body)
		if page.Status != http.StatusOK || !sameSet(got, append(c.want, extraOrder5(c.query, gated)...)) {
			t.Errorf("%s: %d, %d runs, want %d", c.query, page.Status, len(got), len(c.want))
		}
	}
	wantPage(t, "bad match", b.get(b.viewer, "/runs?definition=x&definition_match=sounds-like"), http.StatusBadRequest, `id="filter-error"`)

	code, list := b.api(t, "/api/v1/runs?count=true&q=order-&limit=10")
	if code != 200 || list["total"] != 55.0 || list["total_estimated"] != false || list["next_cursor"] == nil {
		t.Errorf("API list with count = %d %v %v", code, list["total"], list["total_estimated"])
	}
	_, older := b.api(t, "/api/v1/runs?q=order-&limit=10&cursor="+list["next_cursor"].(string))
	_, newer := b.api(t, "/api/v1/runs?q=order-&limit=10&cursor="+older["prev_cursor"].(string))
	if !sameSet(ids(newer), ids(list)) {
		t.Errorf("prev_cursor of the second page gives %v, want the first page %v", ids(newer), ids(list))
	}
}

// Past a thousand runs the total is the planner's estimate, rounded and
// said to be one.
func TestRunsTotalIsEstimatedWhenLarge(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	ctx := t.Context()
	db := b.store.DB()
	if _, err := db.Exec(ctx, `INSERT INTO run (tenant_id, id, definition_key, definition_version, manifest_hash, status, root_run_id, state, input)
		SELECT $1, g.id, 'bulk', 1, 'h', 'succeeded', g.id, jsonb_build_object('id', g.id, 'status', 'succeeded'), 'null'
		FROM generate_series(1, 2500) AS i, LATERAL (SELECT gen_random_uuid() AS id, i) AS g`, b.tenant.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "ANALYZE run"); err != nil {
		t.Fatal(err)
	}
	page := b.get(b.viewer, "/runs")
	m := regexp.MustCompile(`id="runs-total">about ([0-9,]+) runs`).FindStringSubmatch(page.Body)
	if m == nil {
		t.Fatalf("2,500 runs: the total is not an estimate: %.300s", page.Body)
	}
	if n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", "")); n < 1500 || n > 4000 {
		t.Errorf("2,500 runs estimated at %d", n)
	}
	// A bulk operation's confirmation asks for the exact number.
	if a := b.get(b.viewer, "/runs/count?definition=bulk"); a.Status != 200 || !strings.Contains(a.Body, `"count":2500`) || !strings.Contains(a.Body, `"more":false`) {
		t.Errorf("the exact count = %d %s", a.Status, a.Body)
	}
	if code, list := b.api(t, "/api/v1/runs?count=true&limit=1"); code != 200 || list["total_estimated"] != true {
		t.Errorf("API count = %d %v %v", code, list["total"], list["total_estimated"])
	}
	if code, list := b.api(t, "/api/v1/runs?count=true&limit=1&status=failed"); code != 200 || list["total"] != 0.0 || list["total_estimated"] != false {
		t.Errorf("API count of none = %d %v %v", code, list["total"], list["total_estimated"])
	}
}

// extraOrder5 adds order-5 itself to the order-5 prefix search.
func extraOrder5(query string, gated []string) []string {
	if query == "?q=order-5" {
		return []string{gated[5]}
	}
	return nil
}

func pageLink(t *testing.T, body, id string) string {
	t.Helper()
	m := regexp.MustCompile(`href="([^"]+)" id="` + id + `"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s link", id)
	}
	return strings.ReplaceAll(m[1], "&amp;", "&")
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := unique(a)
	for _, x := range b {
		if !seen[x] {
			return false
		}
	}
	return true
}

func ids(list map[string]any) []string {
	var out []string
	runs, _ := list["runs"].([]any)
	for _, r := range runs {
		out = append(out, r.(map[string]any)["id"].(string))
	}
	return out
}

// api calls the API with an admin key of the tenant.
func (b *dashBundle) api(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	if b.key == "" {
		b.key = b.newKey(t)
	}
	req, _ := http.NewRequest("GET", b.srvURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+b.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// Bulk cancel from the runs list: every run the filter matches, in the
// background; the batch page shows the progress, the runs end cancelled
// with who asked and why, the batch is audited, and reloading the batch
// page starts nothing again.
func TestRunsPageBulkCancelByFilter(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, gateFlow)
	var waiting []string
	for i := range 7 {
		id := b.start(t, runs.Trigger{Definition: "gated", Subject: fmt.Sprintf("bulk-%d", i)})
		b.waitNode(t, id, "gate", engine.NodeWaiting)
		waiting = append(waiting, id.String())
	}
	other := b.start(t, runs.Trigger{Definition: "gated", Subject: "keep"})

	list := b.get(b.owner, "/runs?q=bulk-")
	wantPage(t, "operator's list", list, http.StatusOK, `id="bulk-form"`, `id="select-matching"`, `name="run_id"`, `All 7 runs matching this filter`)
	if page := b.get(b.viewer, "/runs?q=bulk-"); strings.Contains(page.Body, `id="bulk-form"`) {
		t.Error("a viewer is offered bulk operations")
	}
	if a := b.post(b.viewer, "/runs/batch", url.Values{"action": {"cancel"}, "scope": {"filter"}, "filter": {"q=bulk-"}}); a.Status != http.StatusForbidden {
		t.Errorf("a viewer's bulk cancel = %d, want 403", a.Status)
	}
	wantPage(t, "nothing selected", b.post(b.owner, "/runs/batch", url.Values{"action": {"cancel"}, "filter": {"q=bulk-"}}), http.StatusBadRequest, "select runs")

	posted := b.post(b.owner, "/runs/batch", url.Values{"action": {"cancel"}, "scope": {"filter"}, "filter": {"q=bulk-"}, "reason": {"clean up"}})
	wantRedirect(t, "bulk cancel", posted, "/batches/")
	page := b.br(b.owner, posted.Location)
	wantPage(t, "batch page", page, http.StatusOK, `id="batch-progress"`, "of 7 cancelled", "clean up", "user:"+dOwner,
		`id="back-to-runs" href="/t/`+b.tenant.Slug+`/runs?q=bulk-"`)
	servertest.RunBatches(t, b.runs)
	done := b.br(b.owner, posted.Location)
	wantPage(t, "finished batch", done, http.StatusOK, "7 of 7 cancelled, 0 failed", `class="status succeeded" id="batch-status">completed`)
	for _, id := range waiting {
		r := b.waitStatus(t, mustUUID(t, id), engine.RunCancelled)
		if r.Reason != "clean up" || r.CancelledBy != "user:"+dOwner {
			t.Errorf("run %s cancelled with reason %q by %q", id, r.Reason, r.CancelledBy)
		}
	}
	if r, _ := b.store.RunGet(t.Context(), b.tenant.ID, other); r.Status.Terminal() {
		t.Errorf("a run outside the filter was %s", r.Status)
	}
	audit, _ := b.store.AuditList(t.Context(), b.tenant.ID, 10)
	var actions []string
	for _, e := range audit {
		actions = append(actions, e.Action)
	}
	if !strings.Contains(strings.Join(actions, " "), store.AuditBatchCreate) || !strings.Contains(strings.Join(actions, " "), store.AuditBatchFinish) {
		t.Errorf("audit %v lacks the batch", actions)
	}
	batches, _ := b.store.BatchList(t.Context(), b.tenant.ID, 10)
	if len(batches) != 1 {
		t.Errorf("%d batches after one bulk cancel and reloads", len(batches))
	}
	inspector := b.get(b.viewer, "/runs/"+waiting[0])
	wantPage(t, "cancelled run", inspector, http.StatusOK, `id="run-cancelled-by">user:`+dOwner, `id="run-reason">clean up`)
}

func (b *dashBundle) newKey(t *testing.T) string {
	t.Helper()
	_, key := testdb.APIKey(t, b.store, b.tenant, nil)
	return key
}

func mustUUID(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Bulk retry of runs selected one by one: the selected failed runs run
// their failed step again (a new generation), the one left out does not, and a selected run
// that did not fail is counted as failed with its reason.
func TestRunsPageBulkRetrySelectedRuns(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, "key: shaky\nsteps:\n  - { ref: boom, type: transform, with: { expr: '1 / (input.n - input.n)' } }\n")
	b.publish(t, gateFlow)
	var failed []uuid.UUID
	for i := range 3 {
		id := b.start(t, runs.Trigger{Definition: "shaky", Subject: fmt.Sprintf("shaky-%d", i), Input: map[string]any{"n": i}})
		b.waitStatus(t, id, engine.RunFailed)
		failed = append(failed, id)
	}
	waiting := b.start(t, runs.Trigger{Definition: "gated"})
	b.waitNode(t, waiting, "gate", engine.NodeWaiting)

	list := b.get(b.owner, "/runs?status=failed")
	wantPage(t, "failed runs", list, http.StatusOK, `id="bulk-retry"`, `value="`+failed[0].String()+`"`)
	posted := b.post(b.owner, "/runs/batch", url.Values{"action": {"retry"},
		"run_id": {failed[0].String(), failed[1].String(), waiting.String()}, "filter": {"status=failed"}})
	wantRedirect(t, "bulk retry", posted, "/batches/")
	servertest.RunBatches(t, b.runs)
	wantPage(t, "finished batch", b.br(b.owner, posted.Location), http.StatusOK, "2 of 3 retried, 1 failed", waiting.String())
	for _, id := range failed[:2] {
		b.waitNodeWhere(t, id, "boom", "a second generation", func(n *engine.Node) bool { return n.Generation == 1 && n.State.Terminal() })
	}
	left := b.waitNode(t, failed[2], "boom", engine.NodeFailed)
	if left.Generation != 0 {
		t.Errorf("the run left out was retried: generation %d", left.Generation)
	}
	if r, _ := b.store.RunGet(t.Context(), b.tenant.ID, waiting); r.Status.Terminal() {
		t.Errorf("the waiting run is %s after a bulk retry", r.Status)
	}
}
