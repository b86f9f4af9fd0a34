package expr

import (
	"context"
	"reflect"
	"testing"
)

func TestMixedArithmetic(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	vars := Vars{Input: decode(t, `{"price": 9.5, "count": 2, "whole": 4.0, "big": 9007199254740993}`), Index: 3}
	tests := []struct {
		src  string
		want any
	}{
		{"input.price * 2", 19.0},
		{"2 * input.price", 19.0},
		{"input.count + 0.5", 2.5},
		{"input.count - 0.5", 1.5},
		{"input.count / 4.0", 0.5},
		{"input.whole / input.count", 2.0},
		{"index * 1.5", 4.5},
		{"uint(3) * 1.5", 4.5},
		{"1.5 - uint(1)", 0.5},
		{"input.count * input.count", int64(4)},
		{"input.count / 3", int64(0)},
		{"input.big + 0", int64(9007199254740993)},
		{"string(input.big)", "9007199254740993"},
		{"input.count < 2.5", true},
		{"input.price > input.count", true},
		{"input.whole == 4", true},
		{"input.count in [2.0]", true},
		{`"a" + "b"`, "ab"},
		{"[1] + [2]", []any{int64(1), int64(2)}},
		{`timestamp("2025-01-01T00:00:00Z") + duration("1h") > timestamp("2025-01-01T00:30:00Z")`, true},
		{`duration("1h") - duration("30m")`, "1800s"},
	}
	for _, tt := range tests {
		p, err := env.Compile(tt.src, KindAny)
		if err != nil {
			t.Errorf("Compile(%q): %v", tt.src, err)
			continue
		}
		got, err := p.Eval(context.Background(), vars)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s = %#v, %v; want %#v", tt.src, got, err, tt.want)
		}
	}
}

func TestMixedArithmeticKeepsIntOverflowAnError(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	p, err := env.Compile("9223372036854775807 + index", KindAny)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Eval(context.Background(), Vars{Index: 1}); err == nil {
		t.Fatal("int overflow evaluated, want an error")
	}
}
