package usage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/sysevents"
)

// The quotas, by the names the API, the CLI and errors use.
const (
	QuotaMonthlySteps = "monthly_steps"
	QuotaMonthlyRuns  = "monthly_runs"
	QuotaWaitingRuns  = "waiting_runs"
	QuotaStoredBytes  = "stored_bytes"
)

// Quota states.
const (
	StateOK       = "ok"
	StateWarning  = "warning"
	StateExceeded = "exceeded"
)

// QuotaUse is one quota of a tenant and what of it is used.
type QuotaUse struct {
	Quota string `json:"quota"`
	Used  int64  `json:"used"`
	// Limit is the hard limit, Soft the use past which a warning is
	// recorded; both are absent when the quota has no limit.
	Limit *int64 `json:"limit,omitempty"`
	Soft  *int64 `json:"soft_limit,omitempty"`
	State string `json:"state"`
	// ResetsAt is when a monthly quota's use starts again from zero.
	ResetsAt *time.Time `json:"resets_at,omitempty"`
}

// State is a tenant's quotas and their use now.
type State struct {
	Tier   string     `json:"tier"`
	Period time.Time  `json:"period"`
	Quotas []QuotaUse `json:"quotas"`
}

// Exceeded is the first quota at its limit, if any.
func (st State) Exceeded() (QuotaUse, bool) {
	for _, q := range st.Quotas {
		if q.State == StateExceeded {
			return q, true
		}
	}
	return QuotaUse{}, false
}

// QuotaState reads a tenant's quotas and their use through s.
func (s *Service) QuotaState(ctx context.Context, st *store.Store, tenantID uuid.UUID) (State, error) {
	now := s.now().UTC()
	month := store.MonthStart(now)
	q, err := st.UsageQuotaGet(ctx, tenantID)
	if err != nil {
		return State{}, err
	}
	out := State{Tier: q.Tier, Period: month}
	u, err := st.UsageTenantMonth(ctx, tenantID, month)
	if err != nil {
		return State{}, err
	}
	next := month.AddDate(0, 1, 0)
	out.Quotas = append(out.Quotas,
		quotaUse(QuotaMonthlySteps, u.Steps, q.MonthlySteps, q.SoftPercent, &next),
		quotaUse(QuotaMonthlyRuns, u.RunsStarted, q.MonthlyRuns, q.SoftPercent, &next))
	waiting, stored, err := liveUse(ctx, st, tenantID, q)
	if err != nil {
		return State{}, err
	}
	out.Quotas = append(out.Quotas,
		quotaUse(QuotaWaitingRuns, waiting, q.WaitingRuns, q.SoftPercent, nil),
		quotaUse(QuotaStoredBytes, stored, q.StoredBytes, q.SoftPercent, nil))
	return out, nil
}

// liveUse is the use of the quotas that are not monthly: waiting runs
// (counted only when limited: it reads the run table) and stored bytes.
func liveUse(ctx context.Context, st *store.Store, tenantID uuid.UUID, q store.Quota) (waiting, stored int64, err error) {
	if q.WaitingRuns >= 0 {
		if waiting, err = st.UsageWaitingRuns(ctx, tenantID); err != nil {
			return 0, 0, err
		}
	}
	stored, err = st.UsageStoredBytes(ctx, tenantID)
	return waiting, stored, err
}

func quotaUse(name string, used, limit int64, softPercent int, resets *time.Time) QuotaUse {
	u := QuotaUse{Quota: name, Used: used, State: StateOK, ResetsAt: resets}
	if limit < 0 {
		return u
	}
	soft := limit * int64(softPercent) / 100
	u.Limit, u.Soft = &limit, &soft
	switch {
	case used >= limit:
		u.State = StateExceeded
	case used >= soft:
		u.State = StateWarning
	}
	return u
}

// Admit refuses a new run of a tenant at one of its hard limits with
// apperr.QuotaExceeded, and records a warning for each quota past its
// soft limit; limited says whether the tenant has any limit. A tenant
// whose quotas are all unlimited costs one query. For a limited tenant,
// st bound to the transaction that creates the run makes the check
// exact: the tenant's starts are serialized until it ends (UsageQuotaLock),
// so each reads the use the one before it committed, runs_started
// included.
func (s *Service) Admit(ctx context.Context, st *store.Store, tenantID uuid.UUID) (limited bool, err error) {
	q, err := st.UsageQuotaGet(ctx, tenantID)
	if err != nil {
		return false, err
	}
	if q.MonthlySteps < 0 && q.MonthlyRuns < 0 && q.WaitingRuns < 0 && q.StoredBytes < 0 {
		return false, nil
	}
	if err := st.UsageQuotaLock(ctx, tenantID); err != nil {
		return true, err
	}
	state, err := s.QuotaState(ctx, st, tenantID)
	if err != nil {
		return true, err
	}
	s.warn(ctx, st, tenantID, state)
	if over, ok := state.Exceeded(); ok {
		s.metrics.refused(tenantID, state.Tier, over.Quota)
		return true, s.exceeded(over)
	}
	return true, nil
}

// exceeded is the error of a start refused by quota q.
func (s *Service) exceeded(q QuotaUse) error {
	e := apperr.New(apperr.QuotaExceeded, "the tenant's %s quota is used up: %d used of %d", q.Quota, q.Used, *q.Limit)
	e = e.WithDetails(map[string]any{"quota": q.Quota, "used": q.Used, "limit": *q.Limit, "resets_at": q.ResetsAt})
	e.RetryAfter = time.Minute
	if q.ResetsAt != nil {
		e.RetryAfter = max(q.ResetsAt.Sub(s.now()), time.Second)
	}
	return e
}

// warn records a ductor.usage.warning for each quota past its soft
// limit, once per tenant, period and quota. A warning that cannot be
// recorded does not refuse the start; it is tried again on the next.
func (s *Service) warn(ctx context.Context, st *store.Store, tenantID uuid.UUID, state State) {
	for _, q := range state.Quotas {
		if q.State == StateOK {
			continue
		}
		w := store.UsageWarning{Period: state.Period, Quota: q.Quota, Used: q.Used, Limit: *q.Limit}
		added, err := st.UsageWarningRecord(ctx, tenantID, w)
		if err != nil {
			s.log.WarnContext(ctx, "record usage warning", "err", fmt.Errorf("tenant %s: %w", tenantID, err))
			continue
		}
		if added {
			e := sysevents.UsageWarned(sysevents.QuotaWarning{Quota: q.Quota, Period: state.Period.Format(time.DateOnly),
				Used: q.Used, Limit: *q.Limit, SoftLimit: *q.Soft})
			if _, err := st.SystemEventAdd(ctx, tenantID, e.ID, e.Name, e.Data); err != nil {
				s.log.WarnContext(ctx, "record usage warning event", "err", fmt.Errorf("tenant %s: %w", tenantID, err))
			}
			s.metrics.warned(tenantID, state.Tier, q.Quota)
			if s.cfg.OnWarning != nil {
				s.cfg.OnWarning(ctx, tenantID, w)
			}
		}
	}
}
