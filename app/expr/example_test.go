package expr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ductor/ductor/app/expr"
)

func Example() {
	env, err := expr.NewEnv()
	if err != nil {
		fmt.Println(err)
		return
	}
	cache := expr.NewCache(env, 1024)
	prg, err := cache.Get("input.amount > 0 && input.tier == 'gold'", expr.KindBool)
	if err != nil {
		fmt.Println(err)
		return
	}
	var input any
	_ = json.Unmarshal([]byte(`{"amount": 5, "tier": "gold"}`), &input)
	ok, err := prg.EvalBool(context.Background(), expr.Vars{Input: input})
	fmt.Println(ok, err)
	// Output: true <nil>
}

func ExampleError() {
	env, _ := expr.NewEnv(expr.WithCostLimit(100))
	prg, _ := env.Compile("input.all(x, x > 0)", expr.KindBool)
	xs := make([]any, 1000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	_, err := prg.Eval(context.Background(), expr.Vars{Input: xs})
	err = expr.WithLocation(err, "check", "with.expr")
	var e *expr.Error
	errors.As(err, &e)
	fmt.Println(errors.Is(err, expr.ErrCostLimit), e.Code)
	fmt.Println(err)
	// Output:
	// true expression_limit
	// step "check", with.expr: cost limit of 100 exceeded
}
