package definition

// Scatter bounds.
const (
	// HardMaxInlineChildren is the most inline children a scatter may
	// ever have, whatever the server allows.
	HardMaxInlineChildren = 10_000
	// DefaultMaxInlineChildren is a scatter's inline bound when neither
	// the step nor the definition's limits set one.
	DefaultMaxInlineChildren = 256
)

// withScatter reads the fields of the scatter's mode, refusing the other
// mode's.
func withScatter(_ *checker, spec WithSpec, o object, out map[string]any) {
	o.knownFields(spec.Fields)
	o.readMode(spec, "", out)
	mode := out["mode"].(string)
	o.forbidOtherModes(spec, mode)
	o.readMode(spec, mode, out)
}

// readMode reads the fields of one mode ("": those of every mode).
func (o object) readMode(spec WithSpec, mode string, out map[string]any) {
	for _, f := range spec.Fields {
		if f.Mode == mode {
			o.readField(f, out)
		}
	}
}

// readMaxInline defaults to the definition's limit, clamped to the
// server's.
func readMaxInline(o object, f Field, out map[string]any) {
	limit := o.intOr(f.Name, int64(o.c.m.Limits.MaxInlineChildren), f.Min, f.Max)
	out[f.Name] = min(limit, int64(o.c.opts.MaxInlineChildren))
}

func readTemplate(o object, _ Field, out map[string]any) {
	if !o.has("do") {
		o.problem("do", "is required in inline mode: a step template of type task, http or transform")
		return
	}
	if do := o.c.template(o); do != nil {
		out["do"] = do
	}
}

// template checks a scatter's `do` step template like a step of type
// task, http or transform, and returns it normalised.
func (c *checker) template(parent object) map[string]any {
	o, ok := c.object(parent.m["do"], parent.p.dot("do"), parent.step)
	if !ok {
		return nil
	}
	o.knownFields(templateFields)
	t := StepType(o.required("type"))
	if t != "" && !t.takesForEach() {
		o.problem("type", "a scatter template is a task, http or transform step, not %q", t)
		return nil
	}
	retry, timeout := c.attempts(o, t)
	out := map[string]any{
		"type":       string(t),
		"with":       c.with(o, t),
		"timeout_ms": timeout,
		"retry":      retryMap(retry),
	}
	if sc := (rules{c}).stepConcurrency(o, t); sc != nil {
		out["concurrency"] = stepConcurrencyMap(sc)
	}
	return out
}

func retryMap(r RetryPolicy) map[string]any {
	return map[string]any{
		"max_attempts":        int64(r.MaxAttempts),
		"initial_interval_ms": r.InitialIntervalMS,
		"backoff_coefficient": r.BackoffCoefficient,
		"max_interval_ms":     r.MaxIntervalMS,
		"jitter":              r.Jitter,
	}
}

func readCompleteWhen(o object, _ Field, out map[string]any) { completeWhen(o, out) }
