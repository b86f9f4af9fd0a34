package definition

import (
	"encoding/json"
	"sort"

	"github.com/ductor/ductor/app/expr"
)

// checker walks a parsed document once, collecting every problem and the
// pieces of the manifest.
type checker struct {
	ps    problems
	opts  Options
	exprs []exprJob

	m       Manifest
	refs    map[string]int // ref → index in the document's steps
	types   map[string]StepType
	paths   map[string]path
	edges   edgeSet
	gathers []gatherRef
	joins   []joinCheck
	endRuns []string
}

func newChecker(opts Options) *checker {
	return &checker{opts: opts, refs: map[string]int{}, types: map[string]StepType{}, paths: map[string]path{}}
}

// document checks the top level, then steps, then edges.
func (c *checker) document(v any) {
	o, ok := c.object(v, "", "")
	if !ok {
		return
	}
	o.knownFields(DocumentFields)
	c.m.Key = o.required("key")
	if c.m.Key != "" && !keyPattern.MatchString(c.m.Key) {
		o.problem("key", "must match [a-z0-9][a-z0-9-_]{0,62}, not %q", c.m.Key)
	}
	c.m.Name, _ = o.str("name")
	c.m.Description, _ = o.str("description")
	c.m.InputSchema = c.inputSchema(o)
	c.m.OutputExpr, _ = o.expr("output_expr", expr.KindAny)
	c.m.TimeoutMS = o.durationMS("timeout", 0)
	c.m.Limits = c.limits(o)
	c.steps(o)
	c.edgeList(o)
	c.graph()
	c.triggers(o)
	rules{c}.flowRules(o)
}

// inputSchema checks the schema compiles as JSON Schema 2020-12 and keeps
// it as compact JSON.
func (c *checker) inputSchema(o object) json.RawMessage {
	v, ok := o.m["input_schema"]
	if !ok {
		return nil
	}
	if err := checkSchema(v); err != nil {
		o.problem("input_schema", "%v", err)
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		o.problem("input_schema", "%v", err)
		return nil
	}
	return raw
}

// list reads a field that must be a list.
func (o object) list(key string, required bool) []any {
	v, ok := o.m[key]
	if !ok {
		if required {
			o.c.ps.add(o.p.dot(key), o.step, "is required")
		}
		return nil
	}
	l, isList := v.([]any)
	if !isList {
		o.problem(key, "must be a list, not %s", jsonType(v))
	}
	return l
}

// sortSteps orders the manifest's steps by ref.
func (c *checker) sortSteps() {
	sort.Slice(c.m.Steps, func(i, j int) bool { return c.m.Steps[i].Ref < c.m.Steps[j].Ref })
}
