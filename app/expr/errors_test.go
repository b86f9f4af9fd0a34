package expr

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithMaxLength(200), WithMaxNesting(20))
	tests := []struct {
		name    string
		src     string
		kind    Kind
		message string
	}{
		{"empty", "  ", KindAny, "expression is empty"},
		{"syntax", "input.amount >", KindAny, "the expression ends too early (line 1, column 15)"},
		{"undeclared", "order.amount", KindAny, "unknown name “order” (line 1, column 1)"},
		{"extraneous", "input.x +* 2", KindAny, "unexpected “*” (line 1, column 10)"},
		{"operator", `1 + "a"`, KindAny, "+ cannot be applied to int and string"},
		{"bool wanted, int given", "1 + 2", KindBool, "must evaluate to bool, not int"},
		{"list wanted, string given", `"a"`, KindList, "must evaluate to list"},
		{"timestamp wanted, map given", "{}", KindTimestamp, "must evaluate to timestamp"},
		{"string wanted, bool given", "true", KindString, "must evaluate to string"},
		{"map wanted, list given", "[1]", KindMap, "must evaluate to map"},
		{"int wanted, double given", "1.5", KindInt, "must evaluate to int, not double"},
		{"too long", strings.Repeat("1+", 150) + "1", KindAny, "size"},
		{"too deep", strings.Repeat("[", 30) + "1" + strings.Repeat("]", 30), KindAny, "recursion"},
		{"comprehensions too nested", "[1].all(a, [1].all(b, [1].all(c, [1].all(d, true))))", KindBool, "nesting"},
		{"bad duration literal", `duration("forever")`, KindAny, "duration"},
		{"bad regex literal", `"a".matches("(")`, KindBool, "invalid matches argument"},
		{"bad kind", "1", Kind(99), "unknown result kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := env.Compile(tt.src, tt.kind)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Compile(%q) err = %v, want *Error", tt.src, err)
			}
			if !errors.Is(err, ErrCompile) || errors.Is(err, ErrEval) {
				t.Errorf("err %v should match ErrCompile only", err)
			}
			if e.Code != CodeInvalidExpression {
				t.Errorf("Code = %q", e.Code)
			}
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("Message = %q, want it to contain %q", e.Message, tt.message)
			}
			if strings.Contains(e.Message, "\n") {
				t.Errorf("Message spans lines: %q", e.Message)
			}
		})
	}
}

func TestCompileAcceptsDynForEveryKind(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for _, k := range []Kind{KindAny, KindBool, KindList, KindTimestamp, KindString, KindMap, KindInt} {
		if _, err := env.Compile("input.x", k); err != nil {
			t.Errorf("Compile(input.x, %v): %v", k, err)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	vars := testVars(t)
	tests := []struct {
		name    string
		src     string
		kind    Kind
		is      error
		message string
	}{
		{"missing key", "input.missing > 0", KindBool, ErrEval, "no such key: missing"},
		{"division by zero", "1 / (index - 4)", KindAny, ErrEval, "division by zero"},
		{"mismatched operands", "input.tier + 1", KindAny, ErrEval, "convert with int(), double() or string()"},
		{"dyn result not bool", "input.tier", KindBool, ErrResultType, "must evaluate to bool, got string"},
		{"dyn result not list", "input.amount", KindList, ErrResultType, "got int"},
		{"dyn result not timestamp", "input.tier", KindTimestamp, ErrResultType, "got string"},
		{"dyn result not int", "input.tier", KindInt, ErrResultType, "must evaluate to int, got string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := env.Compile(tt.src, tt.kind)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.src, err)
			}
			_, err = p.Eval(context.Background(), vars)
			assertEvalError(t, err, tt.is, tt.message)
			if errors.Is(err, ErrCostLimit) || errors.Is(err, ErrInterrupted) {
				t.Errorf("err %v should not match ErrCostLimit or ErrInterrupted", err)
			}
		})
	}
}

func assertEvalError(t *testing.T, err, is error, message string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if !errors.Is(err, ErrEval) || !errors.Is(err, is) || errors.Is(err, ErrCompile) {
		t.Errorf("err %v: want ErrEval and %v, not ErrCompile", err, is)
	}
	want := CodeExpressionError
	if errors.Is(err, ErrCostLimit) || errors.Is(err, ErrTimeLimit) {
		want = CodeExpressionLimit
	}
	if e.Code != want {
		t.Errorf("Code = %q, want %q", e.Code, want)
	}
	if !strings.Contains(e.Message, message) {
		t.Errorf("Message = %q, want it to contain %q", e.Message, message)
	}
}

func TestWithLocation(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	_, err := env.Compile("nope", KindAny)
	located := WithLocation(err, "charge", "with.input_expr")
	var e *Error
	if !errors.As(located, &e) || e.Step != "charge" || e.Field != "with.input_expr" {
		t.Fatalf("WithLocation = %#v", located)
	}
	if !strings.HasPrefix(located.Error(), `step "charge", with.input_expr: `) {
		t.Errorf("Error() = %q", located.Error())
	}
	var orig *Error
	errors.As(err, &orig)
	if orig.Step != "" {
		t.Error("WithLocation changed the original error")
	}
	if !errors.Is(located, ErrCompile) {
		t.Error("located error lost its sentinel")
	}
	other := WithLocation(errors.New("boom"), "a", "run_if")
	if other.Error() != `step "a", run_if: boom` {
		t.Errorf("wrapped = %q", other.Error())
	}
	if WithLocation(nil, "a", "b") != nil {
		t.Error("WithLocation(nil) != nil")
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	e := &Error{Message: "boom"}
	tests := []struct {
		step, field, want string
	}{
		{"", "", "boom"},
		{"a", "", `step "a": boom`},
		{"", "run_if", "run_if: boom"},
		{"a", "run_if", `step "a", run_if: boom`},
	}
	for _, tt := range tests {
		if got := e.WithLocation(tt.step, tt.field).Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
