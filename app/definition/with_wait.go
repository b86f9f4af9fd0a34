package definition

import (
	"strconv"
	"strings"

	"github.com/ductor/ductor/app/expr"
)

// maxEventSet bounds the events one event_set step waits for.
const maxEventSet = 100

func withSignal(_ *checker, o object, out map[string]any) {
	o.known("name", "timeout", "on_timeout")
	out["name"] = o.name()
	o.timeout(out)
	out["on_timeout"] = o.enum("on_timeout", "fail", "fail", "skip")
}

func withEvent(_ *checker, o object, out map[string]any) {
	o.known("name", "match_expr", "timeout", "on_timeout")
	out["name"] = o.name()
	o.exprInto(out, "match_expr", expr.KindBool)
	o.timeout(out)
	out["on_timeout"] = o.enum("on_timeout", "fail", "fail", "skip")
}

func withEventSet(c *checker, o object, out map[string]any) {
	o.known("events", "policy", "n", "timeout", "on_timeout")
	events := eventList(c, o)
	out["events"] = events
	policy := o.enum("policy", "all_required", "all_required", "any", "quorum", "count", "until_timeout")
	out["policy"] = policy
	out["n"] = eventSetN(o, policy, len(events))
	o.timeout(out)
	out["on_timeout"] = o.enum("on_timeout", "fail", "fail", "succeed_partial")
	if policy == "until_timeout" && !o.has("timeout") {
		o.problem("timeout", "is required with policy until_timeout")
	}
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
		e.known("name", "match_expr", "key")
		members[i], names[i] = e, e.name()
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

func withDigest(_ *checker, o object, out map[string]any) {
	o.known("name", "match_expr", "window", "max_items")
	out["name"] = o.name()
	o.exprInto(out, "match_expr", expr.KindBool)
	if !o.has("window") {
		o.problem("window", "is required")
	}
	out["window_ms"] = o.durationMS("window", 0)
	out["max_items"] = o.intOr("max_items", 0, 1, 1_000_000)
}

func withApproval(_ *checker, o object, out map[string]any) {
	o.known("approvers", "title", "description", "min_approvals", "timeout", "on_timeout")
	out["approvers"] = approvers(o)
	out["title"] = o.strOr("title", "")
	out["description"] = o.strOr("description", "")
	out["min_approvals"] = o.intOr("min_approvals", 1, 1, 1000)
	o.timeout(out)
	out["on_timeout"] = o.enum("on_timeout", "fail", "fail", "approve", "skip")
}

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

func withHumanLoop(_ *checker, o object, out map[string]any) {
	o.known("title", "assignees", "fields", "awaiting_status", "timeout", "on_timeout")
	out["title"] = o.required("title")
	list, _ := o.strings("assignees")
	out["assignees"] = orEmpty(list)
	if v, ok := o.m["fields"]; ok {
		if err := checkSchema(v); err != nil {
			o.problem("fields", "%v", err)
		}
		out["fields"] = v
	}
	out["awaiting_status"] = o.strOr("awaiting_status", "resolved")
	o.timeout(out)
	out["on_timeout"] = o.enum("on_timeout", "fail", "fail", "skip")
}
