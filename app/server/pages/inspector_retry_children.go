package pages

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// retryChildrenMax bounds the children one "retry failed children"
// retries; the page offers the rest again.
const retryChildrenMax = 500

// handleRetryFailedChildrenForm retries every failed child of a scatter
// (node=REF), each as its own retry would (runs.Service.RetryNode), up to
// retryChildrenMax a post, and says how many it retried.
func handleRetryFailedChildrenForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		done := "retry-children"
		err := withRunID(c, func(id uuid.UUID) error {
			ref := c.FormValue("node")
			if ref == "" {
				return apperr.New(apperr.Invalid, "name the scatter whose failed children to retry (node)")
			}
			children, err := s.RunNodesChildrenFiltered(ctx, v.Tenant.ID, id, store.ChildFilter{
				Scatter: ref, After: -1, State: string(engine.NodeFailed), Limit: retryChildrenMax,
			})
			if err != nil {
				return err
			}
			if len(children) == 0 {
				done = "retry-children-none"
			}
			for i, ch := range children {
				if err := rs.RetryNode(ctx, v.Tenant.ID, id, ch.ID); err != nil {
					return fmt.Errorf("retry %s (after %d retried): %w", ch.ID, i, err)
				}
			}
			return nil
		})
		return afterAction(c, s, rs, err, done, views.ActionForm{})
	}
}
