package cli

import (
	"context"
	"encoding/csv"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/ductor/ductor/app/store"
)

// usageColumns are the columns of `ductor usage`, in order.
var usageColumns = []string{"tenant", "tier", "month", "runs_started", "runs_succeeded", "runs_failed",
	"runs_cancelled", "runs_timed_out", "runs_terminated", "steps", "step_seconds", "events", "signals",
	"webhook_deliveries", "stored_bytes"}

// usageView is one tenant's month as `ductor usage` prints it.
type usageView struct {
	Tenant string `json:"tenant"`
	Tier   string `json:"tier"`
	Month  string `json:"month"`
	store.Usage
}

// cells are v's row; types are the step types given a column each
// (steps_TYPE), after the fixed columns.
func (v usageView) cells(types []string) []string {
	u := v.Usage
	n := func(x int64) string { return strconv.FormatInt(x, 10) }
	row := []string{v.Tenant, v.Tier, v.Month, n(u.RunsStarted), n(u.RunsSucceeded), n(u.RunsFailed),
		n(u.RunsCancelled), n(u.RunsTimedOut), n(u.RunsTerminated), n(u.Steps),
		strconv.FormatFloat(float64(u.StepMicros)/1e6, 'f', 3, 64), n(u.Events), n(u.Signals),
		n(u.Webhooks), n(u.StoredBytes)}
	for _, t := range types {
		row = append(row, n(u.StepsByType[t].Steps))
	}
	return row
}

// stepTypes are the step types any of views has steps of, sorted.
func stepTypes(views []usageView) []string {
	seen := map[string]bool{}
	for _, v := range views {
		for t := range v.StepsByType {
			seen[t] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// usageHeader is the columns, with a steps_TYPE column for each of types.
func usageHeader(types []string) []string {
	h := slices.Clone(usageColumns)
	for _, t := range types {
		h = append(h, "steps_"+t)
	}
	return h
}

// runUsage handles `ductor usage`: a month of every tenant's use (or one
// tenant's), for operators.
func runUsage(ctx context.Context, env Env, args []string) error {
	const synopsis = "usage [--tenant SLUG] [--month YYYY-MM] [--output json|csv|table]"
	fs := newFlags(synopsis, env)
	slug := fs.String("tenant", "", "one tenant (default: every tenant that used anything)")
	monthFlag := fs.String("month", "", "the month, YYYY-MM (default: this month, UTC)")
	out := fs.String("output", outputCSV, "csv, json or table")
	cfg, _, err := loadConfig(fs, args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	month := store.MonthStart(time.Now())
	if *monthFlag != "" {
		if month, err = time.Parse("2006-01", *monthFlag); err != nil {
			return usagef("--month must be YYYY-MM, not %q", *monthFlag)
		}
	}
	if *out != outputCSV && *out != outputJSON && *out != outputTable {
		return usagef("--output must be csv, json or table, not %q", *out)
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		views, err := usageViews(ctx, s, *slug, month)
		if err != nil {
			return err
		}
		return writeUsage(env, *out, views)
	})
}

const outputCSV = "csv"

func usageViews(ctx context.Context, s *store.Store, slug string, month time.Time) ([]usageView, error) {
	label := month.Format("2006-01")
	if slug != "" {
		t, err := s.TenantGetBySlug(ctx, slug)
		if err != nil {
			return nil, err
		}
		u, err := s.UsageTenantMonth(ctx, t.ID, month)
		if err != nil {
			return nil, err
		}
		steps, err := s.UsageMonthSteps(ctx, month, &t.ID)
		u.StepsByType = steps[t.ID]
		return []usageView{{Tenant: t.Slug, Tier: string(t.Tier), Month: label, Usage: u}}, err
	}
	all, err := s.UsageMonthAll(ctx, month)
	if err != nil {
		return nil, err
	}
	views := make([]usageView, len(all))
	for i, u := range all {
		views[i] = usageView{Tenant: u.Slug, Tier: u.Tier, Month: label, Usage: u.Usage}
	}
	return views, nil
}

func writeUsage(env Env, format string, views []usageView) error {
	types := stepTypes(views)
	if format == outputCSV {
		w := csv.NewWriter(env.Stdout)
		_ = w.Write(usageHeader(types))
		for _, v := range views {
			_ = w.Write(v.cells(types))
		}
		w.Flush()
		return w.Error()
	}
	return render(env, format, map[string]any{"usage": views}, func(any) *table {
		t := &table{header: usageHeader(types)}
		for _, v := range views {
			cells := v.cells(types)
			row := make([]any, len(cells))
			for i, c := range cells {
				row[i] = c
			}
			t.add(row...)
		}
		return t
	})
}
