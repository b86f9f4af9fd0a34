package server

import (
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/store"
)

// schedulePatch changes what it sets; an owned schedule (declared by its
// definition) takes only paused and note.
type schedulePatch struct {
	Version        *int               `json:"version"`
	Spec           *schedule.Spec     `json:"spec"`
	Input          *any               `json:"input"`
	Overlap        *string            `json:"overlap"`
	CatchupWindow  *schedule.Duration `json:"catchup_window"`
	PauseOnFailure *bool              `json:"pause_on_failure"`
	Paused         *bool              `json:"paused"`
	Note           *string            `json:"note"`
}

// handleScheduleUpdate pauses or unpauses a schedule (with a note) or
// changes its spec and settings.
func handleScheduleUpdate(s *store.Store, rs *runs.Service, validate runs.InputValidator) echo.HandlerFunc {
	return func(c echo.Context) error {
		var p schedulePatch
		if err := bindJSON(c, &p); err != nil {
			return err
		}
		out, err := rs.Schedules.Update(c.Request().Context(), tenantOf(c), c.Param("id"), p.apply, validate)
		if err != nil {
			return err
		}
		if err := auditAPI(c, s, p.action(), out.ID, p.details()); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, scheduleJSON(out))
	}
}

func (p schedulePatch) apply(sc *store.Schedule) error {
	if sc.Owned && !reflect.DeepEqual(p, schedulePatch{Paused: p.Paused, Note: p.Note}) {
		return apperr.New(apperr.Conflict, "schedule %s is declared by definition %s: change it in the document (only paused and note change here)", sc.ID, sc.Definition)
	}
	if p.Overlap != nil {
		o, err := schedule.ParseOverlap(*p.Overlap)
		if err != nil {
			return apperr.New(apperr.Invalid, "%v", err)
		}
		sc.Overlap = o
	}
	if p.CatchupWindow != nil {
		if p.CatchupWindow.D() < time.Second {
			return apperr.New(apperr.Invalid, "catchup_window must be at least 1s")
		}
		sc.CatchupWindow = p.CatchupWindow.D()
	}
	set(&sc.Version, p.Version)
	set(&sc.Spec, p.Spec)
	set(&sc.Input, p.Input)
	set(&sc.PauseOnFailure, p.PauseOnFailure)
	set(&sc.Note, p.Note)
	if p.Paused != nil {
		sc.Paused = *p.Paused
		if !sc.Paused && p.Note == nil {
			sc.Note = ""
		}
	}
	return nil
}

// action is how the audit log names the change: a pause or a resume
// alone, or an update.
func (p schedulePatch) action() string {
	if p.Paused != nil && reflect.DeepEqual(p, schedulePatch{Paused: p.Paused, Note: p.Note}) {
		if *p.Paused {
			return store.AuditSchedulePause
		}
		return store.AuditScheduleResume
	}
	return store.AuditScheduleUpdate
}

// details names the fields the change set, for the audit log.
func (p schedulePatch) details() map[string]any {
	out := map[string]any{}
	v := reflect.ValueOf(p)
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			out[jsonName(v.Type().Field(i))] = true
		}
	}
	return map[string]any{"set": out}
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// handleScheduleTrigger takes one action now: 200 with the action (its
// run, or buffered, or skipped under the overlap policy).
func handleScheduleTrigger(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			Overlap string `json:"overlap"`
		}
		if err := bindJSON(c, &req); err != nil {
			return err
		}
		o, err := optionalOverlap(req.Overlap)
		if err != nil {
			return err
		}
		a, err := rs.Schedules.Trigger(c.Request().Context(), tenantOf(c), c.Param("id"), o)
		if err != nil {
			return err
		}
		if err := auditAPI(c, s, store.AuditScheduleTrigger, c.Param("id"), map[string]any{"action": a}); err != nil {
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
// a request of its rate (see chargeBackfill).
func handleScheduleBackfill(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			From    *time.Time `json:"from"`
			To      *time.Time `json:"to"`
			Overlap string     `json:"overlap"`
		}
		if err := bindJSON(c, &req); err != nil {
			return err
		}
		if req.From == nil || req.To == nil {
			return apperr.New(apperr.Invalid, "from and to are required (RFC 3339 times)")
		}
		o, err := optionalOverlap(req.Overlap)
		if err != nil {
			return err
		}
		if err := chargeBackfill(c, s, *req.From, *req.To); err != nil {
			return err
		}
		acts, err := rs.Schedules.Backfill(c.Request().Context(), tenantOf(c), c.Param("id"), *req.From, *req.To, o)
		if err != nil {
			return err
		}
		details := map[string]any{"from": *req.From, "to": *req.To, "actions": len(acts)}
		if err := auditAPI(c, s, store.AuditScheduleBackfill, c.Param("id"), details); err != nil {
			return err
		}
		if acts == nil {
			acts = []store.ScheduleAction{}
		}
		return c.JSON(http.StatusOK, map[string]any{"actions": acts})
	}
}
