package definition

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
)

func TestValidateInput(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, one(taskA)+`input_schema:
  type: object
  required: [amount, lines]
  properties:
    amount: {type: number, exclusiveMinimum: 0}
    lines:
      type: array
      items: {type: object, required: [sku], properties: {sku: {type: string}}}
`)
	v, err := NewInputValidator(c.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(decodeJSON(t, `{"amount": 5, "lines": [{"sku": "a"}]}`)); err != nil {
		t.Errorf("valid input: %v", err)
	}
	err = v.Validate(decodeJSON(t, `{"amount": -1, "lines": [{"sku": "a"}, {"qty": 1}]}`))
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, ErrInputInvalid) {
		t.Fatalf("err = %v, want *InputError", err)
	}
	paths := map[string]bool{}
	for _, p := range ie.Problems {
		paths[p.Path] = true
	}
	if !paths["input.amount"] || !paths["input.lines[1]"] || len(ie.Problems) != 2 {
		t.Errorf("problems = %+v, want input.amount and input.lines[1]", ie.Problems)
	}
	if err := ValidateInput(c.Manifest, decodeJSON(t, `{"amount": 1}`)); !errors.Is(err, ErrInputInvalid) {
		t.Errorf("missing lines: err = %v", err)
	}
}

func TestValidateInputWithoutSchema(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, one(taskA))
	if err := ValidateInput(c.Manifest, "anything"); err != nil {
		t.Errorf("err = %v", err)
	}
}

func TestInputValidatorConcurrent(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, one(taskA)+"input_schema: {type: object, properties: {n: {type: integer}}}\n")
	v, err := NewInputValidator(c.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			input := map[string]any{"n": float64(i)}
			if i%2 == 1 {
				input["n"] = "x"
			}
			if err := v.Validate(input); (err != nil) != (i%2 == 1) {
				t.Errorf("input %v: err = %v", input, err)
			}
		})
	}
	wg.Wait()
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
