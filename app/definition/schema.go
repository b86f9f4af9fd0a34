package definition

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ErrInputInvalid matches an [*InputError].
var ErrInputInvalid = errors.New("input does not match the definition's input_schema")

// InputError lists where a trigger input breaks the input schema; paths
// start at "input".
type InputError struct {
	Problems []Problem
}

func (e *InputError) Error() string {
	return (&InvalidError{Problems: e.Problems}).Error()[len("invalid definition: "):]
}

// Is makes errors.Is(err, ErrInputInvalid) true.
func (e *InputError) Is(target error) bool { return target == ErrInputInvalid }

// InputValidator checks trigger inputs against a manifest's input_schema.
// It is safe for concurrent use.
type InputValidator struct {
	schema *jsonschema.Schema
}

// NewInputValidator compiles m's input schema once; a manifest without one
// accepts every input.
func NewInputValidator(m *Manifest) (*InputValidator, error) {
	if len(m.InputSchema) == 0 {
		return &InputValidator{}, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(m.InputSchema))
	if err != nil {
		return nil, fmt.Errorf("definition: read input_schema: %w", err)
	}
	s, err := compileSchema(doc)
	if err != nil {
		return nil, fmt.Errorf("definition: compile input_schema: %w", err)
	}
	return &InputValidator{schema: s}, nil
}

// Validate checks one input (a JSON-decoded value). The error is an
// [*InputError] matching [ErrInputInvalid].
func (v *InputValidator) Validate(input any) error {
	if v.schema == nil {
		return nil
	}
	err := v.schema.Validate(input)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var out []Problem
	leaves(ve, input, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return &InputError{Problems: out}
}

// ValidateInput checks input against m's input schema, compiling it on
// each call; keep an [InputValidator] to check many inputs.
func ValidateInput(m *Manifest, input any) error {
	v, err := NewInputValidator(m)
	if err != nil {
		return err
	}
	return v.Validate(input)
}

var printer = message.NewPrinter(language.English)

func leaves(e *jsonschema.ValidationError, input any, out *[]Problem) {
	if len(e.Causes) == 0 {
		*out = append(*out, Problem{Path: instancePath(input, e.InstanceLocation), Message: inWords(e.ErrorKind)})
		return
	}
	for _, c := range e.Causes {
		leaves(c, input, out)
	}
}

// instancePath renders a JSON pointer's tokens as input.a.b[2], walking
// the value to tell list indexes from keys.
func instancePath(v any, tokens []string) string {
	p := path("input")
	for _, t := range tokens {
		switch x := v.(type) {
		case []any:
			i, _ := strconv.Atoi(t)
			p = p.at(i)
			if i >= 0 && i < len(x) {
				v = x[i]
			}
		case map[string]any:
			p, v = p.dot(t), x[t]
		default:
			p = p.dot(t)
		}
	}
	return string(p)
}

// checkSchema reports whether v is a valid JSON Schema (draft 2020-12
// unless it names another draft).
func checkSchema(v any) error {
	_, err := compileSchema(v)
	return err
}

const schemaURL = "mem://ductor/schema.json"

func compileSchema(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("invalid JSON Schema: %w", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON Schema: %s", firstLine(err.Error()))
	}
	return s, nil
}

// noLoader refuses external references: compiling stays free of I/O.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not supported: %s", url)
}

// inWords says a schema problem as a person filling a form reads it
// ("must be at least 10 characters"), not by the schema's keyword
// ("minLength: got 2, want 10"); kinds without words of their own keep
// the library's message.
func inWords(k jsonschema.ErrorKind) string {
	plural := func(n int, noun string) string {
		if n == 1 {
			return "1 " + noun
		}
		return fmt.Sprintf("%d %ss", n, noun)
	}
	num := func(r *big.Rat) string { return r.RatString() }
	switch k := k.(type) {
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %s (it has %d)", plural(k.Want, "character"), k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %s (it has %d)", plural(k.Want, "character"), k.Got)
	case *kind.Minimum:
		return "must be at least " + num(k.Want)
	case *kind.Maximum:
		return "must be at most " + num(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be more than " + num(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be less than " + num(k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %s (it has %d)", plural(k.Want, "item"), k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %s (it has %d)", plural(k.Want, "item"), k.Got)
	case *kind.Pattern:
		return fmt.Sprintf("must match the pattern %s", k.Want)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.Type:
		return fmt.Sprintf("must be %s, not %s", strings.Join(k.Want, " or "), k.Got)
	}
	return k.LocalizedString(printer)
}
