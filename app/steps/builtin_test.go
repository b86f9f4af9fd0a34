package steps_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ductor/ductor/app/steps"
)

func TestBuiltinNoop(t *testing.T) {
	t.Parallel()
	out, err := setup(t, nil).run(t, task(steps.BuiltinNoop, map[string]any{"ignored": true}))
	wantOutput(t, out, err, `{}`)
}

func TestBuiltinEcho(t *testing.T) {
	t.Parallel()
	input := map[string]any{"a": []any{1, "two", nil}, "b": map[string]any{"c": 3.5}}
	out, err := setup(t, nil).run(t, task(steps.BuiltinEcho, input))
	wantOutput(t, out, err, `{"a":[1,"two",null],"b":{"c":3.5}}`)
}

func TestBuiltinEchoNormalisesToJSONValues(t *testing.T) {
	t.Parallel()
	type point struct {
		X int `json:"x"`
	}
	out, err := setup(t, nil).run(t, task(steps.BuiltinEcho, []point{{X: 1}}))
	wantOutput(t, out, err, `[{"x":1}]`)
	list, ok := out.([]any)
	if !ok {
		t.Fatalf("output is %T, want []any", out)
	}
	m, ok := list[0].(map[string]any)
	if !ok || m["x"] != int64(1) {
		t.Errorf("element = %#v, want map with int64 x", list[0])
	}
}

func TestBuiltinSleep(t *testing.T) {
	t.Parallel()
	for _, ms := range []any{5, json.Number("5"), float64(5)} {
		out, err := setup(t, nil).run(t, task(steps.BuiltinSleep, map[string]any{"ms": ms}))
		wantOutput(t, out, err, `{"slept_ms":5}`)
	}
}

func TestBuiltinSleepHonoursCancellation(t *testing.T) {
	t.Parallel()
	req := task(steps.BuiltinSleep, map[string]any{"ms": 60_000})
	req.Timeout = 20 * time.Millisecond
	start := time.Now()
	_, err := setup(t, nil).run(t, req)
	wantError(t, err, steps.CodeTimeout, true, "20ms")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("sleep returned after %s", d)
	}
}

func TestBuiltinSleepRejectsBadInput(t *testing.T) {
	t.Parallel()
	for _, input := range []any{nil, map[string]any{}, map[string]any{"ms": "5"}, map[string]any{"ms": -1}, map[string]any{"ms": 1.5}} {
		_, err := setup(t, nil).run(t, task(steps.BuiltinSleep, input))
		wantError(t, err, steps.CodeInvalidInput, false, "ms")
	}
}

func TestBuiltinFail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		input     any
		retryable bool
		message   string
	}{
		{"defaults", nil, false, "failed by builtin.fail"},
		{"message", map[string]any{"message": "card declined"}, false, "card declined"},
		{"retryable", map[string]any{"message": "flaky", "retryable": true}, true, "flaky"},
		{"not retryable", map[string]any{"retryable": false}, false, "builtin.fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := setup(t, nil).run(t, task(steps.BuiltinFail, tt.input))
			wantError(t, err, steps.CodeTaskFailed, tt.retryable, tt.message)
			if out != nil {
				t.Errorf("output = %v, want nil", out)
			}
		})
	}
}

func TestBuiltinFailRejectsBadInput(t *testing.T) {
	t.Parallel()
	for _, input := range []any{map[string]any{"message": 3}, map[string]any{"retryable": "yes"}} {
		_, err := setup(t, nil).run(t, task(steps.BuiltinFail, input))
		wantError(t, err, steps.CodeInvalidInput, false)
	}
}
