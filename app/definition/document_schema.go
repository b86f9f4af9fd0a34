package definition

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaPath is where the server serves [DocumentSchema].
const SchemaPath = "/api/v1/schemas/definition.json"

// DocumentSchema is the JSON Schema (2020-12) of definition documents,
// generated from the compiler's field tables, for editors to validate and
// complete Ductor files. The compiler is stricter: it also compiles every
// expression, checks edges, refs, cycles and the rules between fields.
func DocumentSchema() []byte { return documentSchema() }

var documentSchema = sync.OnceValue(func() []byte {
	b, err := json.MarshalIndent(buildSchema(), "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
})

type schema = map[string]any

// never is a schema nothing matches (a `false` schema, spelled so that
// OpenAPI tools read it too).
func never() schema { return schema{"not": schema{}} }

func buildSchema() schema {
	root := objectSchema(DocumentFields, map[string]schema{
		"steps": listOf(DocumentFields, "steps", "step"),
		"edges": listOf(DocumentFields, "edges", "edge"),
	})
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["title"] = "Ductor definition document"
	root["description"] = "A workflow definition: steps, the edges between them, and settings. " +
		"Ductor's compiler checks more than this schema: expressions, edges, cycles and the rules between fields."
	defs := schema{
		"step":     stepSchema(),
		"edge":     edgeSchema(),
		"retry":    objectSchema(RetryFields, nil),
		"duration": durationSchema(),
	}
	for _, spec := range WithSpecs {
		defs[withDef(spec.Type)] = withSchema(spec)
	}
	root["$defs"] = defs
	return root
}

func withDef(t StepType) string { return "with_" + string(t) }

func ref(def string) schema { return schema{"$ref": "#/$defs/" + def} }

// objectSchema is a closed object of fields; nested names the fields
// given their own schema.
func objectSchema(fs []Field, nested map[string]schema) schema {
	props := schema{}
	var required []string
	for _, f := range fs {
		if s, ok := nested[f.Name]; ok {
			props[f.Name] = s
		} else {
			props[f.Name] = fieldSchema(f)
		}
		if f.Required && f.Mode == "" {
			required = append(required, f.Name)
		}
	}
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// fieldSchema is one field's schema by its kind.
func fieldSchema(f Field) schema {
	s := kindSchema(f)
	if d := describeField(f); d != "" {
		s["description"] = d
	}
	if def, ok := schemaDefault(f); ok {
		s["default"] = def
	}
	return s
}

func kindSchema(f Field) schema {
	switch f.Kind {
	case KindString:
		return stringSchema(f)
	case KindExpr, KindCron:
		return schema{"type": "string", "minLength": 1}
	case KindDuration:
		return ref("duration")
	case KindInteger, KindNumber:
		s := schema{"type": string(f.Kind), "minimum": f.Min}
		if f.Max > 0 {
			s["maximum"] = f.Max
		}
		return s
	case KindBool:
		return schema{"type": "boolean"}
	case KindEnum:
		return enumSchema(f)
	case KindStrings:
		s := schema{"type": "array", "items": schema{"type": "string", "minLength": 1}}
		if f.Required {
			s["minItems"] = 1
		}
		return s
	case KindTime:
		return schema{"type": "string", "format": "date-time"}
	case KindSchema:
		return schema{"anyOf": []any{schema{"type": "object"}, schema{"type": "boolean"}}}
	case KindHeaders:
		return schema{"type": "object", "additionalProperties": schema{"type": "string"}}
	case KindStatus:
		status := schema{"type": "integer", "minimum": 100, "maximum": 599}
		return schema{"anyOf": []any{status, schema{"type": "array", "items": status}}}
	case KindAny:
		return schema{}
	case KindObject:
		return withGroups(objectSchema(f.Fields, nil), f.Fields)
	case KindList:
		return listSchema(f)
	case KindJoin:
		return schema{"anyOf": []any{schema{"type": "string", "enum": f.Enum}, objectSchema(f.Fields, nil)}}
	case KindLimit:
		return schema{"anyOf": []any{schema{"type": "integer", "minimum": f.Min, "maximum": f.Max}, schema{"type": "string", "minLength": 1}}}
	case KindEdge:
		values := []any{}
		for _, e := range f.Enum {
			values = append(values, e)
		}
		return schema{"enum": append(values, true, false)}
	}
	panic("definition: no schema for " + string(f.Kind))
}

func stringSchema(f Field) schema {
	s := schema{"type": "string"}
	if f.Required {
		s["minLength"] = 1
	}
	if f.Pattern != nil {
		s["pattern"] = f.Pattern.String()
	}
	return s
}

// enumSchema completes the values; with AnyCase it accepts them in any
// letter case too.
func enumSchema(f Field) schema {
	if !f.AnyCase {
		return schema{"type": "string", "enum": f.Enum}
	}
	alts := make([]string, len(f.Enum))
	for i, v := range f.Enum {
		var b strings.Builder
		for _, r := range v {
			fmt.Fprintf(&b, "[%s%s]", strings.ToUpper(string(r)), strings.ToLower(string(r)))
		}
		alts[i] = b.String()
	}
	pattern := "^(?:" + strings.Join(alts, "|") + ")$"
	return schema{"type": "string", "anyOf": []any{schema{"enum": f.Enum}, schema{"pattern": pattern}}}
}

// listOf is the list field name of fs, its items the definition def.
func listOf(fs []Field, name, def string) schema {
	f, _ := fieldNamed(fs, name)
	s := listSchema(f)
	s["items"] = ref(def)
	s["description"] = f.Doc
	return s
}

func listSchema(f Field) schema {
	s := schema{"type": "array", "items": withGroups(objectSchema(f.Fields, nil), f.Fields)}
	if f.Required {
		s["minItems"] = 1
	}
	if f.MaxItems > 0 {
		s["maxItems"] = f.MaxItems
	}
	return s
}

// describeField is the field's doc, with its expression type.
func describeField(f Field) string {
	d := f.Doc
	if f.Kind == KindExpr {
		d += " A CEL expression" + exprType(f) + "."
	}
	if f.DefaultDoc != "" {
		d += " Default: " + strings.Trim(f.DefaultDoc, "`") + "."
	}
	return strings.TrimSpace(d)
}

func exprType(f Field) string {
	if f.Expr.String() == "any" {
		return ""
	}
	return " of type " + f.Expr.String()
}

// schemaDefault is the default an editor may fill in: only one that is
// itself valid.
func schemaDefault(f Field) (any, bool) {
	switch v := f.Default.(type) {
	case nil:
		return nil, false
	case int:
		if f.Kind == KindDuration {
			return nil, false
		}
		if int64(v) < f.Min || (f.Max > 0 && int64(v) > f.Max) {
			return nil, false
		}
	case float64:
		if v < float64(f.Min) || (f.Max > 0 && v > float64(f.Max)) {
			return nil, false
		}
	}
	return f.Default, true
}

// stepSchema is a step: the common fields, and `with` by type.
func stepSchema() schema {
	s := objectSchema(StepFields, map[string]schema{
		"retry": withDoc(ref("retry"), "How failed attempts are retried."),
		"with":  openObject("The type's settings."),
	})
	cases := make([]any, 0, len(WithSpecs))
	for _, spec := range WithSpecs {
		cases = append(cases, stepCase(spec))
	}
	s["allOf"] = cases
	return s
}

// openObject is an object a rule elsewhere closes.
func openObject(doc string) schema {
	return schema{"type": "object", "description": doc, "additionalProperties": true}
}

func withDoc(s schema, doc string) schema {
	s["description"] = doc
	return s
}

// stepCase: a step of the spec's type has its `with`, and no field of
// another type.
func stepCase(spec WithSpec) schema {
	props := schema{"with": ref(withDef(spec.Type))}
	for _, f := range StepFields {
		if len(f.Types) > 0 && !slices.Contains(f.Types, spec.Type) {
			props[f.Name] = never()
		}
	}
	then := schema{"properties": props}
	if needsWith(spec) {
		then["required"] = []string{"with"}
	}
	return schema{
		"if":   schema{"properties": schema{"type": schema{"const": string(spec.Type)}}, "required": []string{"type"}},
		"then": then,
	}
}

func needsWith(spec WithSpec) bool {
	for _, f := range spec.Fields {
		if f.Required && f.Mode == "" {
			return true
		}
	}
	for _, required := range spec.Groups {
		if required {
			return true
		}
	}
	return false
}

// withSchema is a type's settings, with its exclusive groups and modes.
func withSchema(spec WithSpec) schema {
	nested := map[string]schema{}
	for _, f := range spec.Fields {
		if f.Kind == KindObject && f.Name == "do" {
			nested[f.Name] = withDoc(templateSchema(), f.Doc)
		}
	}
	s := objectSchema(spec.Fields, nested)
	s["description"] = spec.Doc
	var rules []any
	for _, g := range sortedGroups(spec) {
		rules = append(rules, groupRule(groupMembers(spec.Fields, g), spec.Groups[g]))
	}
	if spec.ModeField != "" {
		rules = append(rules, modeRule(spec))
	}
	if len(rules) > 0 {
		s["allOf"] = rules
	}
	return s
}

// withGroups adds the rules of a table's exclusive groups (each
// required: exactly one member) to its object schema.
func withGroups(s schema, fs []Field) schema {
	seen := map[string]bool{}
	var rules []any
	for _, f := range fs {
		if f.Group != "" && !seen[f.Group] {
			seen[f.Group] = true
			rules = append(rules, groupRule(groupMembers(fs, f.Group), true))
		}
	}
	if len(rules) > 0 {
		s["allOf"] = rules
	}
	return s
}

func sortedGroups(spec WithSpec) []string {
	var out []string
	for g := range spec.Groups {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// groupRule: exactly one member (required) or at most one.
func groupRule(members []string, required bool) schema {
	if required {
		one := make([]any, len(members))
		for i, m := range members {
			one[i] = schema{"required": []string{m}}
		}
		return schema{"oneOf": one}
	}
	var pairs []any
	for i := range members {
		for j := i + 1; j < len(members); j++ {
			pairs = append(pairs, schema{"required": []string{members[i], members[j]}})
		}
	}
	return schema{"not": schema{"anyOf": pairs}}
}

// modeRule: the fields of the mode chosen (or defaulted) are allowed,
// and its required ones required; the other modes' are refused. It
// supports specs of two modes, the default and one other.
func modeRule(spec WithSpec) schema {
	mf, _ := spec.Field(spec.ModeField)
	def, _ := mf.Default.(string)
	var other string
	for _, v := range mf.Enum {
		if v != def {
			other = v
		}
	}
	return schema{
		"if":   schema{"properties": schema{spec.ModeField: schema{"const": other}}, "required": []string{spec.ModeField}},
		"then": modeAllows(spec, other),
		"else": modeAllows(spec, def),
	}
}

func modeAllows(spec WithSpec, mode string) schema {
	props := schema{}
	var required []string
	for _, f := range spec.Fields {
		switch {
		case f.Mode == "" || f.Mode == mode && !f.Required:
		case f.Mode == mode:
			required = append(required, f.Name)
		default:
			props[f.Name] = never()
		}
	}
	s := schema{"properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// templateSchema is a scatter's `do`: a task, http or transform step
// template, its `with` by type.
func templateSchema() schema {
	s := objectSchema(templateFields, map[string]schema{"retry": ref("retry"), "with": openObject("The type's settings.")})
	var cases []any
	for _, t := range forEachTypes {
		then := schema{"properties": schema{"with": ref(withDef(t))}}
		if !t.usesRetry() {
			then["properties"].(schema)["retry"] = never()
			then["properties"].(schema)["timeout"] = never()
			then["properties"].(schema)["concurrency"] = never()
		}
		cases = append(cases, schema{
			"if":   schema{"properties": schema{"type": schema{"const": string(t)}}, "required": []string{"type"}},
			"then": then,
		})
	}
	s["allOf"] = cases
	return s
}

// edgeSchema is an edge (from, to, on) or a choice group (from, choice).
func edgeSchema() schema {
	s := objectSchema(EdgeFields, nil)
	s["oneOf"] = []any{
		schema{"required": []string{"to"}, "properties": schema{"choice": never()}},
		schema{"required": []string{"choice"}, "properties": schema{"to": never(), "on": never()}},
	}
	return s
}

// durationSchema accepts Go durations ("90s", "1h30m") and ISO-8601 ones
// ("PT90S", "P1DT2H").
func durationSchema() schema {
	goStyle := `^\+?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+$`
	iso := `^[Pp](?:[0-9.]+[Ww])?(?:[0-9.]+[Dd])?(?:[Tt](?:[0-9.]+[Hh])?(?:[0-9.]+[Mm])?(?:[0-9.]+[Ss])?)?$`
	return schema{
		"type":        "string",
		"description": `A positive duration: Go style ("90s", "1h30m") or ISO-8601 ("PT90S", "P1DT2H").`,
		"anyOf":       []any{schema{"pattern": goStyle}, schema{"pattern": iso}},
	}
}

var compiledDocumentSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(DocumentSchema()))
	if err != nil {
		return nil, err
	}
	return compileSchema(doc)
})

// ValidateSchema checks a document against [DocumentSchema] alone,
// without compiling it: what an editor would report.
func ValidateSchema(doc []byte, f Format) error {
	tree, err := parse(doc, f)
	if err != nil {
		return err
	}
	s, err := compiledDocumentSchema()
	if err != nil {
		return err
	}
	return s.Validate(tree)
}
