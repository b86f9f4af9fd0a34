// Package logging builds a Ductor process's log/slog logger: JSON (for
// serve, where logs are collected) or text (for dev, where a person reads
// them), behind an outage gate that keeps a database outage from flooding
// the log (see Gate).
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Formats a logger writes.
const (
	JSON = "json"
	Text = "text"
)

// Options choose a logger's format and level, and how often an outage is
// reported again while it lasts (default DefaultOutageEvery).
type Options struct {
	Format      string
	Level       slog.Level
	OutageEvery time.Duration
}

// DefaultOutageEvery is how often a database outage is reported again
// while it lasts.
const DefaultOutageEvery = 30 * time.Second

// New returns a logger writing to w behind an outage gate, and the gate.
func New(w io.Writer, opts Options) (*slog.Logger, *Gate, error) {
	ho := &slog.HandlerOptions{Level: opts.Level, ReplaceAttr: durationsAsMS}
	var h slog.Handler
	switch opts.Format {
	case JSON, "":
		h = slog.NewJSONHandler(w, ho)
	case Text:
		h = slog.NewTextHandler(w, ho)
	default:
		return nil, nil, fmt.Errorf("log format %q is not json or text", opts.Format)
	}
	if opts.OutageEvery <= 0 {
		opts.OutageEvery = DefaultOutageEvery
	}
	g := newGate(h, opts.OutageEvery, time.Now)
	return slog.New(g), g, nil
}

// durationsAsMS writes a time.Duration attribute named "duration" (or
// ending in _duration) as whole milliseconds under NAME_ms, so every
// duration in the log reads the same way: duration_ms.
func durationsAsMS(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	return slog.Int64(a.Key+"_ms", a.Value.Duration().Milliseconds())
}
