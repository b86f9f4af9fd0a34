package api

import (
	"net/http"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/store"
)

// handleScheduleUpdate pauses or unpauses a schedule (with a note) or
// changes its spec and settings.
func handleScheduleUpdate(s *store.Store, rs *runs.Service, validate runs.InputValidator) echo.HandlerFunc {
	return func(c echo.Context) error {
		var p httpx.SchedulePatch
		if err := httpx.BindJSON(c, &p); err != nil {
			return err
		}
		out, err := rs.Schedules.Update(c.Request().Context(), httpx.TenantOf(c), c.Param("id"), p.Apply, validate)
		if err != nil {
			return err
		}
		if err := httpx.AuditAPI(c, s, p.Action(), out.ID, p.Details()); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, scheduleJSON(out))
	}
}

// handleScheduleTrigger takes one action now: 200 with the action (its
// run, or buffered, or skipped under the overlap policy).
func handleScheduleTrigger(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			Overlap string `json:"overlap"`
		}
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		o, err := optionalOverlap(req.Overlap)
		if err != nil {
			return err
		}
		a, err := rs.Schedules.Trigger(c.Request().Context(), httpx.TenantOf(c), c.Param("id"), o)
		if err != nil {
			return err
		}
		if err := httpx.AuditAPI(c, s, store.AuditScheduleTrigger, c.Param("id"), map[string]any{"action": a}); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"action": a})
	}
}

func optionalOverlap(s string) (schedule.Overlap, error) {
	if s == "" {
		return "", nil
	}
	o, err := schedule.ParseOverlap(s)
	if err != nil {
		return "", apperr.New(apperr.Invalid, "%v", err)
	}
	return o, nil
}

// handleScheduleBackfill takes the actions of the schedule's times in
// [from, to): 200 with each action. Each time of the range costs the key
// a request of its rate (see httpx.ChargeBackfill).
func handleScheduleBackfill(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			From    *time.Time `json:"from"`
			To      *time.Time `json:"to"`
			Overlap string     `json:"overlap"`
		}
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if req.From == nil || req.To == nil {
			return apperr.New(apperr.Invalid, "from and to are required (RFC 3339 times)")
		}
		o, err := optionalOverlap(req.Overlap)
		if err != nil {
			return err
		}
		if err := httpx.ChargeBackfill(c, s, *req.From, *req.To); err != nil {
			return err
		}
		acts, err := rs.Schedules.Backfill(c.Request().Context(), httpx.TenantOf(c), c.Param("id"), *req.From, *req.To, o)
		if err != nil {
			return err
		}
		details := map[string]any{"from": *req.From, "to": *req.To, "actions": len(acts)}
		if err := httpx.AuditAPI(c, s, store.AuditScheduleBackfill, c.Param("id"), details); err != nil {
			return err
		}
		if acts == nil {
			acts = []store.ScheduleAction{}
		}
		return c.JSON(http.StatusOK, map[string]any{"actions": acts})
	}
}
