package pages

import (
	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// The step panel of an approval step offers its Approve and Reject to
// whoever the inbox offers them to, and decides with the inbox's code
// (decideApproval); the redirect comes back to the panel.

// handleNodeApprovalForm records the viewer's decision on the run's
// approval the path names (…/runs/ID/approvals/APPROVAL), then shows the
// run again with the step's panel open; a refusal (not an approver,
// decided already) is shown on the panel's page.
func handleNodeApprovalForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := withRunID(c, func(runID uuid.UUID) error {
			id, err := approvalOfRun(c, s, runID)
			if err != nil {
				return err
			}
			return decideApproval(c, rs, id)
		})
		return afterAction(c, s, rs, err, c.FormValue("decision"), views.ActionForm{ApprovalComment: c.FormValue("comment")})
	}
}

// approvalOfRun is the approval the path names, when it belongs to the
// run; one of another run is NotFound.
func approvalOfRun(c echo.Context, s *store.Store, runID uuid.UUID) (uuid.UUID, error) {
	id, err := httpx.PathUUID(c, "approval", "approval")
	if err != nil {
		return uuid.Nil, err
	}
	a, err := s.ApprovalGet(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID, id)
	if err != nil {
		return uuid.Nil, err
	}
	if a.RunID != runID {
		return uuid.Nil, apperr.New(apperr.NotFound, "run has no approval %s", id)
	}
	return id, nil
}

// approvalDecider sets what the viewer may do with the step's approval,
// by the inbox's rules: one who decided it (or a key they made did) sees
// their decision; one who may approve, while it is pending and addressed
// to their email or role, may decide it.
func approvalDecider(v httpx.Viewer, d *views.NodeDetail) {
	if d.Approval == nil {
		return
	}
	a := *d.Approval
	d.MyDecision = myDecision(a, store.UserPrincipal(v.User.ID))
	d.CanDecide = d.MyDecision == nil && a.Status == store.ApprovalPending && v.Can(auth.PermApprove) &&
		store.Addressed(a.Approvers, store.Audience(v.User.Email, string(v.Role)))
}
