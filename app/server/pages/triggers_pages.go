package pages

import (
	"net/http"
	"strings"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

func handleSchedulesPage(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error { return renderSchedules(c, s, http.StatusOK, "") }
}

func renderSchedules(c echo.Context, s *store.Store, status int, msg string) error {
	v := httpx.ViewerOf(c)
	list, err := s.ScheduleList(c.Request().Context(), v.Tenant.ID, "", httpx.MaxPage)
	if err != nil {
		return err
	}
	d := views.SchedulesData{Schedules: list, CanWrite: v.Can(auth.PermSchedulesWrite), Error: msg}
	return httpx.Render(c, status, views.SchedulesPage(shellFor(c, "Schedules", "triggers"), d))
}

// handleScheduleCreateForm creates a schedule from the page's form.
func handleScheduleCreateForm(s *store.Store, rs *runs.Service, validate runs.InputValidator) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc, err := scheduleFromForm(c)
		if err == nil {
			sc.TenantID = httpx.ViewerOf(c).Tenant.ID
			sc, err = rs.Schedules.Create(c.Request().Context(), sc, validate)
		}
		if err == nil {
			err = httpx.AuditAPI(c, s, store.AuditScheduleCreate, sc.ID, map[string]any{"definition": sc.Definition, "paused": sc.Paused})
		}
		if err != nil {
			return httpx.FormError(c, err, func(status int, msg string) error { return renderSchedules(c, s, status, msg) })
		}
		return seeOther(c, "/schedules/"+sc.ID)
	}
}

func scheduleFromForm(c echo.Context) (store.Schedule, error) {
	req := httpx.ScheduleRequest{
		ID: strings.TrimSpace(c.FormValue("id")), Definition: strings.TrimSpace(c.FormValue("definition")),
		Overlap: c.FormValue("overlap"),
		Spec:    schedule.Spec{Cron: strings.TrimSpace(c.FormValue("cron")), Timezone: strings.TrimSpace(c.FormValue("timezone"))},
	}
	if iv := strings.TrimSpace(c.FormValue("interval")); iv != "" {
		d, err := schedule.ParseDuration(iv)
		if err != nil {
			return store.Schedule{}, apperr.New(apperr.Invalid, "interval: %v", err)
		}
		req.Spec.Interval = schedule.Duration(d)
	}
	if in := strings.TrimSpace(c.FormValue("input")); in != "" {
		v, err := jsonvalue.Decode([]byte(in))
		if err != nil {
			return store.Schedule{}, apperr.New(apperr.Invalid, "input is not JSON: %v", err)
		}
		req.Input = v
	}
	return req.Schedule()
}

func handleSchedulePage(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		msg := ""
		if c.QueryParam("done") == "trigger" {
			if f, ok := httpx.TakeFlash(c, "/schedules/"+c.Param("id")); ok {
				msg = f.Notice
			}
		}
		return renderSchedule(c, s, http.StatusOK, msg)
	}
}

func renderSchedule(c echo.Context, s *store.Store, status int, msg string) error {
	v, ctx := httpx.ViewerOf(c), c.Request().Context()
	sc, err := s.ScheduleGet(ctx, v.Tenant.ID, c.Param("id"))
	if err != nil {
		return err
	}
	acts, err := s.ScheduleActionsRecent(ctx, sc.TenantID, sc.ID, 50)
	if err != nil {
		return err
	}
	d := views.ScheduleData{Schedule: sc, Actions: acts, CanWrite: v.Can(auth.PermSchedulesWrite), Message: msg}
	return httpx.Render(c, status, views.SchedulePage(shellFor(c, "Schedule "+sc.ID, "triggers"), d))
}

// handleSchedulePauseForm pauses (with the note) or unpauses.
func handleSchedulePauseForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		paused, note := c.FormValue("paused") == "true", strings.TrimSpace(c.FormValue("note"))
		p := httpx.SchedulePatch{Paused: &paused, Note: &note}
		if _, err := rs.Schedules.Update(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID, c.Param("id"), p.Apply, nil); err != nil {
			return err
		}
		if err := httpx.AuditAPI(c, s, p.Action(), c.Param("id"), p.Details()); err != nil {
			return err
		}
		return seeOther(c, "/schedules/"+c.Param("id"))
	}
}

// handleScheduleTriggerForm takes one action now and redirects to the
// schedule, which says what it did.
func handleScheduleTriggerForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		a, err := rs.Schedules.Trigger(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID, c.Param("id"), "")
		if err != nil {
			return err
		}
		if err := httpx.AuditAPI(c, s, store.AuditScheduleTrigger, c.Param("id"), map[string]any{"action": a}); err != nil {
			return err
		}
		msg := "Action at " + a.ScheduledAt.UTC().Format(time.RFC3339) + ": " + a.State
		if a.RunID != nil {
			msg += ", run " + a.RunID.String()
		}
		path := "/schedules/" + c.Param("id")
		httpx.SetFlash(c, path, httpx.Flash{Notice: msg})
		return seeOther(c, path+"?done=trigger")
	}
}

// handleScheduleDeleteForm deletes a schedule and goes back to the list.
func handleScheduleDeleteForm(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := httpx.DeleteSchedule(c.Request().Context(), s, httpx.ViewerOf(c).Tenant.ID, c.Param("id")); err != nil {
			return err
		}
		if err := httpx.AuditAPI(c, s, store.AuditScheduleDelete, c.Param("id"), nil); err != nil {
			return err
		}
		return seeOther(c, "/schedules")
	}
}
