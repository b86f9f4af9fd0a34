package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/queries"
)

// Usage is what a tenant used over some period: the figures the metering
// triggers of migration 0045 count in the transactions that do the work.
type Usage struct {
	RunsStarted    int64 `json:"runs_started"`
	RunsSucceeded  int64 `json:"runs_succeeded"`
	RunsFailed     int64 `json:"runs_failed"`
	RunsCancelled  int64 `json:"runs_cancelled"`
	RunsTimedOut   int64 `json:"runs_timed_out"`
	RunsTerminated int64 `json:"runs_terminated"`
	// Steps counts started attempts, retries included.
	Steps int64 `json:"steps"`
	// StepMicros is the worker time of started attempts that finished.
	StepMicros int64 `json:"step_microseconds"`
	Events     int64 `json:"events"`
	Signals    int64 `json:"signals"`
	Webhooks   int64 `json:"webhook_deliveries"`
	// StoredBytes is the net change of stored bytes over the period (run
	// inputs, attempt outputs and errors; the prune takes bytes back).
	StoredBytes int64 `json:"stored_bytes"`
	// StepsByType breaks Steps and StepMicros down by the step type the
	// attempts executed (a scatter child's is its template's; "unknown":
	// counted before attempts recorded their type). Its figures add up to
	// Steps and StepMicros.
	StepsByType map[string]StepTypeUsage `json:"steps_by_type,omitempty"`
}

// StepTypeUsage is the steps of one step type and their worker time.
type StepTypeUsage struct {
	Steps      int64 `json:"steps"`
	StepMicros int64 `json:"step_microseconds"`
}

// AddSteps adds the steps of one type to u's breakdown.
func (u *Usage) AddSteps(stepType string, n StepTypeUsage) {
	if n == (StepTypeUsage{}) {
		return
	}
	if u.StepsByType == nil {
		u.StepsByType = map[string]StepTypeUsage{}
	}
	t := u.StepsByType[stepType]
	u.StepsByType[stepType] = StepTypeUsage{Steps: t.Steps + n.Steps, StepMicros: t.StepMicros + n.StepMicros}
}

// UsageSteps is a tenant's steps of one type, on one day, by one
// definition.
type UsageSteps struct {
	Day        time.Time
	Definition string
	StepType   string
	StepTypeUsage
}

// TenantUsage is one tenant's use in a month.
type TenantUsage struct {
	TenantID uuid.UUID
	Slug     string
	Tier     string
	Usage
}

// UsageDay is a tenant's use on one UTC day.
type UsageDay struct {
	Day time.Time
	Usage
}

// UsageDefinition is a tenant's use by one definition ("" for what
// belongs to no run: events, webhooks, some stored bytes).
type UsageDefinition struct {
	Definition string
	Usage
}

// Quota is a tenant's effective quotas (-1: no limit) and the percent of
// each at which a warning is recorded.
type Quota struct {
	Tier         string
	MonthlySteps int64
	MonthlyRuns  int64
	WaitingRuns  int64
	StoredBytes  int64
	SoftPercent  int
}

// QuotaChange sets quotas: nil keeps a value, a negative one clears it.
type QuotaChange struct {
	MonthlySteps *int64
	MonthlyRuns  *int64
	WaitingRuns  *int64
	StoredBytes  *int64
	SoftPercent  *int
}

// UsageWarning is a recorded ductor.usage.warning.
type UsageWarning struct {
	Period time.Time
	Quota  string
	Used   int64
	Limit  int64
	At     time.Time
}

func pgDate(t time.Time) pgtype.Date {
	return pgtype.Date{Time: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), Valid: true}
}

// MonthStart is the first instant (UTC) of t's month.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// UsageFold folds up to maxRows metering deltas into the rollups and
// says how many it folded (0 when none are left, or another process is
// folding).
func (s *Store) UsageFold(ctx context.Context, maxRows int) (int64, error) {
	row, err := s.q.UsageFold(ctx, int32(maxRows))
	if err != nil {
		return 0, fmt.Errorf("fold usage: %w", err)
	}
	return row.Folded, nil
}

// UsageMonthAll is every tenant's use in the month of month, one row per
// tenant that used anything, by slug.
func (s *Store) UsageMonthAll(ctx context.Context, month time.Time) ([]TenantUsage, error) {
	m := MonthStart(month)
	rows, err := s.q.UsageMonthAll(ctx, queries.UsageMonthAllParams{Month: pgDate(m), MonthEnd: pgDate(m.AddDate(0, 1, 0))})
	if err != nil {
		return nil, fmt.Errorf("read usage of every tenant: %w", err)
	}
	steps, err := s.UsageMonthSteps(ctx, m, nil)
	if err != nil {
		return nil, err
	}
	out := make([]TenantUsage, len(rows))
	for i, r := range rows {
		u := usageFromMonthAll(r)
		u.StepsByType = steps[r.TenantID]
		out[i] = TenantUsage{TenantID: r.TenantID, Slug: r.Slug, Tier: r.Tier, Usage: u}
	}
	return out, nil
}

// UsageMonthSteps is the steps by type of every tenant (or of tenantID)
// in the month of month.
func (s *Store) UsageMonthSteps(ctx context.Context, month time.Time, tenantID *uuid.UUID) (map[uuid.UUID]map[string]StepTypeUsage, error) {
	m := MonthStart(month)
	p := queries.UsageMonthStepsParams{Month: pgDate(m), MonthEnd: pgDate(m.AddDate(0, 1, 0))}
	if tenantID != nil {
		p.TenantID = uuid.NullUUID{UUID: *tenantID, Valid: true}
	}
	rows, err := s.q.UsageMonthSteps(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read steps by type: %w", err)
	}
	out := map[uuid.UUID]map[string]StepTypeUsage{}
	for _, r := range rows {
		if r.Steps == 0 && r.StepUs == 0 {
			continue
		}
		if out[r.TenantID] == nil {
			out[r.TenantID] = map[string]StepTypeUsage{}
		}
		out[r.TenantID][r.StepType] = StepTypeUsage{Steps: r.Steps, StepMicros: r.StepUs}
	}
	return out, nil
}

// UsageTenantSteps is one tenant's steps by day, definition and type in
// [from, to).
func (s *Store) UsageTenantSteps(ctx context.Context, tenantID uuid.UUID, from, to time.Time) ([]UsageSteps, error) {
	rows, err := s.q.UsageTenantSteps(ctx, queries.UsageTenantStepsParams{TenantID: tenantID, FromDay: pgDate(from), ToDay: pgDate(to)})
	if err != nil {
		return nil, fmt.Errorf("read steps by type: %w", err)
	}
	out := make([]UsageSteps, len(rows))
	for i, r := range rows {
		out[i] = UsageSteps{Day: r.Day.Time, Definition: r.DefinitionKey, StepType: r.StepType,
			StepTypeUsage: StepTypeUsage{Steps: r.Steps, StepMicros: r.StepUs}}
	}
	return out, nil
}

// UsageTenantMonth is one tenant's use in the month of month.
func (s *Store) UsageTenantMonth(ctx context.Context, tenantID uuid.UUID, month time.Time) (Usage, error) {
	m := MonthStart(month)
	row, err := s.q.UsageTenantMonth(ctx, queries.UsageTenantMonthParams{
		TenantID: tenantID, Month: pgDate(m), MonthEnd: pgDate(m.AddDate(0, 1, 0))})
	if err != nil {
		return Usage{}, fmt.Errorf("read usage of tenant: %w", err)
	}
	return usageFromTenantMonth(row), nil
}

// UsageTenantByDay is one tenant's use per UTC day in [from, to).
func (s *Store) UsageTenantByDay(ctx context.Context, tenantID uuid.UUID, from, to time.Time) ([]UsageDay, error) {
	rows, err := s.q.UsageTenantByDay(ctx, queries.UsageTenantByDayParams{TenantID: tenantID, FromDay: pgDate(from), ToDay: pgDate(to)})
	if err != nil {
		return nil, fmt.Errorf("read usage by day: %w", err)
	}
	out := make([]UsageDay, len(rows))
	for i, r := range rows {
		out[i] = UsageDay{Day: r.Day.Time, Usage: usageFromDay(r)}
	}
	return out, nil
}

// UsageTenantByDefinition is one tenant's use per definition in [from, to).
func (s *Store) UsageTenantByDefinition(ctx context.Context, tenantID uuid.UUID, from, to time.Time) ([]UsageDefinition, error) {
	rows, err := s.q.UsageTenantByDefinition(ctx, queries.UsageTenantByDefinitionParams{
		TenantID: tenantID, FromDay: pgDate(from), ToDay: pgDate(to)})
	if err != nil {
		return nil, fmt.Errorf("read usage by definition: %w", err)
	}
	out := make([]UsageDefinition, len(rows))
	for i, r := range rows {
		out[i] = UsageDefinition{Definition: r.DefinitionKey, Usage: usageFromDefinition(r)}
	}
	return out, nil
}

// UsageStoredBytes is what a tenant stores now, as metered.
func (s *Store) UsageStoredBytes(ctx context.Context, tenantID uuid.UUID) (int64, error) {
	n, err := s.q.UsageStoredBytes(ctx, tenantID)
	if err != nil {
		return 0, fmt.Errorf("read stored bytes: %w", err)
	}
	return n, nil
}

// UsageWaitingRuns counts a tenant's runs that are waiting now.
func (s *Store) UsageWaitingRuns(ctx context.Context, tenantID uuid.UUID) (int64, error) {
	n, err := s.q.UsageWaitingRuns(ctx, tenantID)
	if err != nil {
		return 0, fmt.Errorf("count waiting runs: %w", err)
	}
	return n, nil
}

// UsageQuotaLock serializes the starts of a tenant whose quotas are
// limited until the transaction ends (outside one, it is taken and let
// go at once).
func (s *Store) UsageQuotaLock(ctx context.Context, tenantID uuid.UUID) error {
	if err := s.q.UsageQuotaLock(ctx, tenantID); err != nil {
		return fmt.Errorf("lock tenant quotas: %w", err)
	}
	return nil
}

// UsageQuotaGet is a tenant's effective quotas.
func (s *Store) UsageQuotaGet(ctx context.Context, tenantID uuid.UUID) (Quota, error) {
	r, err := s.q.UsageQuotaGet(ctx, tenantID)
	if err != nil {
		return Quota{}, notFound(err, "tenant")
	}
	return Quota{Tier: r.Tier, MonthlySteps: r.MonthlySteps, MonthlyRuns: r.MonthlyRuns,
		WaitingRuns: r.WaitingRuns, StoredBytes: r.StoredBytes, SoftPercent: int(r.SoftPercent)}, nil
}

func pgInt8(v *int64) pgtype.Int8 {
	if v == nil {
		return pgtype.Int8{}
	}
	return pgtype.Int8{Int64: *v, Valid: true}
}

func pgInt4(v *int) pgtype.Int4 {
	if v == nil {
		return pgtype.Int4{}
	}
	return pgtype.Int4{Int32: int32(*v), Valid: true}
}

// UsageTierQuotaSet changes a tier's quotas.
func (s *Store) UsageTierQuotaSet(ctx context.Context, tier Tier, c QuotaChange) error {
	_, err := s.q.UsageTierQuotaSet(ctx, queries.UsageTierQuotaSetParams{
		Tier: string(tier), MonthlySteps: pgInt8(c.MonthlySteps), MonthlyRuns: pgInt8(c.MonthlyRuns),
		WaitingRuns: pgInt8(c.WaitingRuns), StoredBytes: pgInt8(c.StoredBytes), SoftPercent: pgInt4(c.SoftPercent)})
	if err != nil {
		return fmt.Errorf("set quotas of tier %s: %w", tier, err)
	}
	return nil
}

// UsageTenantQuotaSet changes a tenant's own quotas.
func (s *Store) UsageTenantQuotaSet(ctx context.Context, tenantID uuid.UUID, c QuotaChange) error {
	_, err := s.q.UsageTenantQuotaSet(ctx, queries.UsageTenantQuotaSetParams{
		TenantID: tenantID, MonthlySteps: pgInt8(c.MonthlySteps), MonthlyRuns: pgInt8(c.MonthlyRuns),
		WaitingRuns: pgInt8(c.WaitingRuns), StoredBytes: pgInt8(c.StoredBytes), SoftPercent: pgInt4(c.SoftPercent)})
	if err != nil {
		return fmt.Errorf("set quotas of tenant: %w", err)
	}
	return nil
}

// UsageWarningRecord records a warning once per tenant, period and quota,
// and says whether this call recorded it.
func (s *Store) UsageWarningRecord(ctx context.Context, tenantID uuid.UUID, w UsageWarning) (bool, error) {
	n, err := s.q.UsageWarningRecord(ctx, queries.UsageWarningRecordParams{
		TenantID: tenantID, Period: pgDate(w.Period), Quota: w.Quota, Used: w.Used, QuotaLimit: w.Limit})
	if err != nil {
		return false, fmt.Errorf("record usage warning: %w", err)
	}
	return n == 1, nil
}

// UsageWarningList is a tenant's warnings of one period.
func (s *Store) UsageWarningList(ctx context.Context, tenantID uuid.UUID, period time.Time) ([]UsageWarning, error) {
	rows, err := s.q.UsageWarningList(ctx, queries.UsageWarningListParams{TenantID: tenantID, Period: pgDate(period)})
	if err != nil {
		return nil, fmt.Errorf("list usage warnings: %w", err)
	}
	out := make([]UsageWarning, len(rows))
	for i, r := range rows {
		out[i] = UsageWarning{Period: r.Period.Time, Quota: r.Quota, Used: r.Used, Limit: r.QuotaLimit, At: r.At}
	}
	return out, nil
}

func usageFromMonthAll(r queries.UsageMonthAllRow) Usage {
	return Usage{
		RunsStarted:    r.RunsStarted,
		RunsSucceeded:  r.RunsSucceeded,
		RunsFailed:     r.RunsFailed,
		RunsCancelled:  r.RunsCancelled,
		RunsTimedOut:   r.RunsTimedOut,
		RunsTerminated: r.RunsTerminated,
		Steps:          r.Steps,
		StepMicros:     r.StepUs,
		Events:         r.Events,
		Signals:        r.Signals,
		Webhooks:       r.Webhooks,
		StoredBytes:    r.StoredBytes,
	}
}

func usageFromTenantMonth(r queries.UsageTenantMonthRow) Usage {
	return Usage{
		RunsStarted:    r.RunsStarted,
		RunsSucceeded:  r.RunsSucceeded,
		RunsFailed:     r.RunsFailed,
		RunsCancelled:  r.RunsCancelled,
		RunsTimedOut:   r.RunsTimedOut,
		RunsTerminated: r.RunsTerminated,
		Steps:          r.Steps,
		StepMicros:     r.StepUs,
		Events:         r.Events,
		Signals:        r.Signals,
		Webhooks:       r.Webhooks,
		StoredBytes:    r.StoredBytes,
	}
}

func usageFromDay(r queries.UsageTenantByDayRow) Usage {
	return Usage{
		RunsStarted:    r.RunsStarted,
		RunsSucceeded:  r.RunsSucceeded,
		RunsFailed:     r.RunsFailed,
		RunsCancelled:  r.RunsCancelled,
		RunsTimedOut:   r.RunsTimedOut,
		RunsTerminated: r.RunsTerminated,
		Steps:          r.Steps,
		StepMicros:     r.StepUs,
		Events:         r.Events,
		Signals:        r.Signals,
		Webhooks:       r.Webhooks,
		StoredBytes:    r.StoredBytes,
	}
}

func usageFromDefinition(r queries.UsageTenantByDefinitionRow) Usage {
	return Usage{
		RunsStarted:    r.RunsStarted,
		RunsSucceeded:  r.RunsSucceeded,
		RunsFailed:     r.RunsFailed,
		RunsCancelled:  r.RunsCancelled,
		RunsTimedOut:   r.RunsTimedOut,
		RunsTerminated: r.RunsTerminated,
		Steps:          r.Steps,
		StepMicros:     r.StepUs,
		Events:         r.Events,
		Signals:        r.Signals,
		Webhooks:       r.Webhooks,
		StoredBytes:    r.StoredBytes,
	}
}

// UsageTierQuotas is each tier's own quotas (-1: no limit), for the tiers
// that have any set.
func (s *Store) UsageTierQuotas(ctx context.Context) (map[Tier]Quota, error) {
	rows, err := s.q.UsageTierQuotaList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tier quotas: %w", err)
	}
	limit := func(v pgtype.Int8) int64 {
		if !v.Valid {
			return -1
		}
		return v.Int64
	}
	out := make(map[Tier]Quota, len(rows))
	for _, r := range rows {
		out[Tier(r.Tier)] = Quota{Tier: r.Tier, MonthlySteps: limit(r.MonthlySteps), MonthlyRuns: limit(r.MonthlyRuns),
			WaitingRuns: limit(r.WaitingRuns), StoredBytes: limit(r.StoredBytes), SoftPercent: int(r.SoftPercent)}
	}
	return out, nil
}

// TierQuota is a tier's own quotas: none (-1) for a tier with none set.
func TierQuota(quotas map[Tier]Quota, t Tier) Quota {
	if q, ok := quotas[t]; ok {
		return q
	}
	return Quota{Tier: string(t), MonthlySteps: -1, MonthlyRuns: -1, WaitingRuns: -1, StoredBytes: -1, SoftPercent: 80}
}

// Raises reports the first quota that q lifts above from's (a higher
// limit, or none where from has one), or "" when q lifts none.
func (q Quota) Raises(from Quota) string {
	for _, c := range []struct {
		name     string
		to, from int64
	}{{"monthly_steps", q.MonthlySteps, from.MonthlySteps}, {"monthly_runs", q.MonthlyRuns, from.MonthlyRuns},
		{"waiting_runs", q.WaitingRuns, from.WaitingRuns}, {"stored_bytes", q.StoredBytes, from.StoredBytes}} {
		if c.from >= 0 && (c.to < 0 || c.to > c.from) {
			return c.name
		}
	}
	return ""
}
