package pages_test

import (
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/server/servertest"
	"github.com/ductor/ductor/app/store"
)

// "Upgrade running runs" of a version shows the dry run's counts before
// the button; the button starts the batch, which moves the runs.
func TestUpgradeRunningRunsPage(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, "key: up\nsteps:\n  - {ref: gate, type: signal, with: {name: go}}\n")
	ids := []string{}
	for range 3 {
		id := b.start(t, runs.Trigger{Definition: "up"})
		b.waitNode(t, id, "gate", engine.NodeWaiting)
		ids = append(ids, id.String())
	}
	b.publish(t, "key: up\nsteps:\n  - {ref: gate, type: signal, with: {name: go}}\n  - {ref: after, type: transform, with: {expr: '1'}}\nedges: [{from: gate, to: after}]\n")

	wantPage(t, "the editor", b.get(b.owner, "/definitions/up/edit"), 200, "/definitions/up/versions/2/upgrade")
	page := b.get(b.owner, "/definitions/up/versions/2/upgrade")
	wantPage(t, "the upgrade page", page, 200, `data-outcome="would_upgrade"><td>Would be upgraded</td><td>3</td>`, "Upgrade 3 runs")
	wantPage(t, "the viewer's upgrade page", b.get(b.viewer, "/definitions/up/versions/2/upgrade"), 200, "Would be upgraded")
	if a := b.post(b.viewer, "/definitions/up/versions/2/upgrade", nil); a.Status != 403 {
		t.Errorf("a viewer upgraded runs: %d", a.Status)
	}
	a := b.post(b.owner, "/definitions/up/versions/2/upgrade", nil)
	wantRedirect(t, "the upgrade", a, "/batches/")
	servertest.RunBatches(t, b.runs)
	for _, id := range ids {
		r := b.waitRun(t, mustUUID(t, id), "on version 2", func(r store.Run) bool { return r.DefinitionVersion == 2 })
		if r.Status.Terminal() {
			t.Errorf("run %s ended: %s", id, r.Status)
		}
	}
	wantPage(t, "the upgrade page again", b.get(b.owner, "/definitions/up/versions/2/upgrade"), 200, `data-outcome="noop"><td>Already on this version</td><td>3</td>`)
}
