package usage

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

// Groupings of a tenant's use.
const (
	GroupByDay        = "day"
	GroupByDefinition = "definition"
)

// MaxRange is the longest period one read covers.
const MaxRange = 366 * 24 * time.Hour

// Report is a tenant's use over [From, To), in total and grouped.
type Report struct {
	From        time.Time               `json:"from"`
	To          time.Time               `json:"to"`
	GroupBy     string                  `json:"group_by"`
	Total       store.Usage             `json:"total"`
	Days        []store.UsageDay        `json:"-"`
	Definitions []store.UsageDefinition `json:"-"`
}

// CheckRange validates a period of whole UTC days.
func CheckRange(from, to time.Time, groupBy string) error {
	switch {
	case groupBy != GroupByDay && groupBy != GroupByDefinition:
		return apperr.New(apperr.Invalid, "group_by must be day or definition, not %q", groupBy)
	case !to.After(from):
		return apperr.New(apperr.Invalid, "to must be after from")
	case to.Sub(from) > MaxRange:
		return apperr.New(apperr.Invalid, "a usage period covers at most 366 days")
	}
	return nil
}

// Read is a tenant's use over [from, to) (whole UTC days), grouped by
// day or by definition.
func (s *Service) Read(ctx context.Context, tenantID uuid.UUID, from, to time.Time, groupBy string) (Report, error) {
	if err := CheckRange(from, to, groupBy); err != nil {
		return Report{}, err
	}
	r := Report{From: from, To: to, GroupBy: groupBy}
	steps, err := s.store().UsageTenantSteps(ctx, tenantID, from, to)
	if err != nil {
		return r, err
	}
	if groupBy == GroupByDay {
		r.Days, err = s.store().UsageTenantByDay(ctx, tenantID, from, to)
		at := map[time.Time]int{}
		for i, d := range r.Days {
			at[d.Day] = i
		}
		for _, st := range steps {
			if i, ok := at[st.Day]; ok {
				r.Days[i].AddSteps(st.StepType, st.StepTypeUsage)
			}
		}
		for _, d := range r.Days {
			r.Total = Add(r.Total, d.Usage)
		}
		return r, err
	}
	r.Definitions, err = s.store().UsageTenantByDefinition(ctx, tenantID, from, to)
	at := map[string]int{}
	for i, d := range r.Definitions {
		at[d.Definition] = i
	}
	for _, st := range steps {
		if i, ok := at[st.Definition]; ok {
			r.Definitions[i].AddSteps(st.StepType, st.StepTypeUsage)
		}
	}
	for _, d := range r.Definitions {
		r.Total = Add(r.Total, d.Usage)
	}
	return r, err
}

// Month is every tenant's use in the month of month.
func (s *Service) Month(ctx context.Context, month time.Time) ([]store.TenantUsage, error) {
	return s.store().UsageMonthAll(ctx, month)
}

// Add sums two usages.
func Add(a, b store.Usage) store.Usage {
	sum := store.Usage{
		RunsStarted: a.RunsStarted + b.RunsStarted, RunsSucceeded: a.RunsSucceeded + b.RunsSucceeded,
		RunsFailed: a.RunsFailed + b.RunsFailed, RunsCancelled: a.RunsCancelled + b.RunsCancelled,
		RunsTimedOut: a.RunsTimedOut + b.RunsTimedOut, RunsTerminated: a.RunsTerminated + b.RunsTerminated,
		Steps: a.Steps + b.Steps, StepMicros: a.StepMicros + b.StepMicros, Events: a.Events + b.Events,
		Signals: a.Signals + b.Signals, Webhooks: a.Webhooks + b.Webhooks, StoredBytes: a.StoredBytes + b.StoredBytes,
	}
	for _, u := range []store.Usage{a, b} {
		for t, n := range u.StepsByType {
			sum.AddSteps(t, n)
		}
	}
	return sum
}

// State is a tenant's quota state, for whoami and the usage page.
func (s *Service) State(ctx context.Context, tenantID uuid.UUID) (State, error) {
	return s.QuotaState(ctx, s.store(), tenantID)
}

// SetTier changes a tier's quotas.
func (s *Service) SetTier(ctx context.Context, tier store.Tier, c store.QuotaChange) error {
	if err := checkChange(c); err != nil {
		return err
	}
	return s.store().UsageTierQuotaSet(ctx, tier, c)
}

// SetTenant changes a tenant's own quotas.
func (s *Service) SetTenant(ctx context.Context, tenantID uuid.UUID, c store.QuotaChange) error {
	if err := checkChange(c); err != nil {
		return err
	}
	return s.store().UsageTenantQuotaSet(ctx, tenantID, c)
}

func checkChange(c store.QuotaChange) error {
	if c.SoftPercent != nil && (*c.SoftPercent < 1 || *c.SoftPercent > 100) {
		return apperr.New(apperr.Invalid, "the soft limit is a percent of the quota, from 1 to 100")
	}
	return nil
}
