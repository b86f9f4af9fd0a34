package sdk_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/sdk"
)

// The SDK has a typed field for every field of a definition document, and
// sends none the document lacks: a value with every field of every type
// filled in marshals to exactly the fields of the definition's JSON
// Schema (docs/schema/definition.json), at every level and for each step
// type's `with`.
func TestFieldsMatchTheDefinitionSchema(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/schema/definition.json")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("docs/schema/definition.json is not here: outside the Ductor repository")
	}
	if err != nil {
		t.Fatal(err)
	}
	var schema schemaNode
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	s := fieldCheck{t: t, defs: schema.Defs}
	var d sdk.Definition
	fill(reflect.ValueOf(&d).Elem())
	s.compare("", schema, toJSON(t, d))

	steps := stepsOfEveryType()
	for _, typ := range schema.Defs["step"].Properties["type"].Enum {
		step, ok := steps[sdk.StepType(typ.(string))]
		if !ok {
			t.Errorf("the SDK has no builder for %s steps", typ)
			continue
		}
		with, _ := toJSON(t, step).(map[string]any)["with"]
		s.compare("steps[type="+string(step.Type)+"].with", schema.Defs["with_"+string(step.Type)], with)
	}
}

// stepsOfEveryType builds a step of each type, its settings filled.
func stepsOfEveryType() map[sdk.StepType]sdk.Step {
	typed := []sdk.Step{
		sdk.TaskStep("s", filled[sdk.TaskWith]()),
		sdk.HTTPStep("s", filled[sdk.HTTPWith]()),
		sdk.ScatterStep("s", filled[sdk.ScatterWith]()),
		sdk.SubworkflowStep("s", filled[sdk.SubworkflowWith]()),
		sdk.WaitStep("s", filled[sdk.WaitWith]()),
		sdk.SignalStep("s", filled[sdk.SignalWith]()),
		sdk.EventStep("s", filled[sdk.EventWith]()),
		sdk.EventSetStep("s", filled[sdk.EventSetWith]()),
		sdk.DigestStep("s", filled[sdk.DigestWith]()),
		sdk.ApprovalStep("s", filled[sdk.ApprovalWith]()),
		sdk.HumanLoopStep("s", filled[sdk.HumanLoopWith]()),
		sdk.TransformStep("s", "x"),
		sdk.ConditionStep("s", "x"),
		sdk.GatherStep("s", "x", "x"),
		sdk.CheckpointStep("s", "x", "x"),
	}
	out := map[sdk.StepType]sdk.Step{}
	for _, s := range typed {
		out[s.Type] = s
	}
	return out
}

func filled[T any]() T {
	var v T
	fill(reflect.ValueOf(&v).Elem())
	return v
}

var timeType = reflect.TypeOf(time.Time{})

// fill sets v and everything in it to a value that is not zero: one
// element in a slice or a map, a string in an interface.
func fill(v reflect.Value) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e)
		v.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), e)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}

func toJSON(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// schemaNode is the part of a JSON Schema the comparison reads.
type schemaNode struct {
	Ref        string                `json:"$ref"`
	Defs       map[string]schemaNode `json:"$defs"`
	Properties map[string]schemaNode `json:"properties"`
	Items      *schemaNode           `json:"items"`
	AnyOf      []schemaNode          `json:"anyOf"`
	Enum       []any                 `json:"enum"`
}

type fieldCheck struct {
	t    *testing.T
	defs map[string]schemaNode
}

// compare reports the fields of the schema node n missing from the JSON
// value v at path, and the fields of v that n lacks; a node without
// properties (a free-form object, a leaf) is not looked into.
func (c fieldCheck) compare(path string, n schemaNode, v any) {
	if n.Ref != "" {
		n = c.defs[n.Ref[strings.LastIndex(n.Ref, "/")+1:]]
	}
	switch v := v.(type) {
	case map[string]any:
		if alt, ok := alternative(n, func(a schemaNode) bool { return a.Properties != nil }); ok {
			n = alt
		}
		if n.Properties != nil {
			c.compareObject(path, n, v)
		}
	case []any:
		if alt, ok := alternative(n, func(a schemaNode) bool { return a.Items != nil }); ok {
			n = alt
		}
		if n.Items != nil && len(v) > 0 {
			c.compare(path+"[]", *n.Items, v[0])
		}
	}
}

func (c fieldCheck) compareObject(path string, n schemaNode, v map[string]any) {
	for _, name := range sortedKeys(n.Properties) {
		if _, ok := v[name]; !ok {
			c.t.Errorf("the SDK has no field for %s", strings.TrimPrefix(path+"."+name, "."))
		}
	}
	for _, name := range sortedKeys(v) {
		p, ok := n.Properties[name]
		if !ok {
			c.t.Errorf("the SDK writes %s, which the definition schema does not have", strings.TrimPrefix(path+"."+name, "."))
			continue
		}
		c.compare(path+"."+name, p, v[name])
	}
}

// alternative is the first of n's anyOf that ok accepts.
func alternative(n schemaNode, ok func(schemaNode) bool) (schemaNode, bool) {
	i := slices.IndexFunc(n.AnyOf, ok)
	if i < 0 {
		return schemaNode{}, false
	}
	return n.AnyOf[i], true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
