package workers_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

const approvalDoc = `
key: approve
steps:
  - { ref: ok, type: approval, with: { approvers: [ "Ann@Example.com", "role:finance" ], title: Pay, description: Pay the invoice, min_approvals: %d %s } }
  - { ref: yes, type: transform, with: { expr: '"yes"' } }
  - { ref: no, type: transform, with: { expr: '"no"' } }
edges:
  - { from: ok, to: yes, on: approved }
  - { from: ok, to: no, on: rejected }
`

// openApproval starts a run of the approval document and returns the run
// and its pending approval.
func (b testBundle) openApproval(t *testing.T, min int, extra string) (uuid.UUID, store.Approval) {
	t.Helper()
	b.publishYAML(t, sprintf(approvalDoc, min, extra))
	id := b.start(t, "approve", nil)
	n := b.waitNode(t, id, "ok", engine.NodeWaiting)
	if n.Waiting.Type != engine.WaitApproval {
		t.Fatalf("waiting %+v", n.Waiting)
	}
	as, err := b.store.ApprovalsOfRun(b.ctx, b.tenant.ID, id)
	if err != nil || len(as) != 1 {
		t.Fatalf("approvals %v %v", as, err)
	}
	return id, as[0]
}

func (b testBundle) decide(id uuid.UUID, by string, approved bool) error {
	_, err := b.coord.Runs.DecideApproval(b.ctx, b.tenant.ID, id, store.Decision{
		By: by, Approved: approved, Comment: "by " + by, Who: store.Audience(by, "finance"),
	})
	return err
}

func TestApprovalApproveAndReject(t *testing.T) {
	t.Parallel()
	for _, approved := range []bool{true, false} {
		b := setup(t)
		id, a := b.openApproval(t, 1, "")
		if a.Status != store.ApprovalPending || a.Title != "Pay" || a.Approvers[0] != "ann@example.com" {
			t.Fatalf("approval %+v", a)
		}
		if err := b.decide(a.ID, "ann@example.com", approved); err != nil {
			t.Fatal(err)
		}
		nodes := b.finish(t, id, engine.RunSucceeded)
		want, dead := "yes", "no"
		if !approved {
			want, dead = "no", "yes"
		}
		if nodes[want].State != engine.NodeSucceeded || nodes[dead].State != engine.NodeSkipped {
			t.Errorf("approved=%v: %s %s, %s %s", approved, want, nodes[want].State, dead, nodes[dead].State)
		}
		out := nodes["ok"].Output.(map[string]any)
		if out["by"] != "ann@example.com" || out["comment"] != "by ann@example.com" {
			t.Errorf("output %v", out)
		}
		wantCode(t, b.decide(a.ID, "bob@example.com", true), apperr.Conflict)
		got, _ := b.store.ApprovalGet(b.ctx, b.tenant.ID, a.ID)
		if len(got.Decisions) != 1 || got.DecidedAt == nil {
			t.Errorf("decisions %+v decided_at %v", got.Decisions, got.DecidedAt)
		}
	}
}

// min_approvals counts distinct people: one person approving twice is
// refused, a second person completes it.
func TestApprovalMinApprovalsCountsPeople(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id, a := b.openApproval(t, 2, "")
	if err := b.decide(a.ID, "ann@example.com", true); err != nil {
		t.Fatal(err)
	}
	wantCode(t, b.decide(a.ID, "ann@example.com", true), apperr.Conflict)
	if got, _ := b.store.ApprovalGet(b.ctx, b.tenant.ID, a.ID); got.Status != store.ApprovalPending {
		t.Fatalf("after one approval: %s", got.Status)
	}
	if err := b.decide(a.ID, "cfo@example.com", true); err != nil {
		t.Fatal(err)
	}
	nodes := b.finish(t, id, engine.RunSucceeded)
	if nodes["yes"].State != engine.NodeSucceeded {
		t.Errorf("yes %s", nodes["yes"].State)
	}
	if got, _ := b.store.ApprovalGet(b.ctx, b.tenant.ID, a.ID); got.Status != store.ApprovalApproved || len(got.Decisions) != 2 {
		t.Errorf("approval %s with %d decisions", got.Status, len(got.Decisions))
	}
}

// Each on_timeout policy, after a 48-hour timeout passed by moving the
// clock; the approval is withdrawn and refuses late decisions.
func TestApprovalTimeoutPolicies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		run    engine.RunStatus
		ok     engine.NodeState
		yes    engine.NodeState
	}{
		{"fail", engine.RunFailed, engine.NodeFailed, engine.NodeSkipped},
		{"approve", engine.RunSucceeded, engine.NodeSucceeded, engine.NodeSucceeded},
		{"skip", engine.RunSucceeded, engine.NodeSkipped, engine.NodeSkipped},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			id, a := b.openApproval(t, 1, ", timeout: 48h, on_timeout: "+tc.policy)
			if a.ExpiresAt == nil || time.Until(*a.ExpiresAt) < 47*time.Hour {
				t.Fatalf("expires at %v", a.ExpiresAt)
			}
			b.shift(t, 48*time.Hour+time.Second)
			nodes := b.finish(t, id, tc.run)
			if nodes["ok"].State != tc.ok || nodes["yes"].State != tc.yes {
				t.Errorf("ok %s yes %s, want %s %s", nodes["ok"].State, nodes["yes"].State, tc.ok, tc.yes)
			}
			wantCode(t, b.decide(a.ID, "ann@example.com", true), apperr.Conflict)
			if got, _ := b.store.ApprovalGet(b.ctx, b.tenant.ID, a.ID); got.Status != store.ApprovalClosed {
				t.Errorf("approval %s, want closed", got.Status)
			}
		})
	}
}

// A person sees the approvals addressed to their email or their roles.
func TestApprovalsForAPerson(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, a := b.openApproval(t, 1, "")
	for _, tc := range []struct {
		email string
		roles []string
		n     int
	}{
		{"ann@example.com", nil, 1},
		{"zed@example.com", []string{"finance"}, 1},
		{"zed@example.com", []string{"viewer"}, 0},
	} {
		got, err := b.store.ApprovalsFor(b.ctx, b.tenant.ID, tc.email, tc.roles, store.ApprovalPending)
		if err != nil || len(got) != tc.n {
			t.Errorf("%s %v: %d approvals (%v), want %d", tc.email, tc.roles, len(got), err, tc.n)
		}
	}
	_, err := b.coord.Runs.DecideApproval(b.ctx, b.tenant.ID, a.ID, store.Decision{
		By: "zed@example.com", Approved: true, Who: store.Audience("zed@example.com", "viewer"),
	})
	wantCode(t, err, apperr.Forbidden)
}
