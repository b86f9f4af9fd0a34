package views

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ductor/ductor/app/store"
)

// totalText is a count of runs, "about" an estimate rounded to two
// figures.
func totalText(n int, estimated bool) string {
	if estimated {
		return "about " + groupDigits(roundFigures(n, 2)) + " runs"
	}
	if n == 1 {
		return "1 run"
	}
	return groupDigits(n) + " runs"
}

// roundFigures rounds n to its first figures digits: 47,466 → 47,000.
func roundFigures(n, figures int) int {
	unit := 1
	for x := n; x >= 10*pow10(figures-1); x /= 10 {
		unit *= 10
	}
	return (n + unit/2) / unit * unit
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

// groupDigits writes n with thousands separators: 12,345.
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// runDuration is how long a run took, or has been going for.
func runDuration(start time.Time, end *time.Time, now time.Time) string {
	if end != nil {
		return shortDuration(end.Sub(start))
	}
	if now.IsZero() || now.Before(start) {
		return "–"
	}
	return shortDuration(now.Sub(start)) + " so far"
}

// shortDuration rounds a duration to what a person reads: 240ms, 3.2s,
// 4m05s, 2h13m, 3d4h.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// batchCounts is a batch's progress in words.
func batchCounts(b store.Batch) string {
	return fmt.Sprintf("%s of %s %s, %s failed", groupDigits(b.Done), groupDigits(b.Total), batchVerb(b.Action), groupDigits(b.Failed))
}

func batchVerb(action string) string {
	switch action {
	case store.BatchRetry:
		return "retried"
	case store.BatchUpgradeRuns:
		return "upgraded"
	}
	return "cancelled"
}

// batchStatusClass colours a batch's status badge.
func batchStatusClass(b store.Batch) string {
	switch {
	case !b.Finished():
		return "running"
	case b.Status == store.BatchStopped:
		return "cancelled"
	case b.Failed > 0:
		return "wait"
	}
	return "succeeded"
}

// batchScope says which runs a batch covers.
func batchScope(b store.Batch) string {
	if b.Filter == nil {
		return fmt.Sprintf("%s selected runs", groupDigits(len(b.RunIDs)))
	}
	return "runs created before " + runStamp(b.CreatedAt) + " matching " + filterText(*b.Filter)
}

// filterText describes a runs filter.
func filterText(f store.RunFilter) string {
	var parts []string
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, name+" "+v)
		}
	}
	add("status", f.Status)
	add("definition", f.Definition)
	if f.Definitions != nil {
		add("definition", "in ["+strings.Join(f.Definitions, ", ")+"]")
	}
	add("subject", f.Subject)
	add("search", f.Query)
	if f.ParentID != nil {
		add("parent", f.ParentID.String())
	}
	keys := make([]string, 0, len(f.Attributes))
	for k := range f.Attributes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add("attribute", fmt.Sprintf("%s=%v", k, f.Attributes[k]))
	}
	if !f.From.IsZero() {
		add("from", runStamp(f.From))
	}
	if len(parts) == 0 {
		return "any filter (every run)"
	}
	return strings.Join(parts, ", ")
}

// runsListURL is the runs list with a filter's query string ("" for
// none).
func runsListURL(slug, query string) string {
	if query == "" {
		return tenantURL(slug, "/runs")
	}
	return tenantURL(slug, "/runs?"+query)
}
