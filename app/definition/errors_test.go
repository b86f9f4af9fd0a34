package definition

import (
	"errors"
	"strings"
	"testing"
)

func TestInvalidErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := compileDoc(t, one(`{ref: a, type: task}`, `{ref: b, type: task}`, `{ref: c, type: task}`, `{ref: d, type: task}`))
	want := `invalid definition: steps[0].with.handler: is required; steps[1].with.handler: is required; steps[2].with.handler: is required; and 1 more`
	if err == nil || err.Error() != want {
		t.Errorf("Error() = %v\nwant       %s", err, want)
	}
	if !errors.Is(err, ErrInvalid) || errors.Is(err, ErrTooLarge) {
		t.Error("sentinels")
	}
	if s := (Problem{Message: "m"}).String(); s != "m" {
		t.Errorf("String() = %q", s)
	}
}

func TestInputErrorMessage(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, one(taskA)+"input_schema: {type: object, required: [n]}\n")
	err := ValidateInput(c.Manifest, map[string]any{})
	if err == nil || !strings.HasPrefix(err.Error(), "input: ") {
		t.Errorf("Error() = %v", err)
	}
}

func TestNumbers(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, one(`{ref: a, type: task, with: {handler: h}, retry: {max_attempts: 4.0, backoff_coefficient: 3}}`))
	if r := c.Manifest.Steps[0].Retry; r.MaxAttempts != 4 || r.BackoffCoefficient != 3 {
		t.Errorf("retry = %+v", r)
	}
	_, err := compileDoc(t, one(`{ref: a, type: task, with: {handler: h}, retry: {max_attempts: 2.5, backoff_coefficient: "x"}}`))
	assertProblems(t, err, []want{
		{"steps[0].retry.max_attempts", "a", "must be an integer, not 2.5"},
		{"steps[0].retry.backoff_coefficient", "a", "must be a number from 1 to 100"},
	})
	_, err = compileDoc(t, one(`{ref: a, type: task, with: {handler: h}, retry: {max_attempts: "3", initial_interval: 5}}`))
	assertProblems(t, err, []want{
		{"steps[0].retry.max_attempts", "a", "must be an integer, not a string"},
		{"steps[0].retry.initial_interval", "a", "must be a string, not a number"},
	})
}
