package pages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
)

// The editor's "Try it" evaluates one step's expressions against sample
// data (the variables they read: input, steps, run, event), from the
// document as posted: nothing is published, stored or run, no handler is
// called. Each expression is bounded by the expression package's cost
// and time limits; a request also by maxTrySampleBytes of sample, at most
// maxTryEvals evaluations, tryBudget of wall time and one try at a time
// per tenant (another gets 429).
const (
	maxTrySampleBytes = 1 << 20
	maxTryEvals       = 64
	maxTryKeys        = 10
	maxTryShownBytes  = 64 << 10
	tryBudget         = 3 * time.Second
	maxTryRuns        = 20
)

// tryResult is one expression's outcome.
type tryResult struct {
	// Path is where the expression is: in the step ("with.expr",
	// "run_if") or, for a choice branch, in the document
	// ("edges[1].choice[0].when").
	Path string `json:"path"`
	Expr string `json:"expr"`
	OK   bool   `json:"ok"`
	// Value is the result when OK; Error and Code say why not.
	Value any    `json:"value"`
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
	// Note says what the value means or which variables it was given.
	Note string `json:"note,omitempty"`
	// To and Taken are a choice branch's target and whether it is the
	// branch the step takes.
	To    string `json:"to,omitempty"`
	Taken bool   `json:"taken,omitempty"`
}

// tryAnswer is what a try found.
type tryAnswer struct {
	Step    string      `json:"step"`
	Type    string      `json:"type"`
	Results []tryResult `json:"results"`
	// Outcome is a condition's ("true", "false") or a choice's ("→ ref").
	Outcome string `json:"outcome,omitempty"`
	// Now is the time the expressions saw as now; Item the index of the
	// element they saw as item, when the step has a list (for_each, a
	// scatter's items_expr).
	Now  time.Time `json:"now"`
	Item *int      `json:"item,omitempty"`
}

// trySample is the variables the expressions see.
type trySample struct {
	Input any            `json:"input"`
	Steps map[string]any `json:"steps"`
	Run   map[string]any `json:"run"`
	Event any            `json:"event"`
	Now   time.Time      `json:"-"`
}

// tryLimiter admits one try per tenant at a time.
type tryLimiter struct {
	env  func() (*expr.Env, error)
	mu   sync.Mutex
	busy map[uuid.UUID]bool
}

func newTryLimiter() *tryLimiter {
	return &tryLimiter{env: sync.OnceValues(func() (*expr.Env, error) { return expr.NewEnv() }), busy: map[uuid.UUID]bool{}}
}

func (l *tryLimiter) claim(tenant uuid.UUID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy[tenant] {
		return false
	}
	l.busy[tenant] = true
	return true
}

func (l *tryLimiter) release(tenant uuid.UUID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.busy, tenant)
}

// handleEditorTry answers the step's expressions evaluated against the
// posted sample (JSON). An expression stopped by a limit makes the whole
// answer a 422 saying which, the results in its details.
func handleEditorTry(l *tryLimiter) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, key := httpx.ViewerOf(c), c.Param("key")
		sample, err := parseTrySample(c.FormValue("sample"))
		if err != nil {
			return err
		}
		item, err := parseTryChoices(c.FormValue("item"), c.FormValue("now"), &sample)
		if err != nil {
			return err
		}
		check := checkDocument(key, []byte(c.FormValue("document")))
		if !check.Valid() {
			msg := "the document has problems; fix them to try a step"
			if len(check.Problems) > 0 {
				msg += " (" + check.Problems[0].String() + ")"
			}
			return apperr.New(apperr.Unprocessable, "%s", msg)
		}
		ref := c.FormValue("step")
		step, ok := check.Manifest.Step(ref)
		if !ok {
			return apperr.New(apperr.Unprocessable, "the document has no step %q", ref)
		}
		env, err := l.env()
		if err != nil {
			return err
		}
		if !l.claim(v.Tenant.ID) {
			return apperr.New(apperr.RateLimited, "a try of this tenant is already under way; try again when it ends")
		}
		defer l.release(v.Tenant.ID)
		ctx, cancel := context.WithTimeout(c.Request().Context(), tryBudget)
		defer cancel()
		if sample.Run == nil {
			sample.Run = map[string]any{"id": "try", "key": key, "version": int64(0)}
		}
		t := &trier{ctx: ctx, env: env, sample: sample, item: item}
		ans := t.step(check, step)
		for _, r := range ans.Results {
			if r.Code == expr.CodeExpressionLimit {
				return apperr.New(apperr.Unprocessable, "%s: %s", r.Path, r.Error).WithDetails(ans)
			}
		}
		return c.JSON(http.StatusOK, ans)
	}
}

// parseTrySample reads the sample: a JSON object of input, steps, run
// and event, each optional. A steps entry without state or error reads
// as a step that succeeded.
func parseTrySample(raw string) (trySample, error) {
	s := trySample{Steps: map[string]any{}, Now: time.Now().UTC()}
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return s, nil
	}
	if len(raw) > maxTrySampleBytes {
		return s, apperr.New(apperr.TooLarge, "the sample is %d bytes, over the %d-byte limit", len(raw), maxTrySampleBytes)
	}
	v, err := jsonvalue.Decode([]byte(raw))
	if err != nil {
		return s, apperr.New(apperr.Invalid, "the sample must be JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return s, apperr.New(apperr.Invalid, "the sample must be a JSON object of input, steps, run and event")
	}
	for k, x := range m {
		switch k {
		case "input":
			s.Input = x
		case "event":
			s.Event = x
		case "run":
			r, ok := x.(map[string]any)
			if !ok && x != nil {
				return s, apperr.New(apperr.Invalid, "the sample's run must be an object")
			}
			s.Run = r
		case "steps":
			st, ok := x.(map[string]any)
			if !ok && x != nil {
				return s, apperr.New(apperr.Invalid, "the sample's steps must be an object of step refs")
			}
			for ref, e := range st {
				entry, ok := e.(map[string]any)
				if !ok {
					return s, apperr.New(apperr.Invalid, "the sample's steps.%s must be an object like {\"output\": …}", ref)
				}
				if _, ok := entry["state"]; !ok {
					entry["state"] = "succeeded"
				}
				if _, ok := entry["error"]; !ok {
					entry["error"] = nil
				}
				if _, ok := entry["output"]; !ok {
					entry["output"] = nil
				}
				s.Steps[ref] = entry
			}
		default:
			return s, apperr.New(apperr.Invalid, "the sample's %q is none of input, steps, run and event", k)
		}
	}
	return s, nil
}

// trier evaluates one step's expressions.
type trier struct {
	ctx    context.Context
	env    *expr.Env
	sample trySample
	evals  int
	// item is the index of the list element the expressions see as item.
	item int
}

func (t *trier) vars() expr.Vars {
	return expr.Vars{Input: t.sample.Input, Steps: t.sample.Steps, Run: t.sample.Run, Now: t.sample.Now, Event: t.sample.Event}
}

// eval evaluates src as kind with vars; the value is as a run would store
// it, cut to a note when too large to show.
func (t *trier) eval(path, src string, kind expr.Kind, v expr.Vars) tryResult {
	r := tryResult{Path: path, Expr: src}
	if t.evals >= maxTryEvals {
		r.Error, r.Code = fmt.Sprintf("not tried: a try evaluates at most %d expressions", maxTryEvals), expr.CodeExpressionLimit
		return r
	}
	t.evals++
	p, err := t.env.Compile(src, kind)
	if err == nil {
		var out any
		out, err = p.Eval(t.ctx, v)
		if err == nil {
			r.OK, r.Value = true, shownValue(out, &r)
			return r
		}
	}
	var e *expr.Error
	if errors.As(err, &e) {
		r.Error, r.Code = e.Message, e.Code
		if errors.Is(err, expr.ErrInterrupted) {
			r.Error, r.Code = fmt.Sprintf("stopped: a try takes at most %s", tryBudget), expr.CodeExpressionLimit
		}
	} else {
		r.Error, r.Code = err.Error(), expr.CodeExpressionError
	}
	return r
}

// shownValue is v as JSON would carry it, or nil with a note past
// maxTryShownBytes.
func shownValue(v any, r *tryResult) any {
	if t, ok := v.(time.Time); ok {
		return t.UTC().Format(time.RFC3339Nano)
	}
	out, _, err := jsonvalue.Check(v, maxTryShownBytes)
	switch {
	case jsonvalue.IsTooLarge(err):
		r.Note = fmt.Sprintf("the value is over %d bytes of JSON: not shown", maxTryShownBytes)
		return nil
	case err != nil:
		r.Note = "the value cannot be stored as JSON: " + err.Error()
		return nil
	}
	return out
}

// step tries the step's run_if, for_each and with expressions, and the
// conditions of its choice branches.
func (t *trier) step(check editorCheck, s *definition.Step) tryAnswer {
	ans := tryAnswer{Step: s.Ref, Type: string(s.Type), Results: []tryResult{}, Now: t.sample.Now}
	v := t.vars()
	if s.RunIf != "" {
		r := t.eval("run_if", s.RunIf, expr.KindBool, v)
		if r.OK && r.Value == false {
			r.Note = "the step is skipped"
		}
		ans.Results = append(ans.Results, r)
	}
	var list []any
	items := func(path, src string) bool {
		r := t.eval(path, src, expr.KindList, v)
		if r.OK {
			list, _ = r.Value.([]any)
			r.Note = fmt.Sprintf("%d items", len(list))
			if t.item < len(list) {
				v.Item, v.Index = list[t.item], t.item
				r.Note += "; " + itemNote(t.item)
				ans.Item = &t.item
			}
		}
		ans.Results = append(ans.Results, r)
		if r.OK && t.item > 0 && t.item >= len(list) {
			ans.Results = append(ans.Results, noSuchItem(t.item, len(list)))
			return false
		}
		return true
	}
	if s.ForEach != "" && !items("for_each", s.ForEach) {
		return ans
	}
	spec, _ := definition.WithSpecOf(s.Type)
	if s.Type == definition.TypeScatter {
		if src, _ := s.With["items_expr"].(string); src != "" && !items("with.items_expr", src) {
			return ans
		}
		ans.Results = append(ans.Results, t.keys(s.With, list, v)...)
		if key, ok := t.itemKey(s.With, ans.Results, v); ok {
			v.Key = key
		}
	}
	ans.Results = append(ans.Results, t.fields(spec.Fields, s.With, "with", v, s.Type)...)
	if s.Type == definition.TypeCondition && len(ans.Results) > 0 {
		last := &ans.Results[len(ans.Results)-1]
		if b, ok := last.Value.(bool); ok && last.OK {
			ans.Outcome = fmt.Sprint(b)
			last.Note = fmt.Sprintf("the step ends %q: its on: %q edges fire", ans.Outcome, ans.Outcome)
		}
	}
	v.Steps = t.withOwnOutput(s, ans.Results, v.Steps)
	ans.Results = append(ans.Results, t.choices(check, s.Ref, v, &ans)...)
	return ans
}

// withOwnOutput is steps with a transform's value above as its own
// output, as its choice branches see it once it has run, unless the
// sample holds one.
func (t *trier) withOwnOutput(s *definition.Step, rs []tryResult, steps map[string]any) map[string]any {
	if _, held := steps[s.Ref]; held || s.Type != definition.TypeTransform || s.ForEach != "" {
		return steps
	}
	for _, r := range rs {
		if r.Path == "with.expr" && r.OK {
			out := make(map[string]any, len(steps)+1)
			for k, x := range steps {
				out[k] = x
			}
			out[s.Ref] = map[string]any{"output": r.Value, "state": "succeeded", "error": nil}
			return out
		}
	}
	return steps
}

// keys evaluates a scatter's key_expr for its first maxTryKeys items,
// in one result.
func (t *trier) keys(with map[string]any, list []any, v expr.Vars) []tryResult {
	src, _ := with["key_expr"].(string)
	if src == "" || len(list) == 0 {
		return nil
	}
	keys := []any{}
	var failed *tryResult
	for i, item := range list {
		if i == maxTryKeys {
			break
		}
		kv := v
		kv.Item, kv.Index = item, i
		r := t.eval("with.key_expr", src, expr.KindAny, kv)
		if !r.OK {
			r.Note = fmt.Sprintf("for item %d", i)
			failed = &r
			break
		}
		keys = append(keys, r.Value)
	}
	if failed != nil {
		return []tryResult{*failed}
	}
	r := tryResult{Path: "with.key_expr", Expr: src, OK: true, Value: keys,
		Note: fmt.Sprintf("the keys of the first %d items", len(keys))}
	return []tryResult{r}
}

// fields evaluates the expression fields of an object of the spec, in the
// spec's order, nested objects and lists included.
func (t *trier) fields(spec []definition.Field, m map[string]any, prefix string, v expr.Vars, typ definition.StepType) []tryResult {
	var out []tryResult
	for _, f := range spec {
		val, present := m[f.Name]
		if !present || val == nil {
			continue
		}
		path := prefix + "." + f.Name
		switch {
		case f.Kind == definition.KindExpr:
			src, _ := val.(string)
			if src == "" || (typ == definition.TypeScatter && prefix == "with" && (f.Name == "items_expr" || f.Name == "key_expr")) {
				continue
			}
			r := t.eval(path, src, f.Expr, v)
			r.Note = joinNote(r.Note, scopeNote(f.Name, prefix))
			out = append(out, r)
		case f.Name == "do" && typ == definition.TypeScatter:
			do, _ := val.(map[string]any)
			tt, _ := do["type"].(string)
			with, _ := do["with"].(map[string]any)
			if ts, ok := definition.WithSpecOf(definition.StepType(tt)); ok && with != nil {
				out = append(out, t.fields(ts.Fields, with, path+".with", v, definition.StepType(tt))...)
			}
		case f.Kind == definition.KindObject && len(f.Fields) > 0:
			if sub, ok := val.(map[string]any); ok {
				out = append(out, t.fields(f.Fields, sub, path, v, typ)...)
			}
		case f.Kind == definition.KindList && len(f.Fields) > 0:
			list, _ := val.([]any)
			for i, x := range list {
				if sub, ok := x.(map[string]any); ok {
					out = append(out, t.fields(f.Fields, sub, fmt.Sprintf("%s[%d]", path, i), v, typ)...)
				}
			}
		}
	}
	return out
}

// scopeNote says which variables a field's evaluation had at their zero
// value because only a running step has them.
func scopeNote(name, prefix string) string {
	switch {
	case name == "complete_when":
		return "succeeded, failed, done and total are 0 here, results empty"
	case strings.HasSuffix(prefix, ".repeat"):
		return "iteration is 0 and output null here"
	}
	return ""
}

func joinNote(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// choices evaluates the step's choice branches in order; the first that
// holds is taken, else the default.
func (t *trier) choices(check editorCheck, ref string, v expr.Vars, ans *tryAnswer) []tryResult {
	var branches []definition.Edge
	for _, e := range check.Manifest.Edges {
		if e.From == ref && e.Choice != nil {
			branches = append(branches, e)
		}
	}
	if len(branches) == 0 {
		return nil
	}
	sort.Slice(branches, func(i, j int) bool { return branches[i].Choice.Index < branches[j].Choice.Index })
	at := choiceEdgeIndex(check.Document, ref)
	var out []tryResult
	taken := false
	for _, e := range branches {
		path := fmt.Sprintf("edges[%d].choice[%d]", at, e.Choice.Index)
		if e.Choice.Default {
			r := tryResult{Path: path, OK: true, To: e.To, Note: "the default branch"}
			if !taken {
				r.Taken, taken = true, true
			}
			out = append(out, r)
			continue
		}
		r := t.eval(path+".when", e.Choice.When, expr.KindBool, v)
		r.To = e.To
		if r.OK && r.Value == true && !taken {
			r.Taken, taken = true, true
		}
		out = append(out, r)
		if !r.OK {
			break // the engine fails the step here
		}
	}
	for _, r := range out {
		if r.Taken {
			ans.Outcome = "→ " + r.To
		}
	}
	if ans.Outcome == "" && len(out) > 0 && out[len(out)-1].OK {
		ans.Outcome = "no branch holds and there is no default"
	}
	return out
}

// choiceEdgeIndex is the index in the document's edges of the step's
// choice group, -1 when not found.
func choiceEdgeIndex(doc json.RawMessage, ref string) int {
	var d struct {
		Edges []struct {
			From   string `json:"from"`
			Choice []any  `json:"choice"`
		} `json:"edges"`
	}
	if json.Unmarshal(doc, &d) != nil {
		return -1
	}
	for i, e := range d.Edges {
		if e.From == ref && e.Choice != nil {
			return i
		}
	}
	return -1
}

// tryRun is one run the editor offers to take a sample from.
type tryRun struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	Version   int       `json:"version"`
	Subject   string    `json:"subject,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// handleTryRuns lists the definition's newest runs.
func handleTryRuns(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
		list, err := s.RunList(c.Request().Context(), v.Tenant.ID, store.RunFilter{Definition: c.Param("key"), Limit: maxTryRuns})
		if err != nil {
			return err
		}
		out := make([]tryRun, 0, len(list))
		for _, r := range list {
			out = append(out, tryRun{ID: r.ID.String(), Status: string(r.Status), Version: r.DefinitionVersion, Subject: r.Subject, CreatedAt: r.CreatedAt})
		}
		return c.JSON(http.StatusOK, map[string]any{"runs": out})
	}
}

// handleTrySample answers a run of the definition as a sample: its input,
// its run variable and its finished steps as `steps` holds them, as the
// caller may see them (a case's data they may not read is redacted). The
// steps that would take the sample past maxTrySampleBytes are left out
// and named.
func handleTrySample(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		run, err := s.RunGet(ctx, v.Tenant.ID, id)
		if err != nil {
			return err
		}
		if run.DefinitionKey != c.Param("key") {
			return apperr.New(apperr.NotFound, "run %s is not a run of %s", id, c.Param("key"))
		}
		g, err := httpx.GuardFor(c, s, run)
		if err != nil {
			return err
		}
		nodes, err := s.RunNodesSteps(ctx, run.TenantID, run.ID)
		if err != nil {
			return err
		}
		shown := g.Run(run)
		sample := map[string]any{"input": shown.State.Input, "run": shown.State.Meta}
		size := jsonSize(sample)
		steps, left := map[string]any{}, []string{}
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
		for _, n := range nodes {
			if !n.State.Terminal() || n.Child != nil {
				continue
			}
			entry := map[string]any{"output": g.Node(n.ID, n.Output), "state": string(n.State), "error": nil}
			if n.Error != nil {
				entry["error"] = map[string]any{"code": n.Error.Code, "message": n.Error.Message}
			}
			grow := jsonSize(entry) + len(n.ID) + 4
			if size+grow > maxTrySampleBytes {
				left = append(left, n.ID)
				continue
			}
			size += grow
			steps[n.ID] = entry
		}
		sample["steps"] = steps
		return c.JSON(http.StatusOK, map[string]any{"run": run.ID.String(), "sample": sample, "left_out": left})
	}
}

func jsonSize(v any) int {
	raw, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(raw)
}
