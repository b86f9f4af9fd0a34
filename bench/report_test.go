package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"testing"
	"time"
)

// summary keeps the last line each figure printed, in first-seen order,
// for the table printed when the binary ends.
var summary struct {
	mu    sync.Mutex
	order []string
	lines map[string]string
}

// record prints a figure's readable line and keeps it for the summary.
func record(b *testing.B, key, format string, args ...any) {
	b.Helper()
	line := fmt.Sprintf(format, args...)
	b.Log(line)
	summary.mu.Lock()
	defer summary.mu.Unlock()
	if summary.lines == nil {
		summary.lines = map[string]string{}
	}
	if _, ok := summary.lines[key]; !ok {
		summary.order = append(summary.order, key)
	}
	summary.lines[key] = line
}

func printSummary(w io.Writer) {
	summary.mu.Lock()
	defer summary.mu.Unlock()
	if len(summary.order) == 0 {
		return
	}
	fmt.Fprintln(w, "\nDuctor speed figures (ratios against River's raw rate in this run):")
	for _, k := range summary.order {
		fmt.Fprintln(w, "  "+summary.lines[k])
	}
}

// verdict says whether a figure met its goal.
func verdict(ok bool) string {
	if ok {
		return "meets goal"
	}
	return "MISSES goal"
}

// spread is the median of samples with their minimum and maximum.
type spread struct{ median, min, max float64 }

func spreadOf(samples []float64) spread {
	if len(samples) == 0 {
		return spread{math.NaN(), math.NaN(), math.NaN()}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return spread{median: percentile(s, 50), min: s[0], max: s[len(s)-1]}
}

func (s spread) String() string {
	if s.min == s.max {
		return fmt.Sprintf("%.0f", s.median)
	}
	return fmt.Sprintf("%.0f [%.0f–%.0f]", s.median, s.min, s.max)
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// latencies summarises durations in milliseconds.
type latencies struct {
	n                  int
	p50, p95, p99, max float64
}

func latencyOf(ds []time.Duration) latencies {
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	slices.Sort(ms)
	l := latencies{n: len(ms), p50: percentile(ms, 50), p95: percentile(ms, 95), p99: percentile(ms, 99)}
	if len(ms) > 0 {
		l.max = ms[len(ms)-1]
	}
	return l
}

func (l latencies) String() string {
	return fmt.Sprintf("p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms (n=%d)", l.p50, l.p95, l.p99, l.max, l.n)
}
