package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// nightlyDoc declares a schedule and an event trigger.
const nightlyDoc = "key: nightly\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\n" +
	"triggers:\n  - schedule: {id: nightly-report, cron: '30 2 * * *'}\n  - {event: stock.low}\n"

// A definition's page lists the schedules that start it, declared in its
// document or not, each with its spec, next time in UTC, state and a
// link to its page and to the runs it started; the schedule's page links
// back to the definition. The event trigger's count links to its runs.
func TestDefinitionPageListsItsSchedules(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	ctx := context.Background()
	testdb.Definition(t, f.Store, f.a.ID, nightlyDoc)
	base := "/t/" + f.a.Slug
	if a := f.request(f.alice, "POST", base+"/schedules", url.Values{"id": {"nightly-extra"}, "definition": {"nightly"}, "interval": {"2h"}}, nil); a.Status != http.StatusSeeOther {
		t.Fatalf("create a schedule = %d %s", a.Status, a.Body)
	}
	if a := f.request(f.alice, "POST", base+"/schedules/nightly-extra/pause", url.Values{"paused": {"true"}, "note": {"not yet"}}, nil); a.Status != http.StatusSeeOther {
		t.Fatalf("pause = %d", a.Status)
	}
	if _, _, err := f.runs.Events.Publish(ctx, store.Event{TenantID: f.a.ID, Name: "stock.low", Data: map[string]any{}}); err != nil {
		t.Fatal(err)
	}

	page := f.request(f.victor, "GET", base+"/definitions/nightly/edit", nil, nil)
	if page.Status != http.StatusOK {
		t.Fatalf("the definition page = %d", page.Status)
	}
	section := between(page.Body, `id="definition-schedules"`, "</table>")
	for _, want := range []string{
		`href="` + base + `/schedules/nightly-report"`, "30 2 * * *", "in the document", `class="status ok">active`,
		`href="` + base + `/schedules/nightly-extra"`, "every 2h", "API or dashboard", `class="status warn" title="not yet">paused`, "none while paused",
		`href="` + base + `/runs?definition=nightly&amp;attr.schedule_id=nightly-report"`,
	} {
		if !strings.Contains(section, want) {
			t.Errorf("the definition's schedules lack %q:\n%s", want, section)
		}
	}
	if !regexp.MustCompile(`\d{4}-\d\d-\d\d 02:30 UTC`).MatchString(section) {
		t.Errorf("the declared schedule's next run is not at 02:30 UTC:\n%s", section)
	}
	if strings.Contains(section, "sched-a") {
		t.Error("the definition page lists another definition's schedule")
	}
	if page := f.request(f.victor, "GET", base+"/definitions/spare/edit", nil, nil); strings.Contains(page.Body, `id="definition-schedules"`) {
		t.Error("a definition with no schedule shows a schedules table")
	}
	if page := f.request(f.victor, "GET", base+"/schedules/nightly-report", nil, nil); !strings.Contains(page.Body, `id="schedule-definition" href="`+base+`/definitions/nightly/edit"`) {
		t.Error("the declared schedule's page does not link its definition")
	}

	// The event trigger's count of started runs links to them.
	runsURL := base + "/runs?definition=nightly&attr.event=stock.low"
	events := between(page.Body, `id="event-triggers"`, "</table>")
	if !strings.Contains(events, `href="`+strings.ReplaceAll(runsURL, "&", "&amp;")+`"`) {
		t.Fatalf("the event trigger's count is not a link to its runs:\n%s", events)
	}
	list := f.request(f.victor, "GET", runsURL, nil, nil)
	if list.Status != http.StatusOK || strings.Count(list.Body, `<tr data-run=`) != 1 {
		t.Errorf("the event trigger's runs = %d, %d rows", list.Status, strings.Count(list.Body, `<tr data-run=`))
	}
	if !strings.Contains(between(list.Body, `id="attr-filters"`, "</p>"), "event = stock.low") {
		t.Error("the runs list does not say it keeps the runs of the event")
	}
}

// The definitions list shows each definition's newest run: its status
// linking to it, and when it started; one that never ran says so.
func TestDefinitionsListShowsTheLastRun(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	ctx := context.Background()
	newer, _, err := f.runs.Start(ctx, runs.Trigger{TenantID: f.a.ID, Definition: "orders", Input: map[string]any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := f.request(f.victor, "GET", "/t/"+f.a.Slug+"/definitions", nil, nil)
	if a.Status != http.StatusOK || !strings.Contains(a.Body, "<th>Last run</th>") {
		t.Fatalf("definitions = %d", a.Status)
	}
	orders := between(a.Body, `data-definition="orders"`, "</tr>")
	last := between(orders, `class="last-run"`, "</td>")
	want := `href="/t/` + f.a.Slug + `/runs/` + newer.ID.String() + `"`
	if !strings.Contains(last, want) || !regexp.MustCompile(`class="status (pending|running|waiting)"`).MatchString(last) || !strings.Contains(last, " UTC") {
		t.Errorf("orders' last run cell is not the newest run %s:\n%s", newer.ID, last)
	}
	if strings.Contains(last, f.runA.ID.String()) {
		t.Error("orders' last run is the older run")
	}
	if spare := between(a.Body, `data-definition="spare"`, "</tr>"); !strings.Contains(spare, "never run") {
		t.Errorf("spare, never run, shows:\n%s", spare)
	}
	// Tenant B's runs of a definition of the same key are not A's.
	if b := f.request(f.bert, "GET", "/t/"+f.b.Slug+"/definitions", nil, nil); strings.Contains(b.Body, newer.ID.String()) {
		t.Error("tenant B's definitions list shows tenant A's run")
	}
}

// The diff counts its changed lines in good English and lays its columns
// out from a colgroup: narrow numbers, the code halves sharing the rest.
func TestDiffSaysHowManyLinesChanged(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug + "/definitions/spare"
	draft := func(doc string) {
		t.Helper()
		if a := f.request(f.alice, "POST", base+"/draft", url.Values{"document": {doc}}, nil); a.Status != http.StatusSeeOther {
			t.Fatalf("save the draft = %d", a.Status)
		}
	}
	spare := strings.Replace(ordersDraft, "key: orders", "key: spare", 1)
	draft(strings.Replace(spare, "builtin.noop", "builtin.echo", 1))
	one := f.request(f.victor, "GET", base+"/diff?from=1&to=draft", nil, nil)
	if one.Status != http.StatusOK || !strings.Contains(one.Body, ">1 changed line<") {
		t.Errorf("a diff of one line says %q", between(one.Body, `id="diff-summary"`, "</p>"))
	}
	if !strings.Contains(one.Body, `<colgroup><col class="ln"><col class="code"><col class="ln"><col class="code"></colgroup>`) {
		t.Error("the diff has no colgroup")
	}
	draft(strings.Replace(spare, "builtin.noop}}\n", "builtin.echo}}\n  - {ref: b, type: task, with: {handler: builtin.noop}}\n", 1) + "name: Spare\n")
	if more := f.request(f.victor, "GET", base+"/diff?from=1&to=draft", nil, nil); !strings.Contains(more.Body, ">3 changed lines<") {
		t.Errorf("a diff of three lines says %q", between(more.Body, `id="diff-summary"`, "</p>"))
	}
}

// between is s from the first from to the next to after it ("" without
// from).
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}
