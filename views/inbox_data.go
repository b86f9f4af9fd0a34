package views

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
)

// InboxData is a person's inbox: what waits for them (Tab "pending") or
// what was decided (Tab "decided").
type InboxData struct {
	Tab string
	// Definition and Assigned filter what is shown: one definition's
	// runs; "me" (addressed by email) or "role" (through a role).
	// Definitions are the keys of everything on the tab, for the filter.
	Definition, Assigned string
	Definitions          []string
	Approvals            []InboxApproval
	Cases                []InboxCase
	// Pending counts what waits for the person, for the tab's badge.
	Pending   int
	CanDecide bool
	// Notice confirms a decision; Error (about item ErrorFor) says why
	// one was refused.
	Notice, Error, ErrorFor string
	// CaseForm is what was typed in case ErrorFor's form, and CaseErrors
	// the problems of its fields by name.
	CaseForm   map[string]string
	CaseStatus string // the status typed in ErrorFor's form
	CaseErrors map[string]string
}

// InboxApproval is an approval with what the approver needs to decide.
type InboxApproval struct {
	store.Approval
	RunKey    string
	RunStatus string
	// Subject is the run's subject.
	Subject string
	// Context is the run's input and the outputs of the steps before the
	// approval's step.
	Context []ContextItem
	// Mine is the person's own decision, when they made one.
	Mine *store.ApprovalDecision
}

// ContextItem is one labelled JSON value shown to a decider.
type ContextItem struct {
	Label string
	Value any
	// Download is where the whole value downloads, for a preview cut
	// short.
	Download string
}

// InboxCase is a human_loop case with its form fields and the run it
// belongs to.
type InboxCase struct {
	store.Case
	RunKey, RunStatus, Subject string
	// Context is the run's input.
	Context []ContextItem
	Fields  []CaseField
	// TypedStatus is the status typed in the form, after a refusal.
	TypedStatus string
}

// FormStatus is the status the case's form shows: what was typed, after
// a refusal, else the case's own.
func (k InboxCase) FormStatus() string {
	if k.TypedStatus != "" {
		return k.TypedStatus
	}
	return k.Status
}

// CaseField is one top-level property of a case's fields schema.
type CaseField struct {
	Name, Kind, Title, Description string
	Enum                           []string
	Required                       bool
	// Min and Max bound a number (minimum, maximum), MinLength and
	// MaxLength a string: the browser checks them before posting; the
	// server checks the whole schema (exclusive bounds, patterns,
	// formats…) and puts each problem on its field.
	Min, Max             string
	MinLength, MaxLength string
	// Value is the case data's current value as the input shows it (or
	// what was typed, after a refusal); Error the problem found in it.
	Value, Error string
}

// CaseFields lists a fields schema's top-level properties, required
// ones first, then by name. Kind is string, number, integer, boolean,
// enum or json (objects, arrays and anything else, typed as JSON).
func CaseFields(schema, data any) []CaseField {
	sm, _ := schema.(map[string]any)
	props, _ := sm["properties"].(map[string]any)
	required := map[string]bool{}
	if rs, ok := sm["required"].([]any); ok {
		for _, r := range rs {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	values, _ := data.(map[string]any)
	out := make([]CaseField, 0, len(props))
	for name, p := range props {
		pm, _ := p.(map[string]any)
		f := CaseField{Name: name, Kind: fieldKind(pm), Required: required[name], Value: fieldValue(values[name])}
		f.Title, _ = pm["title"].(string)
		f.Description, _ = pm["description"].(string)
		f.Min, f.Max = numberAttr(pm["minimum"]), numberAttr(pm["maximum"])
		f.MinLength, f.MaxLength = numberAttr(pm["minLength"]), numberAttr(pm["maxLength"])
		if f.Kind == "enum" {
			for _, e := range pm["enum"].([]any) {
				f.Enum = append(f.Enum, fmt.Sprint(e))
			}
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Required != out[j].Required {
			return out[i].Required
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// numberAttr is a schema number as an input attribute ("" when absent).
func numberAttr(v any) string {
	switch n := v.(type) {
	case int64, float64, int:
		return fmt.Sprint(n)
	}
	return ""
}

func fieldKind(p map[string]any) string {
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		return "enum"
	}
	switch t, _ := p["type"].(string); t {
	case "string", "number", "integer", "boolean":
		return t
	}
	return "json"
}

func fieldValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return fmt.Sprint(x)
	}
	b, _ := jsonvalue.Marshal(v)
	return string(b)
}

func (f CaseField) label() string {
	if f.Title != "" {
		return f.Title
	}
	return nameInWords(f.Name)
}

// nameInWords makes a property name a label: "refund_amount" and
// "refundAmount" read "Refund amount" (runs of capitals stay: "orderID"
// reads "Order ID").
func nameInWords(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-':
			b.WriteRune(' ')
			continue
		case i > 0 && unicode.IsUpper(r) && unicode.IsLower(rs[i-1]):
			b.WriteRune(' ')
		}
		b.WriteRune(r)
	}
	words := strings.Fields(b.String())
	for i, w := range words {
		if strings.ToUpper(w) == w { // an acronym
			continue
		}
		if i == 0 {
			words[i] = strings.ToUpper(w[:1]) + strings.ToLower(w[1:])
		} else {
			words[i] = strings.ToLower(w)
		}
	}
	if len(words) == 0 {
		return name
	}
	return strings.Join(words, " ")
}

func (f CaseField) inputType() string {
	switch f.Kind {
	case "number", "integer":
		return "number"
	}
	return "text"
}

func (f CaseField) step() string {
	if f.Kind == "number" {
		return "any"
	}
	return "1"
}

// errorID is the id of the field's error message, for aria-describedby.
func (f CaseField) errorID(k InboxCase) string {
	return "case-" + k.ID.String() + "-" + f.Name + "-error"
}

func decisionText(d store.ApprovalDecision) string {
	verb := "rejected"
	if d.Approved {
		verb = "approved"
	}
	return personOf(d.By) + " " + verb + " at " + runStamp(d.At)
}

// ApprovalProgress is where an approval stands: how many of the approvals
// it needs it has, who decided, and whom it still waits for.
type ApprovalProgress struct {
	Approved, Needed int
	// Waiting are the approvers who have not decided (a role stays while
	// it has members who may, as "another member of role:R" once an
	// approval is in).
	Waiting []string
}

// progressOf works out an approval's progress from its decisions.
func progressOf(a store.Approval) ApprovalProgress {
	p := ApprovalProgress{Needed: max(a.MinApprovals, 1)}
	decided := map[string]bool{}
	for _, d := range a.Decisions {
		if d.Approved {
			p.Approved++
		}
		decided[d.By] = true
		decided[strings.TrimPrefix(d.By, "user:")] = true
	}
	for _, who := range a.Approvers {
		switch {
		case strings.HasPrefix(who, "role:") && p.Approved > 0:
			// Someone (perhaps of this role) has approved already: the
			// approval waits for one more of its members, not the role.
			p.Waiting = append(p.Waiting, "another member of "+who)
		case strings.HasPrefix(who, "role:") || !decided[who]:
			p.Waiting = append(p.Waiting, who)
		}
	}
	return p
}

// approvalProgress says in words where an approval stands.
func approvalProgress(a store.Approval) string {
	p := progressOf(a)
	s := fmt.Sprintf("%d of %d approved", p.Approved, p.Needed)
	if a.Status == store.ApprovalPending && len(p.Waiting) > 0 {
		s += " · waiting for " + strings.Join(p.Waiting, ", ")
	}
	return s
}

// personOf is a decider as people read it: the email of user:EMAIL.
func personOf(by string) string { return strings.TrimPrefix(by, "user:") }
