package logging

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Gate is a slog.Handler that keeps a database outage from flooding the
// log. While Postgres is unreachable every part of a process (River's
// producers on each queue, the sweep, the API) fails and says so, tens of
// times a second. The gate lets the first such line through, marked as the
// start of an outage, then holds the others back and writes one line every
// interval with how many it held; and once the database answers again
// (Watch probes it) it writes one line saying so, with how long the outage
// lasted. Every other line passes through untouched.
type Gate struct {
	next slog.Handler
	st   *gateState
}

type gateState struct {
	mu         sync.Mutex
	out        slog.Handler // where the gate's own lines go
	every      time.Duration
	now        func() time.Time
	down       bool
	since      time.Time
	reported   time.Time
	suppressed int
	// settle is when the errors of connections broken by an outage that
	// just ended stop counting as a new one.
	settle time.Time
}

// settleFor is how long after an outage a failing connection is taken
// for one it broke rather than a new outage.
const settleFor = 5 * time.Second

func newGate(h slog.Handler, every time.Duration, now func() time.Time) *Gate {
	return &Gate{next: h, st: &gateState{out: h, every: every, now: now}}
}

// Enabled implements slog.Handler.
func (g *Gate) Enabled(ctx context.Context, l slog.Level) bool { return g.next.Enabled(ctx, l) }

// WithAttrs implements slog.Handler.
func (g *Gate) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Gate{next: g.next.WithAttrs(attrs), st: g.st}
}

// WithGroup implements slog.Handler.
func (g *Gate) WithGroup(name string) slog.Handler {
	return &Gate{next: g.next.WithGroup(name), st: g.st}
}

// Handle implements slog.Handler.
func (g *Gate) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn || !unreachable(r) {
		return g.next.Handle(ctx, r)
	}
	return g.st.outage(ctx, g.next, r)
}

// outage handles a line that says the database is unreachable.
func (s *gateState) outage(ctx context.Context, next slog.Handler, r slog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	switch {
	case !s.down && now.Before(s.settle):
		return nil
	case !s.down:
		s.down, s.since, s.reported, s.suppressed = true, now, now, 0
		r = r.Clone()
		r.AddAttrs(slog.String("outage", "the database is unreachable; until it is back, its errors are reported every "+s.every.String()))
		return next.Handle(ctx, r)
	case now.Sub(s.reported) >= s.every:
		n := s.suppressed
		s.reported, s.suppressed = now, 0
		return s.line(ctx, slog.LevelError, "database still unreachable", now,
			slog.Int64("outage_ms", now.Sub(s.since).Milliseconds()), slog.Int("suppressed", n+1),
			slog.String("last_message", r.Message))
	default:
		s.suppressed++
		return nil
	}
}

func (s *gateState) line(ctx context.Context, level slog.Level, msg string, at time.Time, attrs ...slog.Attr) error {
	r := slog.NewRecord(at, level, msg, 0)
	r.AddAttrs(attrs...)
	return s.out.Handle(ctx, r)
}

// Down reports whether the gate is holding an outage's lines back.
func (g *Gate) Down() bool {
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	return g.st.down
}

// recovered ends an outage: one line says the database is back.
func (s *gateState) recovered(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down {
		return
	}
	now := s.now()
	s.down, s.settle = false, now.Add(settleFor)
	_ = s.line(ctx, slog.LevelInfo, "database reachable again", now,
		slog.Int64("outage_ms", now.Sub(s.since).Milliseconds()), slog.Int("suppressed", s.suppressed))
}

// Watch probes the database every interval while an outage lasts, and
// ends the outage once probe succeeds, until ctx ends.
func (g *Gate) Watch(ctx context.Context, every time.Duration, probe func(context.Context) error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !g.Down() {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, every)
		err := probe(pctx)
		cancel()
		if err == nil {
			g.st.recovered(ctx)
		}
	}
}

// unreachable reports whether a line says the database cannot be reached:
// one of its attributes is (or reads as) a connection failure.
func unreachable(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = attrUnreachable(a.Value.Resolve())
		return !found
	})
	return found
}

func attrUnreachable(v slog.Value) bool {
	switch v.Kind() {
	case slog.KindString:
		return connectionFailure(v.String())
	case slog.KindGroup:
		for _, a := range v.Group() {
			if attrUnreachable(a.Value.Resolve()) {
				return true
			}
		}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return errUnreachable(err)
		}
	}
	return false
}

func errUnreachable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) {
		return true
	}
	return connectionFailure(err.Error())
}

// connectionFailures are what pgx, Go's net package and Postgres say when
// the server is down, restarting or gone: refused or reset connections,
// connections closed under a query, a server shutting down or recovering.
var connectionFailures = []string{
	"failed to connect", "connection refused", "connection reset", "broken pipe", "conn closed",
	"unexpected eof", "no such host", "i/o timeout", "server closed the connection",
	"the database system is starting up", "the database system is shutting down",
	"the database system is in recovery mode", "terminating connection due to administrator command",
	"sqlstate 57p01", "sqlstate 57p02", "sqlstate 57p03", "sqlstate 08",
}

func connectionFailure(s string) bool {
	s = strings.ToLower(s)
	for _, f := range connectionFailures {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}
