package views

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ductor/ductor/app/store"
)

// UsageData is the usage page: a month of the tenant's use, a chart per
// metric, and its quotas now.
type UsageData struct {
	Month      time.Time
	Prev, Next string // the months before and after, YYYY-MM
	Total      store.Usage
	Charts     []UsageChart
	Quotas     []UsageQuota
	// StepTypes are the month's steps by step type, most steps first.
	StepTypes []UsageStepType
}

// UsageStepType is one step type's line of the month.
type UsageStepType struct {
	Type, Steps, Seconds string
}

// UsageQuota is one quota's line on the page.
type UsageQuota struct {
	Name, Used, Limit, State string
	Percent                  int // of the limit used, at most 100
}

// UsageChart is one metric's bars, one a day, laid out for an SVG of
// chartW × chartH.
type UsageChart struct {
	ID, Label, Total, Max string
	Bars                  []UsageBar
}

// UsageBar is one day's bar.
type UsageBar struct {
	X, Y, W, H string
	Title      string
}

// The chart's drawing area.
const (
	chartW, chartH = 600, 120
)

// usageMetrics are the charted metrics: label and value of a day.
var usageMetrics = []struct {
	id, label string
	value     func(store.Usage) int64
	format    func(int64) string
}{
	{"steps", "Steps", func(u store.Usage) int64 { return u.Steps }, count},
	{"runs", "Runs started", func(u store.Usage) int64 { return u.RunsStarted }, count},
	{"failed", "Runs failed", func(u store.Usage) int64 { return u.RunsFailed + u.RunsTimedOut }, count},
	{"step-seconds", "Step seconds", func(u store.Usage) int64 { return u.StepMicros }, micros},
	{"events", "Events and signals", func(u store.Usage) int64 { return u.Events + u.Signals }, count},
	{"webhooks", "Webhook deliveries", func(u store.Usage) int64 { return u.Webhooks }, count},
	{"bytes", "Stored bytes added", func(u store.Usage) int64 { return u.StoredBytes }, bytesOf},
}

func count(n int64) string { return strconv.FormatInt(n, 10) }

func micros(n int64) string { return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " s" }

func bytesOf(n int64) string {
	switch {
	case n >= 1<<30 || n <= -(1<<30):
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20 || n <= -(1<<20):
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 || n <= -(1<<10):
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return strconv.FormatInt(n, 10) + " B"
}

// NewUsageData lays out a month of days (those with no use are zero).
func NewUsageData(month time.Time, days []store.UsageDay) UsageData {
	n := month.AddDate(0, 1, 0).Sub(month).Hours() / 24
	byDay := make([]store.Usage, int(n))
	d := UsageData{Month: month, Prev: month.AddDate(0, -1, 0).Format("2006-01"), Next: month.AddDate(0, 1, 0).Format("2006-01")}
	for _, u := range days {
		if i := int(u.Day.Sub(month).Hours() / 24); i >= 0 && i < len(byDay) {
			byDay[i] = u.Usage
		}
	}
	for _, u := range byDay {
		d.Total = addUsage(d.Total, u)
	}
	for _, m := range usageMetrics {
		d.Charts = append(d.Charts, chartOf(m.id, m.label, month, byDay, m.value, m.format))
	}
	types := slices.SortedFunc(maps.Keys(d.Total.StepsByType), func(a, b string) int {
		if n := cmp.Compare(d.Total.StepsByType[b].Steps, d.Total.StepsByType[a].Steps); n != 0 {
			return n
		}
		return strings.Compare(a, b)
	})
	for _, t := range types {
		n := d.Total.StepsByType[t]
		d.StepTypes = append(d.StepTypes, UsageStepType{Type: t, Steps: count(n.Steps), Seconds: micros(n.StepMicros)})
	}
	return d
}

func chartOf(id, label string, month time.Time, days []store.Usage, value func(store.Usage) int64, format func(int64) string) UsageChart {
	var peak, total int64
	for _, u := range days {
		total += value(u)
		peak = max(peak, value(u))
	}
	c := UsageChart{ID: id, Label: label, Total: format(total), Max: format(peak)}
	slot := float64(chartW) / float64(len(days))
	for i, u := range days {
		v := max(value(u), 0)
		h := 0.0
		if peak > 0 {
			h = float64(v) / float64(peak) * chartH
		}
		c.Bars = append(c.Bars, UsageBar{
			X: ff(float64(i)*slot + slot*0.15), Y: ff(chartH - h), W: ff(slot * 0.7), H: ff(h),
			Title: month.AddDate(0, 0, i).Format("Jan 2") + ": " + format(value(u)),
		})
	}
	return c
}

func ff(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func addUsage(a, b store.Usage) store.Usage {
	a.RunsStarted += b.RunsStarted
	a.RunsSucceeded += b.RunsSucceeded
	a.RunsFailed += b.RunsFailed
	a.RunsCancelled += b.RunsCancelled
	a.RunsTimedOut += b.RunsTimedOut
	a.RunsTerminated += b.RunsTerminated
	a.Steps += b.Steps
	a.StepMicros += b.StepMicros
	a.Events += b.Events
	a.Signals += b.Signals
	a.Webhooks += b.Webhooks
	a.StoredBytes += b.StoredBytes
	if len(b.StepsByType) > 0 {
		a.StepsByType = maps.Clone(a.StepsByType)
		for t, n := range b.StepsByType {
			a.AddSteps(t, n)
		}
	}
	return a
}

// chartViewBox is the SVG's viewBox: the bars and a line of labels.
func chartViewBox() string { return fmt.Sprintf("0 0 %d %d", chartW, chartH+24) }

// axisY is where the day labels sit.
func axisY() string { return strconv.Itoa(chartH + 20) }
