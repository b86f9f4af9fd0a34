package views

import (
	"testing"

	"github.com/ductor/ductor/app/store"
)

func TestApprovalProgressInWords(t *testing.T) {
	t.Parallel()
	owner := store.ApprovalDecision{By: "user:ann@example.com", Approved: true}
	for _, c := range []struct {
		name string
		a    store.Approval
		want string
	}{
		{"nobody yet", store.Approval{Approvers: []string{"role:owner"}, MinApprovals: 2, Status: store.ApprovalPending},
			"0 of 2 approved · waiting for role:owner"},
		{"an owner approved", store.Approval{Approvers: []string{"role:owner"}, MinApprovals: 2, Status: store.ApprovalPending, Decisions: []store.ApprovalDecision{owner}},
			"1 of 2 approved · waiting for another member of role:owner"},
		{"a named approver approved", store.Approval{Approvers: []string{"ann@example.com", "bob@example.com", "role:admin"}, MinApprovals: 2, Status: store.ApprovalPending, Decisions: []store.ApprovalDecision{owner}},
			"1 of 2 approved · waiting for bob@example.com, another member of role:admin"},
		{"decided", store.Approval{Approvers: []string{"role:owner"}, MinApprovals: 1, Status: store.ApprovalApproved, Decisions: []store.ApprovalDecision{owner}},
			"1 of 1 approved"},
	} {
		if got := approvalProgress(c.a); got != c.want {
			t.Errorf("%s: approvalProgress = %q, want %q", c.name, got, c.want)
		}
	}
}
