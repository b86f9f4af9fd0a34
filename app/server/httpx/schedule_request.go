package httpx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/store"
)

// ScheduleRequest is a new schedule, from the API or the schedules page.
type ScheduleRequest struct {
	ID             string             `json:"id"`
	Definition     string             `json:"definition"`
	Version        int                `json:"version"`
	Spec           schedule.Spec      `json:"spec"`
	Input          any                `json:"input"`
	Overlap        string             `json:"overlap"`
	CatchupWindow  *schedule.Duration `json:"catchup_window"`
	PauseOnFailure bool               `json:"pause_on_failure"`
	Paused         bool               `json:"paused"`
	Note           string             `json:"note"`
}

// Schedule checks the request and makes it a schedule.
func (r ScheduleRequest) Schedule() (store.Schedule, error) {
	if r.Definition == "" {
		return store.Schedule{}, apperr.New(apperr.Invalid, "definition is required")
	}
	if r.ID == "" {
		r.ID = r.Definition + "-" + randomSuffix()
	}
	if !definition.IDPattern.MatchString(r.ID) {
		return store.Schedule{}, apperr.New(apperr.Invalid, "id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}, not %q", r.ID)
	}
	o, err := schedule.ParseOverlap(r.Overlap)
	if err != nil {
		return store.Schedule{}, apperr.New(apperr.Invalid, "%v", err)
	}
	catchup := schedule.DefaultCatchupWindow
	if r.CatchupWindow != nil {
		catchup = r.CatchupWindow.D()
	}
	if catchup < time.Second {
		return store.Schedule{}, apperr.New(apperr.Invalid, "catchup_window must be at least 1s")
	}
	return store.Schedule{
		ID: r.ID, Definition: r.Definition, Version: r.Version, Spec: r.Spec, Input: r.Input, Overlap: o,
		CatchupWindow: catchup, PauseOnFailure: r.PauseOnFailure, Paused: r.Paused, Note: r.Note,
	}, nil
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// DeleteSchedule deletes a schedule made through the API or the
// dashboard; one its definition declares is refused.
func DeleteSchedule(ctx context.Context, s *store.Store, tenantID uuid.UUID, id string) error {
	sc, err := s.ScheduleGet(ctx, tenantID, id)
	if err != nil {
		return err
	}
	if sc.Owned {
		return apperr.New(apperr.Conflict, "schedule %s is declared by definition %s: remove it from the document's triggers", sc.ID, sc.Definition)
	}
	return s.ScheduleDelete(ctx, sc.TenantID, sc.ID)
}

// SchedulePatch changes what it sets; an owned schedule (declared by its
// definition) takes only paused and note.
type SchedulePatch struct {
	Version        *int               `json:"version"`
	Spec           *schedule.Spec     `json:"spec"`
	Input          *any               `json:"input"`
	Overlap        *string            `json:"overlap"`
	CatchupWindow  *schedule.Duration `json:"catchup_window"`
	PauseOnFailure *bool              `json:"pause_on_failure"`
	Paused         *bool              `json:"paused"`
	Note           *string            `json:"note"`
}

// Apply changes sc as the patch says.
func (p SchedulePatch) Apply(sc *store.Schedule) error {
	if sc.Owned && !reflect.DeepEqual(p, SchedulePatch{Paused: p.Paused, Note: p.Note}) {
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

// Action is how the audit log names the change: a pause or a resume
// alone, or an update.
func (p SchedulePatch) Action() string {
	if p.Paused != nil && reflect.DeepEqual(p, SchedulePatch{Paused: p.Paused, Note: p.Note}) {
		if *p.Paused {
			return store.AuditSchedulePause
		}
		return store.AuditScheduleResume
	}
	return store.AuditScheduleUpdate
}

// Details names the fields the change set, for the audit log.
func (p SchedulePatch) Details() map[string]any {
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
