package definition

import (
	"strconv"
	"strings"

	"github.com/ductor/ductor/app/expr"
)

// maxEventSet bounds the events one event_set step waits for.
const maxEventSet = 100

func withEventSet(_ *checker, spec WithSpec, o object, out map[string]any) {
	o.readAll(spec, out)
	if out["policy"] == "until_timeout" && !o.has("timeout") {
		o.problem("timeout", "is required with policy until_timeout")
	}
}

func readEventList(o object, _ Field, out map[string]any) { out["events"] = eventList(o.c, o) }

func readEventSetN(o object, _ Field, out map[string]any) {
	out["n"] = eventSetN(o, out["policy"].(string), len(out["events"].([]any)))
}

// eventList reads an event_set's members: {name, match_expr?, key?}.
// Names may repeat (members then differ by match_expr, or each takes one
// more event of the name); every member has a key, unique in the step,
// that counts it and keys the output: its own, or by default
// [EventMemberKey].
func eventList(c *checker, o object) []any {
	list := o.list("events", true)
	if o.has("events") && len(list) == 0 {
		o.problem("events", "needs at least one event")
	}
	if len(list) > maxEventSet {
		o.problem("events", "at most %d events, found %d", maxEventSet, len(list))
	}
	members := make([]object, len(list))
	names := make([]string, len(list))
	for i, v := range list {
		e, ok := c.object(v, o.p.dot("events").at(i), o.step)
		if !ok {
			continue
		}
		e.knownFields(eventMemberFields)
		members[i], names[i] = e, e.memberName()
	}
	out := make([]any, 0, len(list))
	seen := map[string]int{}
	for i, e := range members {
		if e.m == nil {
			continue
		}
		m := map[string]any{"name": names[i], "key": memberKey(e, names, i)}
		e.exprInto(m, "match_expr", expr.KindBool)
		key := m["key"].(string)
		if first, dup := seen[key]; dup && key != "" {
			e.problem("key", "duplicate key %q (also events[%d]); give each member its own key", key, first)
		}
		seen[key] = i
		out = append(out, m)
	}
	return out
}

// maxMemberKey bounds an event_set member's key.
const maxMemberKey = 128

func memberKey(e object, names []string, i int) string {
	if !e.has("key") {
		return EventMemberKey(names, i)
	}
	k, _ := e.str("key")
	if k == "" || len(k) > maxMemberKey {
		e.problem("key", "must be a string of 1 to %d characters", maxMemberKey)
	}
	return k
}

// EventMemberKey is the default key of the i-th member of an event_set
// whose members are named names: the name, or NAME#I when another member
// has the same name.
func EventMemberKey(names []string, i int) string {
	for j, n := range names {
		if j != i && n == names[i] {
			return names[i] + "#" + strconv.Itoa(i)
		}
	}
	return names[i]
}

// memberName reads a member's name through its table.
func (e object) memberName() string {
	out := map[string]any{}
	f, _ := fieldNamed(eventMemberFields, "name")
	e.readField(f, out)
	s, _ := out["name"].(string)
	return s
}

// eventSetN reads n, required by quorum and count and meaningless
// otherwise; 0 when it does not apply.
func eventSetN(o object, policy string, events int) int64 {
	if policy != "quorum" && policy != "count" {
		if o.has("n") {
			o.problem("n", "applies only to policies quorum and count")
		}
		return 0
	}
	if !o.has("n") {
		o.problem("n", "is required with policy %s", policy)
		return 0
	}
	return o.intOr("n", 0, 1, int64(max(events, 1)))
}

func readApprovers(o object, _ Field, out map[string]any) { out["approvers"] = approvers(o) }

// approvers reads user emails, role:NAME entries (people) and key:NAME
// entries (the API keys of that name).
func approvers(o object) []any {
	if !o.has("approvers") {
		o.problem("approvers", "is required")
		return []any{}
	}
	list, _ := o.strings("approvers")
	if o.has("approvers") && len(list) == 0 {
		o.problem("approvers", "needs at least one email, role:NAME or key:NAME")
	}
	for i, v := range list {
		if s := v.(string); !validApprover(s) {
			o.c.ps.add(o.p.dot("approvers").at(i), o.step, "must be an email, role:NAME or key:NAME, not %q", s)
		}
	}
	return orEmpty(list)
}

func validApprover(s string) bool {
	for _, kind := range []string{"role:", "key:"} {
		if name, ok := strings.CutPrefix(s, kind); ok {
			return strings.TrimSpace(name) != ""
		}
	}
	return strings.Contains(s, "@")
}

func orEmpty(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}
