package testwait

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

type fakeTB struct{ failed string }

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	Eventually(t, 5*time.Second, "the third poll", func() bool { return n.Add(1) >= 3 })
	if got := n.Load(); got != 3 {
		t.Fatalf("polled %d times, want 3", got)
	}
}

func TestEventuallyFailsNamingWhatDidNotHappen(t *testing.T) {
	t.Parallel()
	f := &fakeTB{}
	Eventually(f, 30*time.Millisecond, "the impossible", func() bool { return false })
	if f.failed != "not within 30ms: the impossible" {
		t.Fatalf("failure = %q", f.failed)
	}
}

func TestValueGivesTheValueThatHeld(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	got := Value(t, 5*time.Second, "two", func() (int32, bool) { v := n.Add(1); return v, v == 2 })
	if got != 2 {
		t.Fatalf("value = %d, want 2", got)
	}
}

func TestUntilStopsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Until(ctx, time.Hour, func() bool { return false }) {
		t.Fatal("Until held for a condition that never holds")
	}
}
