package definition

import "strings"

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

func eventList(c *checker, o object) []any {
	list := o.list("events", true)
	if o.has("events") && len(list) == 0 {
		o.problem("events", "needs at least one event")
	}
	if len(list) > maxEventSet {
		o.problem("events", "at most %d events, found %d", maxEventSet, len(list))
	}
	seen := map[string]int{}
	out := make([]any, 0, len(list))
	for i, v := range list {
		e, ok := c.object(v, o.p.dot("events").at(i), o.step)
		if !ok {
			continue
		}
		m := map[string]any{}
		e.readAll(WithSpec{Fields: eventMemberFields}, m)
		if first, dup := seen[m["name"].(string)]; dup && m["name"] != "" {
			e.problem("name", "duplicate event name %q (also events[%d])", m["name"], first)
		}
		seen[m["name"].(string)] = i
		out = append(out, m)
	}
	return out
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
