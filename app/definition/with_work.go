package definition

import (
	"github.com/ductor/ductor/app/expr"

	"net/url"
	"strings"
)

// withChecker checks and normalises one type's `with` settings into out.
type withChecker func(c *checker, spec WithSpec, o object, out map[string]any)

// withCheckers are the types whose settings need more than their table;
// every other type is read by its table alone.
var withCheckers = map[StepType]withChecker{
	TypeScatter: withScatter, TypeGather: withGather, TypeSubworkflow: withSubworkflow,
	TypeWait: withWait, TypeEventSet: withEventSet,
}

// withSpecIndex finds a type's spec (set in init: the specs' readers
// refer back to it).
var withSpecIndex map[StepType]WithSpec

func init() {
	withSpecIndex = map[StepType]WithSpec{}
	for _, s := range WithSpecs {
		withSpecIndex[s.Type] = s
	}
}

// withTable reads a type's settings by its table alone.
func withTable(_ *checker, spec WithSpec, o object, out map[string]any) { o.readAll(spec, out) }

// BuiltinHandlers are the task handlers every Ductor server runs; any
// other name under builtin. is a mistake.
var BuiltinHandlers = []string{"builtin.echo", "builtin.fail", "builtin.noop", "builtin.sleep"}

// readHandler refuses a builtin.* name no server has.
func readHandler(o object, f Field, out map[string]any) {
	h := o.required(f.Name)
	out[f.Name] = h
	if strings.HasPrefix(h, "builtin.") && !contains(BuiltinHandlers, h) {
		o.problem(f.Name, "unknown built-in handler %q%s (built-in: %s)", h, suggest(h, BuiltinHandlers), strings.Join(BuiltinHandlers, ", "))
	}
}

// readScheduleToStart: absent, the tenant's setting applies (default
// 5m); it is not made explicit, so that changing the setting reaches
// published definitions.
func readScheduleToStart(o object, f Field, out map[string]any) {
	if o.has(f.Name) {
		out[durationKey(f.Name)] = o.durationMS(f.Name, 0)
	}
}

func readURL(o object, _ Field, out map[string]any) { out["url"] = checkURL(o) }

func readMethod(o object, _ Field, out map[string]any) { out["method"] = httpMethod(o) }

func readHeaders(o object, _ Field, out map[string]any) {
	if h := headers(o); len(h) > 0 {
		out["headers"] = h
	}
}

func readExpectStatus(o object, _ Field, out map[string]any) {
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

func withGather(c *checker, spec WithSpec, o object, out map[string]any) {
	o.readAll(spec, out)
	if ref := out["scatter_ref"].(string); ref != "" {
		c.gathers = append(c.gathers, gatherRef{gather: o.step, scatter: ref, p: o.p.dot("scatter_ref")})
	}
}

// secretNameShape describes a tenant secret's name in messages.
const secretNameShape = "a secret's name ([A-Za-z_][A-Za-z0-9_]{0,63})"

// readAuth reads an http step's auth shorthand: exactly one of bearer and
// basic, each naming a secret.
func readAuth(o object, f Field, out map[string]any) {
	v, ok := o.m[f.Name]
	if !ok {
		return
	}
	a, ok := o.c.object(v, o.p.dot(f.Name), o.step)
	if !ok {
		return
	}
	auth := map[string]any{}
	a.readAll(WithSpec{Fields: authFields, Groups: map[string]bool{"scheme": true}}, auth)
	out[f.Name] = auth
}

func readBasicAuth(o object, f Field, out map[string]any) {
	b, ok := o.c.object(o.m[f.Name], o.p.dot(f.Name), o.step)
	if !ok {
		return
	}
	basic := map[string]any{}
	b.readAll(WithSpec{Fields: basicAuthFields}, basic)
	out[f.Name] = basic
}

// readSecretNames reads a task step's secrets: names of tenant secrets,
// each once.
func readSecretNames(o object, f Field, out map[string]any) {
	list, ok := o.strings(f.Name)
	if !ok || len(list) == 0 {
		return
	}
	seen := map[string]bool{}
	for i, v := range list {
		name, _ := v.(string)
		switch {
		case !expr.SecretNamePattern.MatchString(name):
			o.c.ps.add(o.p.dot(f.Name).at(i), o.step, "must be %s, not %q", secretNameShape, name)
		case seen[name]:
			o.c.ps.add(o.p.dot(f.Name).at(i), o.step, "names secret %s twice", name)
		}
		seen[name] = true
	}
	out[f.Name] = list
}
