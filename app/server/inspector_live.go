package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/store"
)

// liveRun is what the inspector polls: the run's status and each step
// node's state, small enough to fetch every second.
type liveRun struct {
	Status          string              `json:"status"`
	Final           bool                `json:"final"`
	TransitionCount int64               `json:"transition_count"`
	Nodes           map[string]liveNode `json:"nodes"`
}

type liveNode struct {
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
	Waiting string `json:"waiting,omitempty"`
}

// handleInspectorLive answers the run's current status and node states.
func handleInspectorLive(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), viewerOf(c)
		id, err := pathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		run, err := s.RunGet(ctx, v.Tenant.ID, id)
		if err != nil {
			return err
		}
		nodes, err := s.RunNodesSteps(ctx, run.TenantID, run.ID)
		if err != nil {
			return err
		}
		out := liveRun{Status: string(run.Status), Final: run.Status.Terminal(), TransitionCount: run.TransitionCount, Nodes: map[string]liveNode{}}
		for _, n := range nodes {
			ln := liveNode{State: string(n.State), Attempt: n.Attempt}
			if n.Waiting != nil {
				ln.Waiting = string(n.Waiting.Type)
			}
			out.Nodes[n.ID] = ln
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, out)
	}
}
