package definition

import (
	"fmt"

	"github.com/ductor/ductor/app/expr"
)

// Definition-wide bounds.
const (
	MaxSteps = 1000
	MaxEdges = 5000
)

// Default server maxima for the ContinueAsNew tiers (see runtime.md).
const (
	DefaultTransitionsSoft      = 10_000
	DefaultTransitionsHard      = 50_000
	DefaultTransitionsTerminate = 60_000
)

// Options are the server's maxima and the expression environment. A
// definition's limits default to the maxima and are clamped to them.
type Options struct {
	// MaxInlineChildren caps every scatter's inline bound; at most
	// HardMaxInlineChildren.
	MaxInlineChildren    int
	TransitionsSoft      int
	TransitionsHard      int
	TransitionsTerminate int

	// Env compiles expressions; nil means a shared environment with the
	// default limits.
	Env *expr.Env
	// Cache, when set, lets repeated compilations share expression
	// programs.
	Cache *expr.Cache
}

// DefaultOptions are the maxima a server uses unless configured otherwise.
func DefaultOptions() Options {
	return Options{
		MaxInlineChildren:    HardMaxInlineChildren,
		TransitionsSoft:      DefaultTransitionsSoft,
		TransitionsHard:      DefaultTransitionsHard,
		TransitionsTerminate: DefaultTransitionsTerminate,
	}
}

func (o Options) validate() error {
	if o.MaxInlineChildren < 1 || o.MaxInlineChildren > HardMaxInlineChildren {
		return fmt.Errorf("definition: MaxInlineChildren must be 1..%d, not %d", HardMaxInlineChildren, o.MaxInlineChildren)
	}
	if o.TransitionsSoft < 1 || o.TransitionsSoft > o.TransitionsHard || o.TransitionsHard > o.TransitionsTerminate {
		return fmt.Errorf("definition: transition maxima must satisfy 1 ≤ soft ≤ hard ≤ terminate: %d, %d, %d",
			o.TransitionsSoft, o.TransitionsHard, o.TransitionsTerminate)
	}
	return nil
}

// limits reads the definition's limits, defaulting and clamping each to
// the server maximum.
func (c *checker) limits(parent object) Limits {
	l := Limits{
		MaxInlineChildren:    min(DefaultMaxInlineChildren, c.opts.MaxInlineChildren),
		TransitionsSoft:      c.opts.TransitionsSoft,
		TransitionsHard:      c.opts.TransitionsHard,
		TransitionsTerminate: c.opts.TransitionsTerminate,
	}
	v, ok := parent.m["limits"]
	if !ok {
		return l
	}
	o, ok := c.object(v, "limits", "")
	if !ok {
		return l
	}
	o.knownFields(LimitsFields)
	l.MaxInlineChildren = int(min(o.intOr("max_inline_children", int64(l.MaxInlineChildren), 1, HardMaxInlineChildren), int64(c.opts.MaxInlineChildren)))
	l.TransitionsSoft = clampInt(o, "transitions_soft", l.TransitionsSoft)
	l.TransitionsHard = clampInt(o, "transitions_hard", l.TransitionsHard)
	l.TransitionsTerminate = clampInt(o, "transitions_terminate", l.TransitionsTerminate)
	if l.TransitionsSoft > l.TransitionsHard || l.TransitionsHard > l.TransitionsTerminate {
		c.ps.add("limits", "", "transition limits must satisfy soft ≤ hard ≤ terminate, got %d, %d, %d",
			l.TransitionsSoft, l.TransitionsHard, l.TransitionsTerminate)
	}
	return l
}

// clampInt reads a positive integer and clamps it to maximum.
func clampInt(o object, key string, maximum int) int {
	return int(min(o.intOr(key, int64(maximum), 1, 1<<31-1), int64(maximum)))
}
