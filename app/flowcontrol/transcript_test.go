package flowcontrol

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/definition"

	"github.com/ductor/ductor/app/transcript"
)

var update = flag.Bool("update", false, "rewrite testdata transcripts with the actual output")

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestTranscripts replays every testdata/*.txt scenario through Decide:
// each block declares a start's keys and its keys' state, ends with
// `decide +T`, and after a ---- line has the verdict and the writes, up
// to a blank line. `go test ./app/flowcontrol -update` rewrites the
// expected parts; review the diff like code.
//
// Keys: `rate LIMIT/PERIOD [key=K]`, `throttle LIMIT/PERIOD [key=K]`,
// `debounce PERIOD [max=DUR] [key=K]`, `slot LIMIT STRATEGY [key=K]`
// (rules numbered in order), `run ID` (default new). State:
// `rate_starts +T...` and `throttle_starts +T...` (newest first),
// `open RUN [pending] [max=+T]`, `slot_state held=N waiting=N
// [oldest=ID,ID]` (one per slot, in order). Times are offsets from t0.
func TestTranscripts(t *testing.T) {
	t.Parallel()
	transcript.Replay(t, *update, func(t *testing.T) func([]string) string {
		return func(cmd []string) string { return replay(t, cmd) }
	})
}

// replay builds a start and a state from a block's lines and decides.
func replay(t *testing.T, cmd []string) string {
	s := Start{Run: "new"}
	var st State
	for _, line := range cmd {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		opts, args := options(f[1:])
		switch f[0] {
		case "run":
			s.Run = f[1]
		case "rate":
			s.Keys.RateLimit = window(t, "rate_limit", args[0], opts["key"])
		case "throttle":
			s.Keys.Throttle = window(t, "throttle", args[0], opts["key"])
		case "debounce":
			s.Keys.Debounce = &Quiet{Pool: "debounce", Key: opts["key"], Period: dur(t, args[0])}
			if m, ok := opts["max"]; ok {
				s.Keys.Debounce.MaxWait = dur(t, m)
			}
		case "slot":
			s.Keys.Slots = append(s.Keys.Slots, Slot{Rule: len(s.Keys.Slots), Pool: fmt.Sprintf("concurrency%d", len(s.Keys.Slots)),
				Key: opts["key"], Limit: atoi(t, args[0]), Strategy: definition.Strategy(args[1])})
		case "rate_starts":
			st.RateLimit = times(t, args)
		case "throttle_starts":
			st.Throttle = times(t, args)
		case "open":
			st.Debounce = &OpenDebounce{Run: args[0], Pending: len(args) > 1 && args[1] == "pending"}
			if m, ok := opts["max"]; ok {
				st.Debounce.MaxAt = at(t, m)
			}
		case "slot_state":
			ks := KeyState{Held: atoi(t, opts["held"]), Waiting: atoi(t, opts["waiting"])}
			if o := opts["oldest"]; o != "" {
				ks.Oldest = strings.Split(o, ",")
			}
			st.Slots = append(st.Slots, ks)
		case "decide":
			v, w := Decide(st, s, at(t, args[0]))
			return format(v, w)
		default:
			t.Fatalf("unknown command %q", line)
		}
	}
	t.Fatalf("a block without decide: %q", cmd)
	return ""
}

func options(f []string) (map[string]string, []string) {
	opts := map[string]string{}
	var args []string
	for _, x := range f {
		if k, v, ok := strings.Cut(x, "="); ok {
			opts[k] = v
		} else {
			args = append(args, x)
		}
	}
	return opts, args
}

func window(t *testing.T, pool, spec, key string) *Window {
	n, p, _ := strings.Cut(spec, "/")
	return &Window{Pool: pool, Key: key, Limit: atoi(t, n), Period: dur(t, p)}
}

func atoi(t *testing.T, s string) int {
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func dur(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func at(t *testing.T, s string) time.Time { return t0.Add(dur(t, strings.TrimPrefix(s, "+"))) }

func times(t *testing.T, args []string) []time.Time {
	out := make([]time.Time, len(args))
	for i, a := range args {
		out[i] = at(t, a)
	}
	return out
}

func rel(x time.Time) string {
	if x.IsZero() {
		return "-"
	}
	return "+" + x.Sub(t0).String()
}

// format prints a verdict and its writes, one write a line.
func format(v Verdict, w Writes) string {
	var b strings.Builder
	b.WriteString(v.Outcome.String())
	if v.RetryAfter > 0 {
		fmt.Fprintf(&b, " retry_after=%s", v.RetryAfter)
	}
	if r := v.Refused; r != nil {
		fmt.Fprintf(&b, " by=concurrency[%d] key=%q limit=%d", r.Rule, r.Key, r.Limit)
	}
	if w.Held {
		b.WriteString("\nheld")
	}
	for _, c := range w.Counts {
		fmt.Fprintf(&b, "\ncount %s key=%q at=%s period=%s", c.Pool, c.Key, rel(c.At), c.Period)
	}
	if j := w.Join; j != nil {
		fmt.Fprintf(&b, "\njoin %s key=%q run=%s due=%s", j.Pool, j.Key, j.Run, rel(j.Due))
	}
	if o := w.Open; o != nil {
		fmt.Fprintf(&b, "\nopen %s key=%q max=%s", o.Pool, o.Key, rel(o.MaxAt))
	}
	for _, sl := range w.Slots {
		state := "waiting"
		if w.SlotsHeld {
			state = "held"
		}
		fmt.Fprintf(&b, "\nslot %s concurrency[%d] key=%q limit=%d %s", state, sl.Rule, sl.Key, sl.Limit, sl.Strategy)
	}
	if h := w.Hold; h != nil {
		fmt.Fprintf(&b, "\nhold %s due=%s", h.Kind, rel(h.Due))
		for _, r := range h.Rules {
			fmt.Fprintf(&b, " %s:%q", r.Rule, r.Key)
			if r.Limit > 0 {
				fmt.Fprintf(&b, "/%d", r.Limit)
			}
		}
	}
	if len(w.Cancel) > 0 {
		fmt.Fprintf(&b, "\ncancel %s", strings.Join(w.Cancel, " "))
	}
	return b.String()
}
