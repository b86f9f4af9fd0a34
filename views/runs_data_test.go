package views

import (
	"testing"
	"time"
)

func TestTotalsAndDurations(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n         int
		estimated bool
		want      string
	}{{1, false, "1 run"}, {1000, false, "1,000 runs"}, {47466, true, "about 47,000 runs"}, {1234567, true, "about 1,200,000 runs"}, {1001, true, "about 1,000 runs"}} {
		if got := totalText(c.n, c.estimated); got != c.want {
			t.Errorf("totalText(%d, %v) = %q, want %q", c.n, c.estimated, got, c.want)
		}
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		240 * time.Millisecond: "240ms", 3210 * time.Millisecond: "3.2s", 245 * time.Second: "4m05s",
		133 * time.Minute: "2h13m", 76 * time.Hour: "3d4h",
	} {
		end := start.Add(d)
		if got := runDuration(start, &end, time.Time{}); got != want {
			t.Errorf("%s shows as %q, want %q", d, got, want)
		}
	}
	if got := runDuration(start, nil, start.Add(90*time.Second)); got != "1m30s so far" {
		t.Errorf("a run going on for 90s shows %q", got)
	}
}
