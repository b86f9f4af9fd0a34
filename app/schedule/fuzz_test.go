package schedule

import (
	"testing"
	"time"
)

// Any cron expression and zone either fails to parse or yields strictly
// increasing times, without panicking.
func FuzzCronNext(f *testing.F) {
	for _, s := range []string{"0 8 * * 1-5", "30 2 * * *", "*/7 * * * *", "@daily", "@every 90s", "0 0 29 2 *", "5 4 * * sun", "0 0 31 2 *"} {
		f.Add(s, "Europe/Paris", int64(1711846800))
		f.Add(s, "America/Sao_Paulo", int64(1541300000))
		f.Add(s, "Australia/Lord_Howe", int64(1712412000))
	}
	f.Fuzz(func(t *testing.T, expr, zone string, from int64) {
		sc, err := New(Spec{Cron: expr, Timezone: zone})
		if err != nil {
			return
		}
		t0 := time.Unix(from%(1<<34), 0)
		prev := t0
		for range 5 {
			n := sc.Next(prev)
			if n.IsZero() {
				return
			}
			if !n.After(prev) {
				t.Fatalf("%q in %s: Next(%v) = %v, not after", expr, zone, prev, n)
			}
			prev = n
		}
	})
}
