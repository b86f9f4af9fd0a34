package server

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// maxReasonLength bounds the reason an operator gives for a cancel.
const maxReasonLength = 1000

// handleNodeCancel asks a run to cancel one running or waiting node:
// 202, or 409 when the run ended or the node has nothing to cancel.
func handleNodeCancel(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			Reason string `json:"reason"`
		}
		if err := bindJSON(c, &req); err != nil {
			return err
		}
		if utf8.RuneCountInString(req.Reason) > maxReasonLength {
			return apperr.New(apperr.Invalid, "reason is longer than %d characters", maxReasonLength)
		}
		id, err := pathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		if err := rs.CancelNode(c.Request().Context(), tenantOf(c), id, c.Param("node"), req.Reason); err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]string{"status": "accepted"})
	}
}

// handleNodeCancelForm is the inspector's "Cancel node": it cancels the
// running or waiting node the form names, with the reason typed (by
// default who cancelled it).
func handleNodeCancelForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := viewerOf(c)
		reason := strings.TrimSpace(c.FormValue("reason"))
		if reason == "" {
			reason = "by " + v.User.Email
		}
		err := withRunID(c, func(id uuid.UUID) error {
			if utf8.RuneCountInString(reason) > maxReasonLength {
				return apperr.New(apperr.Invalid, "the reason is longer than %d characters", maxReasonLength)
			}
			return rs.CancelNode(c.Request().Context(), v.Tenant.ID, id, c.FormValue("node"), reason)
		})
		return afterAction(c, s, rs, err, "cancel-node", views.ActionForm{})
	}
}
