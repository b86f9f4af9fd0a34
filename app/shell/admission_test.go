package shell

import (
	"testing"
	"time"
)

func TestAdmission(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		n, free    int
		tokens     float64
		rate       float64
		wantNow    int
		wantLeft   float64
		firstWait  time.Duration
		secondWait time.Duration
	}{
		{"no limits", 5, -1, 1, 0, 5, 1, 0, 0},
		{"cap with room", 3, 5, 1, 0, 3, 1, 0, 0},
		{"cap full", 3, 1, 1, 0, 1, 1, capRecheck, capRecheck},
		{"rate with tokens", 2, -1, 5, 10, 2, 3, 0, 0},
		{"rate spaced", 4, -1, 2.5, 10, 2, 0.5, 50 * time.Millisecond, 150 * time.Millisecond},
		{"both, cap binds", 4, 1, 3, 10, 1, 2, capRecheck, capRecheck},
	}
	for _, tc := range cases {
		now, left, waits := admission(tc.n, tc.free, tc.tokens, tc.rate)
		if now != tc.wantNow || left != tc.wantLeft || len(waits) != tc.n-now {
			t.Errorf("%s: admitted %d left %v waits %v, want %d, %v", tc.name, now, left, waits, tc.wantNow, tc.wantLeft)
			continue
		}
		if len(waits) >= 2 && (waits[0] != tc.firstWait || waits[1] != tc.secondWait) {
			t.Errorf("%s: waits %v, want %v then %v", tc.name, waits, tc.firstWait, tc.secondWait)
		}
	}
}

func TestRefill(t *testing.T) {
	t.Parallel()
	if got := refill(0, 500*time.Millisecond, 10, 10); got != 5 {
		t.Errorf("half a second at 10/s = %v tokens, want 5", got)
	}
	if got := refill(8, time.Minute, 10, 10); got != 10 {
		t.Errorf("refill must cap at the burst, got %v", got)
	}
	if got := refill(0, 0, 0, 3); got != 3 {
		t.Errorf("no rate limit means a full bucket, got %v", got)
	}
}
