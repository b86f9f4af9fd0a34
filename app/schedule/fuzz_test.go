package schedule

import (
	"strings"
	"testing"
	"time"
)

// Any cron expression and zone either fails to parse or yields strictly
// increasing times, without panicking.
func FuzzCronNext(f *testing.F) {
	for _, s := range []string{"0 8 * * 1-5", "30 2 * * *", "*/7 * * * *", "@daily", "@every 90s", "0 0 29 2 *", "5 4 * * sun", "0 0 31 2 *", "0 9,17 * * MON-FRI", "5/20 * ? JAN-dec *", "@weekly", "1-59/7,3 0-23/5 */3 * 0-6/2"} {
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

// Any expression parses to fields within their bounds, each with a
// value, or fails with an error that names the field (or says the
// expression's shape is wrong).
func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"0 8 * * 1-5", "*/7 * * * *", "@daily", "5/20 * ? JAN-dec *", "1-2-3 * * * *", ",,, * * * *", "*/0 * * * *"} {
		f.Add(s)
	}
	prefixes := []string{"minute: ", "hour: ", "day-of-month: ", "month: ", "day-of-week: ", "want five fields", "unknown shorthand"}
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := parseCron(expr)
		if err != nil {
			for _, p := range prefixes {
				if strings.HasPrefix(err.Error(), p) {
					return
				}
			}
			t.Fatalf("%q: %v names no field", expr, err)
		}
		for _, f := range []struct {
			bits  uint64
			field cronField
		}{{c.Minute, cronMinute}, {c.Hour, cronHour}, {c.Dom, cronDom}, {c.Month, cronMonth}, {c.Dow, cronDow}} {
			if b := f.bits &^ starBit; b == 0 || b&^bitRange(f.field.min, f.field.max, 1) != 0 {
				t.Fatalf("%q: %s bits %b out of %d-%d", expr, f.field.name, f.bits, f.field.min, f.field.max)
			}
		}
	})
}
