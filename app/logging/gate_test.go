package logging

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func gated(every time.Duration) (*slog.Logger, *Gate, *bytes.Buffer, *fakeClock) {
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	g := newGate(slog.NewTextHandler(&buf, nil), every, clock.now)
	return slog.New(g), g, &buf, clock
}

func lines(buf *bytes.Buffer) []string {
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

// An outage is logged once, then once per interval with how many lines
// were held back, and once when the database is back; other lines pass.
func TestGateReportsAnOutageOncePerInterval(t *testing.T) {
	t.Parallel()
	log, g, buf, clock := gated(30 * time.Second)
	refused := errors.New(`failed to connect to host=127.0.0.1 user=ductor database=ductor: dial error (dial tcp 127.0.0.1:5432: connect: connection refused)`)
	for range 100 {
		log.Error("producer: error fetching jobs", "err", refused.Error())
		log.Error("sweep", "err", refused)
		clock.add(100 * time.Millisecond) // 20 lines a second for 10 s
	}
	log.Info("request", "status", 503)
	clock.add(25 * time.Second)
	log.Error("sweep", "err", refused)
	g.st.recovered(context.Background())
	got := lines(buf)
	if len(got) != 4 {
		t.Fatalf("%d lines, want 4 (outage, still, request, back):\n%s", len(got), buf)
	}
	for i, want := range []string{"outage=", "msg=request", "msg=\"database still unreachable\"", "msg=\"database reachable again\""} {
		if !strings.Contains(got[i], want) {
			t.Errorf("line %d = %s, want %s", i, got[i], want)
		}
	}
	if !strings.Contains(got[2], "suppressed=200") || !strings.Contains(got[2], "outage_ms=35000") {
		t.Errorf("still-unreachable line %s", got[2])
	}
	if g.Down() {
		t.Error("still down after recovering")
	}
}

func TestGatePassesOtherErrors(t *testing.T) {
	t.Parallel()
	log, g, buf, _ := gated(time.Minute)
	log.Error("tick failed", "err", errors.New("decide run x: cel: no such key"))
	log.Warn("run ended", "status", "failed")
	if g.Down() || len(lines(buf)) != 2 {
		t.Errorf("down=%v, lines:\n%s", g.Down(), buf)
	}
}

func TestWatchEndsTheOutageWhenTheProbeSucceeds(t *testing.T) {
	t.Parallel()
	log, g, buf, _ := gated(time.Minute)
	log.Error("sweep", "err", "conn closed")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up := make(chan struct{})
	probes := 0
	go g.Watch(ctx, time.Millisecond, func(context.Context) error {
		if probes++; probes < 3 {
			return errors.New("connection refused")
		}
		close(up)
		return nil
	})
	<-up
	deadline := time.Now().Add(10 * time.Second)
	for g.Down() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // poll interval
	}
	if g.Down() || !strings.Contains(buf.String(), "database reachable again") {
		t.Fatalf("outage not ended:\n%s", buf)
	}
}

func TestDurationsAreMilliseconds(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, _, err := New(&buf, Options{Format: JSON})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("request", "duration", 1500*time.Millisecond)
	if !strings.Contains(buf.String(), `"duration_ms":1500`) {
		t.Errorf("line %s", buf.String())
	}
	if _, _, err := New(&buf, Options{Format: "xml"}); err == nil {
		t.Error("format xml accepted")
	}
}
