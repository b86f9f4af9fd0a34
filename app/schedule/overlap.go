package schedule

import (
	"fmt"
	"time"
)

// Overlap says what an action does while a run it (or an earlier action)
// started still runs.
type Overlap string

const (
	// OverlapSkip drops the action (the default).
	OverlapSkip Overlap = "skip"
	// OverlapBufferOne keeps one action to start when the run ends; more
	// are dropped.
	OverlapBufferOne Overlap = "buffer_one"
	// OverlapBufferAll keeps every action (up to MaxBuffered) and starts
	// them one after another.
	OverlapBufferAll Overlap = "buffer_all"
	// OverlapCancelOther cancels the running run and starts the action
	// once it has ended.
	OverlapCancelOther Overlap = "cancel_other"
	// OverlapTerminateOther terminates the running run and starts the
	// action at once.
	OverlapTerminateOther Overlap = "terminate_other"
	// OverlapAllowAll starts every action, whatever runs.
	OverlapAllowAll Overlap = "allow_all"
)

// Overlaps lists the policies.
var Overlaps = []Overlap{OverlapSkip, OverlapBufferOne, OverlapBufferAll, OverlapCancelOther, OverlapTerminateOther, OverlapAllowAll}

// MaxBuffered bounds the actions buffer_all keeps waiting; beyond it they
// are skipped and counted.
const MaxBuffered = 1000

// ParseOverlap reads a policy; empty means skip.
func ParseOverlap(s string) (Overlap, error) {
	if s == "" {
		return OverlapSkip, nil
	}
	for _, o := range Overlaps {
		if string(o) == s {
			return o, nil
		}
	}
	return "", fmt.Errorf("overlap must be one of skip, buffer_one, buffer_all, cancel_other, terminate_other, allow_all, not %q", s)
}

// Verdict is what one action does.
type Verdict int

const (
	// Start starts a run now.
	Start Verdict = iota
	// Buffer keeps the action to start when the running run ends.
	Buffer
	// Skip drops it.
	Skip
)

// Decide is the overlap policy's verdict for an action, given how many
// runs of the schedule still run and how many actions wait buffered;
// stop reports whether the running runs are to be cancelled
// (cancel_other) or terminated (terminate_other) first.
func (o Overlap) Decide(running, buffered int) (v Verdict, stop bool) {
	if o == OverlapAllowAll || (running == 0 && buffered == 0) {
		return Start, false
	}
	switch o {
	case OverlapBufferOne:
		if buffered == 0 {
			return Buffer, false
		}
	case OverlapBufferAll:
		if buffered < MaxBuffered {
			return Buffer, false
		}
	case OverlapCancelOther:
		if buffered == 0 {
			return Buffer, running > 0
		}
		return Skip, running > 0
	case OverlapTerminateOther:
		return Start, running > 0
	}
	return Skip, false
}

// DefaultCatchupWindow is how old a missed action may be and still run
// after an outage.
const DefaultCatchupWindow = time.Hour

// Pass is what a schedule due at next has to do at now.
type Pass struct {
	// Act are the due nominal times within the catchup window, oldest
	// first.
	Act []time.Time
	// Missed counts the due times older than the catchup window.
	Missed int64
	// Next is the first nominal time not handled (zero: none is left).
	Next time.Time
}

// maxSteps bounds the times one pass walks (a long outage of a
// minute-by-minute schedule is handled over several passes).
const maxSteps = 10000

// Due walks the nominal times from next while their action is due at now
// (nominal time plus jitter), acting on at most limit of them: those
// older than the catchup window are missed.
func (sc *Schedule) Due(key string, next, now time.Time, catchup time.Duration, limit int) Pass {
	p := Pass{Next: next}
	horizon := now.Add(-catchup)
	for steps := 0; !p.Next.IsZero() && steps < maxSteps && len(p.Act) < limit; steps++ {
		t := p.Next
		if t.Add(sc.Jitter(key, t)).After(now) {
			break
		}
		if t.Before(horizon) {
			n, after := sc.skipMissed(t, horizon)
			p.Missed += n
			p.Next = after
			continue
		}
		p.Act = append(p.Act, t)
		p.Next = sc.Next(t)
	}
	return p
}

// skipMissed counts the times from t (included) before horizon and
// returns the first one not before it. An interval schedule jumps there
// at once; a cron schedule steps, one time per call.
func (sc *Schedule) skipMissed(t, horizon time.Time) (int64, time.Time) {
	if sc.cron != nil || sc.spec.EndAt != nil {
		return 1, sc.Next(t)
	}
	n := int64(horizon.Sub(t) / sc.interval)
	if n == 0 {
		n = 1
	}
	return n, t.Add(time.Duration(n) * sc.interval)
}
