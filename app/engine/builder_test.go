package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ductor/ductor/app/definition"
)

// parseManifest builds a manifest from the small line format the tests
// and transcripts use (app/definition's compiler is not needed):
//
//	step REF TYPE [key=value]...   join, at_least, cancel_rest, end_run, on_error, run_if, for_each, retry, timeout_ms, concurrency; the rest goes to with
//	edge FROM TO [on=OUTCOME]
//	choice FROM TO INDEX (when=`CEL` | default)
//	output_expr `CEL`
//	timeout_ms N
//	limits SOFT HARD TERMINATE [MAX_INLINE]
//
// Values are JSON when they parse as JSON, else strings; `backticks`
// quote values with spaces.
func parseManifest(src string) (*definition.Manifest, error) {
	m := &definition.Manifest{Key: "test"}
	for i, line := range strings.Split(src, "\n") {
		f := tokens(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if err := manifestLine(m, f); err != nil {
			return nil, fmt.Errorf("line %d: %q: %w", i+1, line, err)
		}
	}
	slices.SortFunc(m.Steps, func(a, b definition.Step) int { return strings.Compare(a.Ref, b.Ref) })
	m.Order, m.Entrypoints = kahn(m)
	return m, nil
}

func manifestLine(m *definition.Manifest, f []string) error {
	switch f[0] {
	case "step":
		if len(f) < 3 {
			return fmt.Errorf("want step REF TYPE")
		}
		m.Steps = append(m.Steps, buildStep(f[1], definition.StepType(f[2]), kv(f[3:])))
	case "edge":
		e := definition.Edge{From: f[1], To: f[2], On: definition.OutcomeSuccess}
		if on, ok := kv(f[3:])["on"]; ok {
			e.On = definition.Outcome(fmt.Sprint(on))
		}
		m.Edges = append(m.Edges, e)
	case "choice":
		idx, _ := strconv.Atoi(f[3])
		opts := kv(f[4:])
		b := &definition.Branch{Index: idx, Default: opts["default"] != nil}
		b.When, _ = opts["when"].(string)
		m.Edges = append(m.Edges, definition.Edge{From: f[1], To: f[2], On: definition.OutcomeSuccess, Choice: b})
	case "output_expr":
		m.OutputExpr = f[1]
	case "timeout_ms":
		m.TimeoutMS, _ = strconv.ParseInt(f[1], 10, 64)
	case "limits":
		n := make([]int, 4)
		for i := 1; i < len(f) && i <= 4; i++ {
			n[i-1], _ = strconv.Atoi(f[i])
		}
		m.Limits = definition.Limits{TransitionsSoft: n[0], TransitionsHard: n[1], TransitionsTerminate: n[2], MaxInlineChildren: n[3]}
	default:
		return fmt.Errorf("unknown directive %q", f[0])
	}
	return nil
}

func buildStep(ref string, t definition.StepType, opts map[string]any) definition.Step {
	s := definition.Step{Ref: ref, Type: t, Join: definition.JoinAll, OnError: definition.OnErrorFail, With: map[string]any{}}
	s.Retry = definition.RetryPolicy{MaxAttempts: 1}
	if t == definition.TypeTask || t == definition.TypeHTTP {
		s.Retry = definition.RetryPolicy{MaxAttempts: 3, InitialIntervalMS: 1000, BackoffCoefficient: 2, MaxIntervalMS: 60000, Jitter: true}
		s.TimeoutMS = 60000
	}
	for k, v := range opts {
		str, _ := v.(string)
		switch k {
		case "join":
			s.Join = definition.Join(str)
		case "at_least":
			s.Join, s.JoinAtLeast = definition.JoinAtLeast, int(floatOf(v))
		case "cancel_rest":
			s.JoinCancelRest = v == true
		case "end_run":
			s.EndRun = definition.RunEnd(str)
		case "on_error":
			s.OnError = definition.OnError(str)
		case "run_if":
			s.RunIf = str
		case "for_each":
			s.ForEach = str
		case "retry":
			s.Retry.MaxAttempts = int(floatOf(v))
		case "jitter":
			s.Retry.Jitter = v == true
		case "concurrency":
			c, isPool := v.(map[string]any)
			if !isPool {
				s.With[k] = v // a scatter's children in flight
				continue
			}
			s.Concurrency = &definition.StepConcurrency{KeyExpr: fmt.Sprint(c["key_expr"]), Limit: int(floatOf(c["limit"]))}
			if e, ok := c["limit_expr"].(string); ok {
				s.Concurrency.LimitExpr = e
			}
		case "timeout_ms":
			if t != definition.TypeTask && t != definition.TypeHTTP {
				s.With[k] = v // the parking types' own timeout
				continue
			}
			s.TimeoutMS = int64(floatOf(v))
		default:
			s.With[k] = v
		}
	}
	return s
}

// kahn is the compiler's topological order: ties broken by ref.
func kahn(m *definition.Manifest) (order, entry []string) {
	indeg := map[string]int{}
	for _, s := range m.Steps {
		indeg[s.Ref] += 0
	}
	for _, e := range m.Edges {
		indeg[e.To]++
	}
	var ready []string
	for ref, d := range indeg {
		if d == 0 {
			ready = append(ready, ref)
		}
	}
	slices.Sort(ready)
	entry = slices.Clone(ready)
	for len(ready) > 0 {
		cur := ready[0]
		ready = ready[1:]
		order = append(order, cur)
		for _, e := range m.Edges {
			if e.From == cur {
				if indeg[e.To]--; indeg[e.To] == 0 {
					ready = append(ready, e.To)
					slices.Sort(ready)
				}
			}
		}
	}
	return order, entry
}

// tokens splits on spaces; `backticks` keep spaces, also after key=.
func tokens(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, has := false, false
	for _, r := range strings.TrimSpace(line) {
		switch {
		case r == '`':
			quoted, has = !quoted, true
		case r == ' ' && !quoted:
			if has {
				out = append(out, cur.String())
			}
			cur.Reset()
			has = false
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}

// kv parses key=value tokens; a bare token is key=true.
func kv(f []string) map[string]any {
	out := map[string]any{}
	for _, t := range f {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			out[k] = true
			continue
		}
		if rawKeys[k] || strings.HasSuffix(k, "_expr") {
			out[k] = v
			continue
		}
		out[k] = jsonOrString(v)
	}
	return out
}

// rawKeys hold CEL or names: never parsed as JSON.
var rawKeys = map[string]bool{"expr": true, "when": true, "run_if": true, "for_each": true, "name": true, "url": true, "title": true}

// jsonOrString decodes numbers as json.Number, as the shell does, so
// integers stay integers in CEL.
func jsonOrString(v string) any {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err == nil && !dec.More() {
		return x
	}
	return v
}
