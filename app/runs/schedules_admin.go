package runs

import (
	"context"
	"reflect"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/store"
)

// MaxBackfill bounds the actions one backfill takes.
const MaxBackfill = 1000

// CreateSchedule stores a new schedule of a published definition, its
// first time planned from the database's clock. validate, when set,
// checks the schedule's input against the definition's input schema.
func (c *Schedules) Create(ctx context.Context, sc store.Schedule, validate InputValidator) (store.Schedule, error) {
	plan, err := c.checkSchedule(ctx, sc, validate)
	if err != nil {
		return store.Schedule{}, err
	}
	var out store.Schedule
	err = store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		now, err := s.Now(ctx)
		if err != nil {
			return err
		}
		sc.PlanFrom(plan, now)
		out, err = s.ScheduleCreate(ctx, sc)
		return err
	})
	return out, err
}

// checkSchedule checks the spec, that the definition is published, and
// the input.
func (c *Schedules) checkSchedule(ctx context.Context, sc store.Schedule, validate InputValidator) (*schedule.Schedule, error) {
	plan, err := sc.Compiled()
	if err != nil {
		return nil, apperr.Wrap(err, apperr.Unprocessable, "spec."+err.Error())
	}
	s := store.New(c.pool)
	v, err := c.w.Version(ctx, s, sc.TenantID, sc.Definition, sc.Version)
	if err != nil {
		return nil, err
	}
	if validate != nil && len(v.Manifest.InputSchema) > 0 {
		if err := validate(v.Manifest.InputSchema, sc.Input); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// UpdateSchedule applies change to a schedule under its lock. A changed
// spec, or an unpause, plans the next time afresh from now: a paused
// schedule does not make up for the actions it did not take.
func (c *Schedules) Update(ctx context.Context, tenantID uuid.UUID, id string, change func(*store.Schedule) error, validate InputValidator) (store.Schedule, error) {
	var out store.Schedule
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		before, err := s.ScheduleLock(ctx, tenantID, id)
		if err != nil {
			return err
		}
		after := before
		if err := change(&after); err != nil {
			return err
		}
		plan, err := after.Compiled()
		if err != nil {
			return apperr.Wrap(err, apperr.Unprocessable, "spec."+err.Error())
		}
		// Pausing or a new note needs no published definition; what the
		// runs start with does.
		if before.Version != after.Version || !reflect.DeepEqual(before.Input, after.Input) {
			if _, err := c.checkSchedule(ctx, after, validate); err != nil {
				return err
			}
		}
		if !reflect.DeepEqual(before.Spec, after.Spec) || (before.Paused && !after.Paused) {
			now, err := s.Now(ctx)
			if err != nil {
				return err
			}
			after.PlanFrom(plan, now)
		}
		out, err = s.ScheduleSave(ctx, after)
		return err
	})
	return out, err
}

// TriggerSchedule takes one action of the schedule now (by the database's
// clock) under the overlap policy o (empty: the schedule's own), paused
// or not.
func (c *Schedules) Trigger(ctx context.Context, tenantID uuid.UUID, id string, o schedule.Overlap) (store.ScheduleAction, error) {
	var out store.ScheduleAction
	err := c.withPass(ctx, tenantID, id, func(p *schedulePass, now time.Time) error {
		var err error
		out, err = c.act(ctx, p, now, SourceTrigger, orOverlap(o, p.sc.Overlap))
		return err
	})
	return out, err
}

// BackfillSchedule takes the actions of the schedule's nominal times in
// [from, to) under the overlap policy o (empty: the schedule's own),
// whatever the catchup window; a time already acted on starts nothing.
func (c *Schedules) Backfill(ctx context.Context, tenantID uuid.UUID, id string, from, to time.Time, o schedule.Overlap) ([]store.ScheduleAction, error) {
	if !to.After(from) {
		return nil, apperr.New(apperr.Invalid, "to must be after from")
	}
	var out []store.ScheduleAction
	err := c.withPass(ctx, tenantID, id, func(p *schedulePass, _ time.Time) error {
		plan, err := p.sc.Compiled()
		if err != nil {
			return err
		}
		times, more := plan.Between(from, to, MaxBackfill)
		if more {
			return apperr.New(apperr.Unprocessable, "the range holds more than %d actions: backfill it in parts", MaxBackfill)
		}
		for _, t := range times {
			a, err := c.act(ctx, p, t, SourceBackfill, orOverlap(o, p.sc.Overlap))
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	return out, err
}

// withPass runs fn on a schedule locked for a pass, then records it.
func (c *Schedules) withPass(ctx context.Context, tenantID uuid.UUID, id string, fn func(*schedulePass, time.Time) error) error {
	return store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		sc, err := s.ScheduleLock(ctx, tenantID, id)
		if err != nil {
			return err
		}
		now, err := s.Now(ctx)
		if err != nil {
			return err
		}
		p, err := c.openPass(ctx, tx, sc)
		if err != nil {
			return err
		}
		if err := fn(p, now); err != nil {
			return err
		}
		return c.closePass(ctx, p)
	})
}

func orOverlap(o, def schedule.Overlap) schedule.Overlap {
	if o == "" {
		return def
	}
	return o
}
