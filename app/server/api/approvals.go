package api

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// handleApprovalList lists the approvals visible to the caller: an API
// key acts for the tenant and sees all of them. ?status= filters. Each
// decision's comment is a preview (see store.CommentPreview):
// GET /approvals/{id} has it whole.
func handleApprovalList(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit, err := httpx.LimitParam(c)
		if err != nil {
			return err
		}
		list, err := s.ApprovalList(c.Request().Context(), httpx.TenantOf(c), store.ApprovalFilter{
			Status: c.QueryParam("status"), Limit: limit,
		})
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"approvals": list})
	}
}

// handleApprovalGet shows one approval, its decisions' comments whole.
func handleApprovalGet(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "approval")
		if err != nil {
			return err
		}
		a, err := s.ApprovalGet(c.Request().Context(), httpx.TenantOf(c), id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, a)
	}
}

type decisionRequest struct {
	Decision string `json:"decision"`
	Comment  string `json:"comment"`
}

// handleApprovalDecision records the key's decision, shown as by
// key:NAME, on an approval that names the key among its approvers: 200
// with the approval; 403 when it does not name the key; 409 once decided,
// when a key of this name already decided, or when the key's maker did
// (as a person or by another key: see store.DeciderPrincipal); 422 for a
// comment over store.MaxCommentBytes.
func handleApprovalDecision(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "approval")
		if err != nil {
			return err
		}
		var req decisionRequest
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if req.Decision != "approve" && req.Decision != "reject" {
			return apperr.New(apperr.Invalid, `decision must be "approve" or "reject"`)
		}
		p, _ := httpx.PrincipalOf(c)
		a, err := rs.DecideApproval(c.Request().Context(), httpx.TenantOf(c), id, store.Decision{
			By: store.DeciderKey(p.Key), Principal: store.DeciderPrincipal(p.Key), Approved: req.Decision == "approve", Comment: req.Comment,
			Who: store.KeyAudience(p.Key),
		})
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, a)
	}
}
