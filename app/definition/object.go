package definition

import (
	"fmt"
	"time"

	"github.com/ductor/ductor/app/expr"
)

// object reads one JSON object of a document, reporting every problem with
// its path and step.
type object struct {
	m    map[string]any
	p    path
	step string
	c    *checker
}

// object returns v as an object, or reports that it is not one.
func (c *checker) object(v any, p path, step string) (object, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		c.ps.add(p, step, "must be an object, not %s", jsonType(v))
		return object{}, false
	}
	return object{m: m, p: p, step: step, c: c}, true
}

func (o object) problem(key, format string, args ...any) {
	o.c.ps.add(o.p.dot(key), o.step, format, args...)
}

func (o object) has(key string) bool {
	_, ok := o.m[key]
	return ok
}

// known reports every field not among names, suggesting near misses.
func (o object) known(names ...string) {
	for _, k := range sortedKeys(o.m) {
		if !contains(names, k) {
			o.problem(k, "unknown field %q%s", k, suggest(k, names))
		}
	}
}

func contains(names []string, k string) bool {
	for _, n := range names {
		if n == k {
			return true
		}
	}
	return false
}

func suggest(k string, names []string) string {
	for _, n := range names {
		if editDistance(k, n) <= 2 && len(k) > 2 {
			return fmt.Sprintf(": did you mean %q?", n)
		}
	}
	return ""
}

// str reads an optional string; ok is false when absent or invalid.
func (o object) str(key string) (string, bool) {
	v, present := o.m[key]
	if !present {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		o.problem(key, "must be a string, not %s", jsonType(v))
		return "", false
	}
	return s, true
}

// required reads a string that must be present and not empty.
func (o object) required(key string) string {
	if !o.has(key) {
		o.c.ps.add(o.p.dot(key), o.step, "is required")
		return ""
	}
	s, ok := o.str(key)
	if ok && s == "" {
		o.problem(key, "must not be empty")
	}
	return s
}

func (o object) strOr(key, def string) string {
	if s, ok := o.str(key); ok && s != "" {
		return s
	}
	return def
}

// enum reads a string among allowed, def when absent.
func (o object) enum(key, def string, allowed ...string) string {
	s, ok := o.str(key)
	if !ok {
		return def
	}
	if !contains(allowed, s) {
		o.problem(key, "must be one of %s, not %q", quoteList(allowed), s)
		return def
	}
	return s
}

func quoteList(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", x)
	}
	return out
}

// integer reads an optional integer within [lo, hi].
func (o object) integer(key string, lo, hi int64) (int64, bool) {
	v, present := o.m[key]
	if !present {
		return 0, false
	}
	i, ok := asInt(v)
	if !ok {
		o.problem(key, "must be an integer, not %s", describe(v))
		return 0, false
	}
	if i < lo || i > hi {
		o.problem(key, "must be between %d and %d, not %d", lo, hi, i)
		return 0, false
	}
	return i, true
}

func (o object) intOr(key string, def, lo, hi int64) int64 {
	if i, ok := o.integer(key, lo, hi); ok {
		return i
	}
	return def
}

func (o object) boolean(key string) (bool, bool) {
	v, present := o.m[key]
	if !present {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		o.problem(key, "must be true or false, not %s", jsonType(v))
	}
	return b, ok
}

// duration reads a Go or ISO-8601 duration that must be positive.
func (o object) duration(key string) (time.Duration, bool) {
	s, ok := o.str(key)
	if !ok {
		return 0, false
	}
	d, err := ParseDuration(s)
	if err != nil {
		o.problem(key, "%v", err)
		return 0, false
	}
	if d <= 0 {
		o.problem(key, "must be positive")
		return 0, false
	}
	return d, true
}

// durationMS reads a duration in milliseconds, def when absent.
func (o object) durationMS(key string, def int64) int64 {
	if d, ok := o.duration(key); ok {
		return d.Milliseconds()
	}
	return def
}

// expr reads an expression field and queues it for compilation.
func (o object) expr(key string, kind expr.Kind) (string, bool) {
	s, ok := o.str(key)
	if !ok {
		return "", false
	}
	o.c.queueExpr(s, kind, o.p.dot(key), o.step)
	return s, true
}

// exprInto copies an optional expression field into out.
func (o object) exprInto(out map[string]any, key string, kind expr.Kind) {
	if s, ok := o.expr(key, kind); ok {
		out[key] = s
	}
}

// oneOf reports unless exactly one (or, optional, at most one) of keys
// is set; it returns the one set.
func (o object) oneOf(optional bool, keys ...string) string {
	var set []string
	for _, k := range keys {
		if o.has(k) {
			set = append(set, k)
		}
	}
	switch {
	case len(set) == 1:
		return set[0]
	case len(set) > 1:
		o.c.ps.add(o.p.dot(set[1]), o.step, "set only one of %s", quoteList(keys))
	case !optional:
		o.c.ps.add(o.p, o.step, "one of %s is required", quoteList(keys))
	}
	return ""
}

func describe(v any) string {
	if n, ok := v.(interface{ String() string }); ok {
		return n.String()
	}
	return jsonType(v)
}

// strings reads an optional list of non-empty strings.
func (o object) strings(key string) ([]any, bool) {
	v, present := o.m[key]
	if !present {
		return nil, false
	}
	list, ok := v.([]any)
	if !ok {
		o.problem(key, "must be a list of strings, not %s", jsonType(v))
		return nil, false
	}
	out := make([]any, 0, len(list))
	for i, x := range list {
		s, isStr := x.(string)
		if !isStr || s == "" {
			o.c.ps.add(o.p.dot(key).at(i), o.step, "must be a non-empty string")
			continue
		}
		out = append(out, s)
	}
	return out, true
}
