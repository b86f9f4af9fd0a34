package definition

import (
	"time"

	"github.com/ductor/ductor/app/expr"
)

// Step defaults.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultMaxAttempts  = 3
	DefaultInitialRetry = time.Second
	DefaultBackoff      = 2.0
	DefaultMaxRetry     = time.Minute
	maxAttemptsCap      = 100
	maxBackoff          = 100.0
)

func (c *checker) steps(o object) {
	list := o.list("steps", true)
	if l, isList := o.m["steps"].([]any); isList && len(l) == 0 {
		o.problem("steps", "a definition needs at least one step")
	}
	if len(list) > MaxSteps {
		o.problem("steps", "at most %d steps, found %d", MaxSteps, len(list))
	}
	for i, v := range list {
		if s := c.step(v, o.p.dot("steps").at(i), i); s != nil {
			c.m.Steps = append(c.m.Steps, *s)
		}
	}
	c.sortSteps()
}

// step checks one step and returns it normalised; nil when it is not an
// object.
func (c *checker) step(v any, p path, i int) *Step {
	ref := peekString(v, "ref")
	o, ok := c.object(v, p, ref)
	if !ok {
		return nil
	}
	o.knownFields(StepFields)
	s := &Step{Ref: c.ref(o, i)}
	s.Name, _ = o.str("name")
	s.Type = c.stepType(o)
	if _, seen := c.types[s.Ref]; !seen && s.Ref != "" {
		c.types[s.Ref] = s.Type
	}
	c.join(o, s)
	c.endRun(o, s)
	s.OnError = OnError(o.enum("on_error", string(OnErrorFail), string(OnErrorFail), string(OnErrorContinue)))
	s.RunIf, _ = o.expr("run_if", expr.KindBool)
	c.forEach(o, s)
	s.Retry, s.TimeoutMS = c.attempts(o, s.Type)
	s.Concurrency = rules{c}.stepConcurrency(o, s.Type)
	s.With = c.with(o, s.Type)
	return s
}

func peekString(v any, key string) string {
	m, _ := v.(map[string]any)
	s, _ := m[key].(string)
	return s
}

// ref checks the ref's format and uniqueness.
func (c *checker) ref(o object, i int) string {
	ref := o.required("ref")
	if ref == "" {
		return ""
	}
	if !refPattern.MatchString(ref) {
		o.problem("ref", "must match [a-z][a-z0-9_]{0,62}, not %q", ref)
	}
	if first, dup := c.refs[ref]; dup {
		o.problem("ref", "duplicate ref %q (also steps[%d])", ref, first)
		return ref
	}
	c.refs[ref] = i
	c.paths[ref] = o.p
	return ref
}

func (c *checker) stepType(o object) StepType {
	name := o.required("type")
	if name == "" {
		return ""
	}
	t := StepType(name)
	if !t.Valid() {
		o.problem("type", "%s", stepTypeProblem(name))
	}
	return t
}

func (c *checker) forEach(o object, s *Step) {
	src, ok := o.expr("for_each", expr.KindList)
	if !ok {
		return
	}
	if s.Type.Valid() && !s.Type.takesForEach() {
		o.problem("for_each", "for_each applies only to task, http and transform steps, not %s", s.Type)
		return
	}
	s.ForEach = src
}

// attempts reads retry and timeout: worker types get defaults, the other
// types one attempt and no per-attempt timeout.
func (c *checker) attempts(o object, t StepType) (RetryPolicy, int64) {
	if !t.usesRetry() {
		for _, k := range []string{"retry", "timeout"} {
			if o.has(k) && t.Valid() {
				o.problem(k, "%s applies only to task and http steps; %s steps run once", k, t)
			}
		}
		return RetryPolicy{MaxAttempts: 1}, 0
	}
	return c.retry(o), o.durationMS("timeout", DefaultTimeout.Milliseconds())
}

// DefaultRetry is the retry policy of task and http steps.
func DefaultRetry() RetryPolicy {
	return RetryPolicy{
		MaxAttempts:        DefaultMaxAttempts,
		InitialIntervalMS:  DefaultInitialRetry.Milliseconds(),
		BackoffCoefficient: DefaultBackoff,
		MaxIntervalMS:      DefaultMaxRetry.Milliseconds(),
		Jitter:             true,
	}
}

func (c *checker) retry(parent object) RetryPolicy {
	r := DefaultRetry()
	v, ok := parent.m["retry"]
	if !ok {
		return r
	}
	o, ok := c.object(v, parent.p.dot("retry"), parent.step)
	if !ok {
		return r
	}
	o.knownFields(RetryFields)
	r.MaxAttempts = int(o.intOr("max_attempts", DefaultMaxAttempts, 1, maxAttemptsCap))
	r.InitialIntervalMS = o.durationMS("initial_interval", r.InitialIntervalMS)
	r.MaxIntervalMS = o.durationMS("max_interval", r.MaxIntervalMS)
	r.BackoffCoefficient = o.backoff(r.BackoffCoefficient)
	if j, ok := o.boolean("jitter"); ok {
		r.Jitter = j
	}
	if r.MaxIntervalMS < r.InitialIntervalMS {
		o.problem("max_interval", "must not be shorter than initial_interval (%s)",
			time.Duration(r.InitialIntervalMS)*time.Millisecond)
	}
	return r
}

func (o object) backoff(def float64) float64 {
	v, ok := o.m["backoff_coefficient"]
	if !ok {
		return def
	}
	f, isNum := asFloat(v)
	if !isNum || f < 1 || f > maxBackoff {
		o.problem("backoff_coefficient", "must be a number from 1 to %v, not %s", maxBackoff, describe(v))
		return def
	}
	return f
}

// with checks the type's settings and returns them normalised.
func (c *checker) with(o object, t StepType) map[string]any {
	w := map[string]any{}
	v, ok := o.m["with"]
	if !ok {
		v = map[string]any{}
	}
	wo, isObj := c.object(v, o.p.dot("with"), o.step)
	spec, known := withSpecIndex[t]
	if !isObj || !known {
		return w
	}
	check, special := withCheckers[t]
	if !special {
		check = withTable
	}
	check(c, spec, wo, w)
	return w
}
