package definition

import (
	"sort"

	"github.com/ductor/ductor/app/expr"
)

// edgeSet remembers edges seen, to report duplicates and choice groups.
type edgeSet struct {
	seen    map[edgeKey]path
	choices map[string]path
}

type edgeKey struct {
	from, to string
	on       Outcome
}

func (c *checker) edgeList(o object) {
	c.edges = edgeSet{seen: map[edgeKey]path{}, choices: map[string]path{}}
	list := o.list("edges", false)
	for i, v := range list {
		c.edge(v, o.p.dot("edges").at(i))
	}
	if len(c.m.Edges) > MaxEdges {
		o.problem("edges", "at most %d edges, found %d", MaxEdges, len(c.m.Edges))
	}
	sortEdges(c.m.Edges)
}

func (c *checker) edge(v any, p path) {
	o, ok := c.object(v, p, peekString(v, "from"))
	if !ok {
		return
	}
	from := c.endpoint(o, "from")
	if o.has("choice") {
		o.known("from", "choice")
		c.choice(o, from)
		return
	}
	o.known("from", "to", "on")
	to := c.endpoint(o, "to")
	on := c.outcome(o, from)
	c.addEdge(o, "to", Edge{From: from, To: to, On: on})
}

// endpoint reads from or to, which must name a step.
func (c *checker) endpoint(o object, key string) string {
	ref := o.required(key)
	if ref == "" {
		return ""
	}
	if _, ok := c.refs[ref]; !ok {
		o.problem(key, "unknown step %q", ref)
		return ""
	}
	return ref
}

// outcome reads `on` (default success; YAML's bare true and false are
// accepted) and checks the source can end that way.
func (c *checker) outcome(o object, from string) Outcome {
	on := OutcomeSuccess
	switch v := o.m["on"].(type) {
	case nil:
		if o.has("on") {
			o.problem("on", "must be an outcome, not null")
		}
	case bool:
		on = map[bool]Outcome{true: OutcomeTrue, false: OutcomeFalse}[v]
	case string:
		on = Outcome(v)
	default:
		o.problem("on", "must be an outcome, not %s", jsonType(v))
		return on
	}
	if !on.Valid() {
		o.problem("on", "unknown outcome %q: expected one of success, error, true, false, approved, rejected, done", on)
		return on
	}
	c.checkOutcome(o, "on", from, on)
	return on
}

func (c *checker) checkOutcome(o object, key, from string, on Outcome) {
	t := c.typeOf(from)
	if t.Valid() && !t.CanEnd(on) {
		o.problem(key, "a %s step never ends with %q (it ends with %s)", t, on, outcomeList(t))
	}
}

func outcomeList(t StepType) string {
	names := []string{}
	for _, o := range t.Outcomes() {
		names = append(names, string(o))
	}
	return quoteList(append(names, string(OutcomeDone)))
}

func (c *checker) typeOf(ref string) StepType { return c.types[ref] }

// addEdge records e unless an endpoint is unknown, it loops, or it
// repeats an earlier edge.
func (c *checker) addEdge(o object, toKey string, e Edge) {
	if e.From == "" || e.To == "" {
		return
	}
	if e.From == e.To {
		o.problem(toKey, "self-loop: step %q cannot lead to itself", e.From)
		return
	}
	k := edgeKey{from: e.From, to: e.To, on: e.On}
	if first, dup := c.edges.seen[k]; dup {
		o.problem(toKey, "duplicate edge %s → %s on %s (also %s)", e.From, e.To, e.On, first)
		return
	}
	c.edges.seen[k] = o.p
	c.m.Edges = append(c.m.Edges, e)
}

// choice checks a choice group: ordered `when` branches, then exactly one
// default, at most one group per source.
func (c *checker) choice(o object, from string) {
	list := o.list("choice", true)
	if len(list) == 0 {
		o.problem("choice", "a choice group needs branches")
		return
	}
	if first, dup := c.edges.choices[from]; dup && from != "" {
		o.problem("choice", "step %q already has a choice group (%s); merge them", from, first)
	}
	c.edges.choices[from] = o.p
	if from != "" {
		c.checkOutcome(o, "choice", from, OutcomeSuccess)
	}
	defaults := 0
	for j, v := range list {
		defaults += c.branch(v, o.p.dot("choice").at(j), from, j, j == len(list)-1)
	}
	if defaults != 1 {
		o.problem("choice", "a choice group needs exactly one default branch (default: true), found %d", defaults)
	}
}

// branch checks one branch and returns 1 if it is the default.
func (c *checker) branch(v any, p path, from string, index int, last bool) int {
	o, ok := c.object(v, p, from)
	if !ok {
		return 0
	}
	o.knownFields(ChoiceFields)
	to := c.endpoint(o, "to")
	def, _ := o.boolean("default")
	b := &Branch{Index: index, Default: def}
	switch {
	case def && o.has("when"):
		o.problem("when", "a default branch has no condition")
	case def && !last:
		o.problem("default", "the default branch must come last")
	case !def && !o.has("when"):
		o.problem("when", "is required (or default: true)")
	case !def:
		b.When, _ = o.expr("when", expr.KindBool)
	}
	c.addEdge(o, "to", Edge{From: from, To: to, On: OutcomeSuccess, Choice: b})
	if def {
		return 1
	}
	return 0
}

// sortEdges orders edges by source, target and outcome. No two edges
// share all three (duplicates are refused, choice edges count as
// success), so a group's branches keep their order by target and carry
// their evaluation order in Choice.Index.
func sortEdges(es []Edge) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		return a.On < b.On
	})
}
