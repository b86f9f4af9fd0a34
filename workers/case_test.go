package workers_test

import (
	"testing"
	"time"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// A case moves through statuses; only the awaited one resumes the node,
// with the case data as output; data must match the fields schema.
func TestHumanLoopStatusFlowAndTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: hl
steps:
  - ref: review
    type: human_loop
    with:
      title: Review
      assignees: [ "Ops@Example.com" ]
      fields: { type: object, properties: { score: { type: integer, minimum: 1 } }, required: [ score ] }
      timeout: 24h
      on_timeout: skip
`)
	id := b.start(t, "hl", nil)
	b.waitNode(t, id, "review", engine.NodeWaiting)
	cs, err := b.store.CasesFor(b.ctx, b.tenant.ID, "ops@example.com", nil, store.CaseOpen)
	if err != nil || len(cs) != 1 {
		t.Fatalf("cases %v %v", cs, err)
	}
	status := func(s string) *string { return &s }
	_, err = b.coord.Runs.UpdateCase(b.ctx, b.tenant.ID, cs[0].ID, runs.CaseChange{Status: status("resolved"), Data: map[string]any{"score": 0}})
	wantCode(t, err, apperr.Unprocessable)
	if _, err := b.coord.Runs.UpdateCase(b.ctx, b.tenant.ID, cs[0].ID, runs.CaseChange{Status: status("in_progress"), Data: map[string]any{"score": 2}}); err != nil {
		t.Fatal(err)
	}
	b.waitEventsDrained(t, id)
	if run, _ := b.store.RunGet(b.ctx, b.tenant.ID, id); run.Status != engine.RunWaiting {
		t.Fatalf("run %s after a status that is not awaited", run.Status)
	}
	if _, err := b.coord.Runs.UpdateCase(b.ctx, b.tenant.ID, cs[0].ID, runs.CaseChange{Status: status("resolved")}); err != nil {
		t.Fatal(err)
	}
	if out := b.finish(t, id, engine.RunSucceeded)["review"].Output; out.(map[string]any)["score"] != int64(2) {
		t.Errorf("output %v", out)
	}

	timedOut := b.start(t, "hl", nil)
	b.waitNode(t, timedOut, "review", engine.NodeWaiting)
	b.shift(t, 24*time.Hour+time.Second)
	if n := b.finish(t, timedOut, engine.RunSucceeded)["review"]; n.State != engine.NodeSkipped {
		t.Errorf("timed out node %s, want skipped", n.State)
	}
	cs, _ = b.store.CasesOfRun(b.ctx, b.tenant.ID, timedOut)
	_, err = b.coord.Runs.UpdateCase(b.ctx, b.tenant.ID, cs[0].ID, runs.CaseChange{Status: status("resolved"), Data: map[string]any{"score": 3}})
	wantCode(t, err, apperr.Conflict)
}
