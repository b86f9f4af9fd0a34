package api

import (
	"net/http"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/store"
)

// ScheduleJSON is a schedule as the API shows it. NextRunAt is when its
// next action is due (jitter included), null when none is left.
type ScheduleJSON struct {
	ID             string                 `json:"id"`
	Definition     string                 `json:"definition"`
	Version        int                    `json:"version"`
	Spec           schedule.Spec          `json:"spec"`
	Input          any                    `json:"input"`
	Overlap        string                 `json:"overlap"`
	CatchupWindow  string                 `json:"catchup_window"`
	PauseOnFailure bool                   `json:"pause_on_failure"`
	Paused         bool                   `json:"paused"`
	Note           string                 `json:"note"`
	Owned          bool                   `json:"owned"`
	NextRunAt      *time.Time             `json:"next_run_at"`
	Actions        int64                  `json:"actions"`
	Skipped        int64                  `json:"skipped"`
	Missed         int64                  `json:"missed"`
	LastError      string                 `json:"last_error,omitempty"`
	LastAction     *store.ScheduleAction  `json:"last_action,omitempty"`
	RecentActions  []store.ScheduleAction `json:"recent_actions,omitempty"`
	CreatedAt      time.Time              `json:"created_at"`
}

func scheduleJSON(sc store.Schedule) ScheduleJSON {
	return ScheduleJSON{
		ID: sc.ID, Definition: sc.Definition, Version: sc.Version, Spec: sc.Spec, Input: sc.Input,
		Overlap: string(sc.Overlap), CatchupWindow: schedule.Duration(sc.CatchupWindow).String(),
		PauseOnFailure: sc.PauseOnFailure, Paused: sc.Paused, Note: sc.Note, Owned: sc.Owned, NextRunAt: sc.DueAt,
		Actions: sc.Actions, Skipped: sc.Skipped, Missed: sc.Missed, LastError: sc.LastError, CreatedAt: sc.CreatedAt,
	}
}

// handleScheduleCreate creates a schedule: 201 with its next_run_at.
func handleScheduleCreate(s *store.Store, rs *runs.Service, validate runs.InputValidator) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req httpx.ScheduleRequest
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		sc, err := req.Schedule()
		if err != nil {
			return err
		}
		sc.TenantID = httpx.TenantOf(c)
		out, err := rs.Schedules.Create(c.Request().Context(), sc, validate)
		if err != nil {
			return err
		}
		if err := httpx.AuditAPI(c, s, store.AuditScheduleCreate, out.ID, map[string]any{"definition": out.Definition, "paused": out.Paused}); err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, scheduleJSON(out))
	}
}

// handleScheduleList lists the tenant's schedules by id.
func handleScheduleList(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		list, resp, err := httpx.KeyedPage(c, func(after string, n int) ([]store.Schedule, error) {
			return s.ScheduleList(c.Request().Context(), httpx.TenantOf(c), after, n)
		}, func(sc store.Schedule) string { return sc.ID })
		if err != nil {
			return err
		}
		out := make([]ScheduleJSON, len(list))
		for i, sc := range list {
			out[i] = scheduleJSON(sc)
		}
		resp["schedules"] = out
		return c.JSON(http.StatusOK, resp)
	}
}

// handleScheduleGet shows a schedule with its recent actions (the runs
// it started) and its last action's result.
func handleScheduleGet(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		sc, err := s.ScheduleGet(ctx, httpx.TenantOf(c), c.Param("id"))
		if err != nil {
			return err
		}
		out := scheduleJSON(sc)
		if out.RecentActions, err = s.ScheduleActionsRecent(ctx, sc.TenantID, sc.ID, 20); err != nil {
			return err
		}
		if len(out.RecentActions) > 0 {
			out.LastAction = &out.RecentActions[0]
		}
		return c.JSON(http.StatusOK, out)
	}
}

// handleScheduleDelete deletes a schedule (its runs stay); a schedule its
// definition declares is removed from the document instead.
func handleScheduleDelete(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		if err := httpx.DeleteSchedule(c.Request().Context(), s, httpx.TenantOf(c), id); err != nil {
			return err
		}
		if err := httpx.AuditAPI(c, s, store.AuditScheduleDelete, id, nil); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"id": id, "deleted": true})
	}
}
