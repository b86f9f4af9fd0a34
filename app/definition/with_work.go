package definition

import (
	"net/url"
	"strings"

	"github.com/ductor/ductor/app/expr"
)

// withCheckers check and normalise each type's `with` settings into out.
var withCheckers map[StepType]func(c *checker, o object, out map[string]any)

func init() {
	withCheckers = map[StepType]func(*checker, object, map[string]any){
		TypeTask: withTask, TypeHTTP: withHTTP, TypeTransform: withTransform,
		TypeCondition: withCondition, TypeScatter: withScatter, TypeGather: withGather,
		TypeSubworkflow: withSubworkflow, TypeCheckpoint: withCheckpoint, TypeWait: withWait,
		TypeSignal: withSignal, TypeEvent: withEvent, TypeEventSet: withEventSet,
		TypeDigest: withDigest, TypeApproval: withApproval, TypeHumanLoop: withHumanLoop,
	}
}

var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// BuiltinHandlers are the task handlers every Ductor server runs; any
// other name under builtin. is a mistake.
var BuiltinHandlers = []string{"builtin.echo", "builtin.fail", "builtin.noop", "builtin.sleep"}

func withTask(_ *checker, o object, out map[string]any) {
	o.known("handler", "queue", "input_expr", "schedule_to_start")
	h := o.required("handler")
	out["handler"] = h
	if strings.HasPrefix(h, "builtin.") && !contains(BuiltinHandlers, h) {
		o.problem("handler", "unknown built-in handler %q%s (built-in: %s)", h, suggest(h, BuiltinHandlers), strings.Join(BuiltinHandlers, ", "))
	}
	out["queue"] = o.strOr("queue", "default")
	o.exprInto(out, "input_expr", expr.KindAny)
	// Absent, the tenant's setting applies (default 5m): not made explicit,
	// so that changing the setting reaches published definitions.
	if o.has("schedule_to_start") {
		out["schedule_to_start_ms"] = o.durationMS("schedule_to_start", 0)
	}
}

func withHTTP(c *checker, o object, out map[string]any) {
	o.known("url", "url_expr", "method", "headers", "body", "body_expr", "expect_status")
	switch o.oneOf(false, "url", "url_expr") {
	case "url":
		out["url"] = checkURL(o)
	case "url_expr":
		o.exprInto(out, "url_expr", expr.KindString)
	}
	out["method"] = httpMethod(o)
	if h := headers(o); len(h) > 0 {
		out["headers"] = h
	}
	switch o.oneOf(true, "body", "body_expr") {
	case "body":
		out["body"] = o.m["body"]
	case "body_expr":
		o.exprInto(out, "body_expr", expr.KindAny)
	}
	if st := expectStatus(o); st != nil {
		out["expect_status"] = st
	}
}

func checkURL(o object) string {
	s := o.required("url")
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		o.problem("url", "must be an absolute http or https URL, not %q", s)
	}
	return s
}

func httpMethod(o object) string {
	m, ok := o.str("method")
	if !ok {
		return "GET"
	}
	up := strings.ToUpper(m)
	if !contains(httpMethods, up) {
		o.problem("method", "must be one of %s, not %q", quoteList(httpMethods), m)
	}
	return up
}

func headers(o object) map[string]any {
	v, ok := o.m["headers"]
	if !ok {
		return nil
	}
	h, isObj := o.c.object(v, o.p.dot("headers"), o.step)
	if !isObj {
		return nil
	}
	out := map[string]any{}
	for _, k := range sortedKeys(h.m) {
		if s, ok := h.str(k); ok {
			out[k] = s
		}
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			h.problem(k, "invalid header name %q", k)
		}
	}
	return out
}

// expectStatus reads one status code or a list; nil means any 2xx.
func expectStatus(o object) []any {
	v, ok := o.m["expect_status"]
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		list = []any{v}
	}
	out := make([]any, 0, len(list))
	for i, x := range list {
		code, isInt := asInt(x)
		if !isInt || code < 100 || code > 599 {
			p := o.p.dot("expect_status")
			if isList {
				p = p.at(i)
			}
			o.c.ps.add(p, o.step, "must be an HTTP status code from 100 to 599, not %s", describe(x))
			continue
		}
		out = append(out, code)
	}
	return out
}

func withTransform(_ *checker, o object, out map[string]any) {
	o.known("expr")
	requiredExpr(o, out, "expr", expr.KindAny)
}

func withCondition(_ *checker, o object, out map[string]any) {
	o.known("expr")
	requiredExpr(o, out, "expr", expr.KindBool)
}

func requiredExpr(o object, out map[string]any, key string, kind expr.Kind) {
	if !o.has(key) {
		o.problem(key, "is required")
		return
	}
	o.exprInto(out, key, kind)
}

func withGather(c *checker, o object, out map[string]any) {
	o.known("scatter_ref", "strategy")
	ref := o.required("scatter_ref")
	out["scatter_ref"] = ref
	out["strategy"] = o.enum("strategy", "partition", "partition", "include", "drop", "raise")
	if ref != "" {
		c.gathers = append(c.gathers, gatherRef{gather: o.step, scatter: ref, p: o.p.dot("scatter_ref")})
	}
}
