package pages

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

var errBadDecision = apperr.New(apperr.Invalid, `decision must be "approve" or "reject"`)

// handleCaseSave updates a case assigned to the viewer from its form:
// each field.NAME input becomes the data's NAME (typed by the fields
// schema), status the case's status.
func handleCaseSave(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
		err := inboxAction(c, "case", func(id uuid.UUID) error {
			k, err := s.CaseGet(c.Request().Context(), v.Tenant.ID, id)
			if err != nil {
				return err
			}
			who := store.Audience(v.User.Email, string(v.Role))
			if !slices.ContainsFunc(k.Assignees, func(a string) bool { return slices.Contains(who, a) }) {
				return apperr.New(apperr.Forbidden, "this case is not assigned to you")
			}
			data, err := caseData(c, k)
			if err != nil {
				return err
			}
			status := strings.TrimSpace(c.FormValue("status"))
			_, err = rs.UpdateCase(c.Request().Context(), v.Tenant.ID, id, runs.CaseChange{Status: &status, Data: data, Actor: v.Actor()})
			return err
		})
		return afterInbox(c, s, rs, err, "case")
	}
}

// caseData merges the form's fields into the case's data; an empty input
// removes its field. Every field that cannot be read, or is required and
// left empty, is refused on its own (the schema check that follows puts
// a missing property on the object, not on its field).
func caseData(c echo.Context, k store.Case) (map[string]any, error) {
	data := map[string]any{}
	if m, ok := k.Data.(map[string]any); ok {
		for key, val := range m {
			data[key] = val
		}
	}
	var problems []definition.Problem
	code := apperr.Unprocessable // as the schema check's; Invalid when a value cannot be read
	for _, f := range views.CaseFields(k.Fields, k.Data) {
		raw := strings.TrimSpace(c.FormValue("field." + f.Name))
		val, err := fieldFromForm(f, raw)
		if err != nil {
			var ae *apperr.Error
			if !errors.As(err, &ae) {
				return nil, err
			}
			p, _ := ae.Details.([]definition.Problem)
			problems, code = append(problems, p...), apperr.Invalid
			continue
		}
		if val == nil {
			if f.Required {
				problems = append(problems, definition.Problem{Path: "data." + f.Name, Message: "is required"})
			}
			delete(data, f.Name)
			continue
		}
		data[f.Name] = val
	}
	if len(problems) == 1 {
		p := problems[0]
		return nil, apperr.New(code, "%s %s", strings.TrimPrefix(p.Path, "data."), p.Message).WithDetails(problems)
	}
	if len(problems) > 1 {
		return nil, apperr.New(code, "%d fields are not valid", len(problems)).WithDetails(problems)
	}
	return data, nil
}

func fieldFromForm(f views.CaseField, raw string) (any, error) {
	switch {
	case f.Kind == "boolean":
		return raw == "true", nil
	case raw == "":
		return nil, nil
	case f.Kind == "number" || f.Kind == "integer":
		n, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, fieldProblem(f.Name, "must be a number")
		}
		return n, nil
	case f.Kind == "json":
		v, err := jsonvalue.Decode([]byte(raw))
		if err != nil {
			return nil, fieldProblem(f.Name, "must be JSON")
		}
		return v, nil
	}
	return raw, nil
}

// fieldProblem is a refusal of one field of a case form, as the schema
// check words it (its path data.NAME).
func fieldProblem(name, msg string) error {
	return apperr.New(apperr.Invalid, "%s %s", name, msg).WithDetails([]definition.Problem{{Path: "data." + name, Message: msg}})
}

// caseErrors are the problems of a refused case form by field name: the
// schema's problems sit at data.NAME (deeper ones on their field too).
func caseErrors(err error) map[string]string {
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		return nil
	}
	ps, _ := ae.Details.([]definition.Problem)
	out := map[string]string{}
	for _, p := range ps {
		name, ok := strings.CutPrefix(p.Path, "data.")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, ".")
		name, _, _ = strings.Cut(name, "[")
		if out[name] != "" {
			out[name] += "; "
		}
		out[name] += p.Message
	}
	return out
}

// caseForm is what was typed in a case form, by field name.
func caseForm(c echo.Context) map[string]string {
	out := map[string]string{}
	form, _ := c.FormParams()
	for k, v := range form {
		if name, ok := strings.CutPrefix(k, "field."); ok && len(v) > 0 {
			out[name] = v[0]
		}
	}
	return out
}

// inboxAction runs act on the item named by :id; an id that is not a
// UUID is NotFound.
func inboxAction(c echo.Context, what string, act func(uuid.UUID) error) error {
	id, err := httpx.PathUUID(c, "id", what)
	if err != nil {
		return err
	}
	return act(id)
}

// afterInbox redirects to the inbox after a decision, or shows it again
// with why the decision was refused (decided already, not addressed to
// the viewer, invalid data).
func afterInbox(c echo.Context, s *store.Store, rs *runs.Service, err error, done string) error {
	if err == nil {
		return seeOther(c, "/inbox?done="+done)
	}
	if apperr.CodeOf(err) == apperr.NotFound {
		return err
	}
	return httpx.FormError(c, err, func(status int, msg string) error {
		d := views.InboxData{Error: msg, ErrorFor: c.Param("id")}
		if done == "case" {
			d.CaseForm, d.CaseErrors, d.CaseStatus = caseForm(c), caseErrors(err), c.FormValue("status")
			if len(d.CaseErrors) > 0 {
				d.Error = "The case was not saved: fix the fields marked below."
			}
		}
		return renderInbox(c, s, rs, status, d)
	})
}

// runContexts loads, once per run, what an approver needs to see: the
// run's definition, input and the outputs of the steps before the
// approval's step.
type runContexts struct {
	s      *store.Store
	runs   *runs.Service
	tenant uuid.UUID
	slug   string
	reader httpx.CaseReader // whose inbox: the outputs shown keep to the case data rule
	cache  map[uuid.UUID]*store.Run
}

// runJSONPath is where a run's value downloads whole (handleRunJSON).
func runJSONPath(slug string, id uuid.UUID, part string) string {
	return "/t/" + slug + "/runs/" + id.String() + "/json/" + part
}

func (rc *runContexts) run(ctx context.Context, id uuid.UUID) *store.Run {
	if rc.cache == nil {
		rc.cache = map[uuid.UUID]*store.Run{}
	}
	if r, ok := rc.cache[id]; ok {
		return r
	}
	r, err := rc.s.RunGet(ctx, rc.tenant, id)
	var g httpx.CaseGuard
	if err == nil {
		g, err = httpx.LoadCaseGuard(ctx, rc.s, rc.reader, r)
	}
	if err != nil {
		rc.cache[id] = nil
		return nil
	}
	r = g.Run(r) // its input may be a parent's case data
	rc.cache[id] = &r
	return &r
}

// kase is a case with its run's context and its form's fields (what was
// typed and the problems found, after a refusal).
func (rc *runContexts) kase(ctx context.Context, k store.Case, d views.InboxData) views.InboxCase {
	out := views.InboxCase{Case: k, Fields: views.CaseFields(k.Fields, k.Data)}
	if r := rc.run(ctx, k.RunID); r != nil {
		out.RunKey, out.RunStatus, out.Subject = r.DefinitionKey, string(r.Status), r.Subject
		out.Context = []views.ContextItem{{Label: "Run input", Value: r.State.Input, Download: runJSONPath(rc.slug, r.ID, "input")}}
	}
	if d.ErrorFor != k.ID.String() {
		return out
	}
	for i := range out.Fields {
		f := &out.Fields[i]
		if v, ok := d.CaseForm[f.Name]; ok {
			f.Value = v
		}
		f.Error = d.CaseErrors[f.Name]
	}
	out.TypedStatus = d.CaseStatus
	return out
}

func (rc *runContexts) approval(ctx context.Context, a store.Approval, principal string) (views.InboxApproval, error) {
	out := views.InboxApproval{Approval: a, Mine: myDecision(a, principal)}
	r := rc.run(ctx, a.RunID)
	if r == nil {
		return out, nil
	}
	out.RunKey, out.RunStatus, out.Subject = r.DefinitionKey, string(r.Status), r.Subject
	out.Context = append(out.Context, views.ContextItem{Label: "Run input", Value: r.State.Input, Download: runJSONPath(rc.slug, r.ID, "input")})
	m, err := rc.runs.Manifest(ctx, *r)
	if err != nil {
		return out, err
	}
	var before []string
	for _, e := range m.Edges {
		if e.To == a.Node {
			before = append(before, e.From)
		}
	}
	if len(before) == 0 {
		return out, nil
	}
	nodes, err := rc.s.RunNodesByName(ctx, rc.tenant, a.RunID, before)
	if err != nil {
		return out, err
	}
	g, err := httpx.LoadCaseGuard(ctx, rc.s, rc.reader, *r)
	for _, n := range g.Nodes(nodes) {
		if n.Output != nil {
			out.Context = append(out.Context, views.ContextItem{Label: "Output of " + n.ID, Value: n.Output, Download: runJSONPath(rc.slug, r.ID, "nodes/"+url.PathEscape(n.ID))})
		}
	}
	return out, err
}
