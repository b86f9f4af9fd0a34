package expr

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func longList(n int) []any {
	xs := make([]any, n)
	for i := range xs {
		xs[i] = float64(i)
	}
	return xs
}

func TestCostLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithCostLimit(1000))
	p, err := env.Compile("input.all(x, x >= 0)", KindBool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Eval(context.Background(), Vars{Input: longList(10)}); err != nil {
		t.Fatalf("small input: %v", err)
	}
	_, err = p.Eval(context.Background(), Vars{Input: longList(10_000)})
	assertEvalError(t, err, ErrCostLimit, "cost limit of 1000 exceeded")
	if errors.Is(err, ErrInterrupted) {
		t.Error("cost limit error matches ErrInterrupted")
	}
}

func TestDefaultCostLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithTimeLimit(time.Minute))
	p, err := env.Compile("input.all(x, x >= 0.0)", KindBool)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Eval(context.Background(), Vars{Input: longList(DefaultCostLimit)})
	if !errors.Is(err, ErrCostLimit) {
		t.Fatalf("err = %v, want ErrCostLimit", err)
	}
}

func TestInterrupt(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithCostLimit(1<<62), WithInterruptEvery(10))
	p, err := env.Compile("input.map(x, input.map(y, x * y)).size()", KindAny)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.Eval(ctx, Vars{Input: longList(5_000)})
	assertEvalError(t, err, ErrInterrupted, "interrupted")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v does not match context.Canceled", err)
	}
	if errors.Is(err, ErrCostLimit) {
		t.Error("interruption matches ErrCostLimit")
	}
}

func TestInterruptByDeadline(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithCostLimit(1<<62))
	p, err := env.Compile("input.map(x, input.map(y, x * y)).size()", KindAny)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// 100M multiplications take far longer than the deadline.
	_, err = p.Eval(ctx, Vars{Input: longList(10_000)})
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrInterrupted and DeadlineExceeded", err)
	}
}

func TestNewEnvRejectsNonPositiveLimits(t *testing.T) {
	t.Parallel()
	for _, o := range []Option{WithCostLimit(0), WithMaxLength(0), WithMaxNesting(-1), WithComprehensionNesting(0), WithInterruptEvery(0)} {
		if _, err := NewEnv(o); err == nil {
			t.Error("NewEnv accepted a non-positive limit")
		}
	}
}

func TestConcurrentEval(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	p, err := env.Compile(`{"total": input.lines.map(l, l.qty)[0] + input.lines[1].qty, "i": index}`, KindMap)
	if err != nil {
		t.Fatal(err)
	}
	base := testVars(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				v := base
				v.Index = g*1000 + i
				out, err := p.Eval(context.Background(), v)
				if err != nil {
					errs <- err
					return
				}
				m := out.(map[string]any)
				if m["i"] != int64(v.Index) || m["total"] != int64(3) {
					errs <- errors.New("wrong result under concurrency")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCostLimitPricesStrings(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithCostLimit(100))
	p, err := env.Compile("input + input", KindString)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Eval(context.Background(), Vars{Input: "short"}); err != nil {
		t.Fatalf("short string: %v", err)
	}
	big := string(make([]byte, 10_000))
	if _, err := p.Eval(context.Background(), Vars{Input: big}); !errors.Is(err, ErrCostLimit) {
		t.Fatalf("20 KB string: err = %v, want ErrCostLimit", err)
	}
}

func TestCostLimitAppliesPerEvaluation(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithCostLimit(500))
	p, err := env.Compile("input.all(x, x >= 0.0)", KindBool)
	if err != nil {
		t.Fatal(err)
	}
	// Each evaluation is well under the limit; together they are far over.
	for range 100 {
		if _, err := p.Eval(context.Background(), Vars{Input: longList(50)}); err != nil {
			t.Fatalf("Eval: %v", err)
		}
	}
}

// Allocation is charged: building lists costs their length, so a
// comprehension that builds a large list per element stops at the limit
// long before it holds the memory it asks for.
func TestCostLimitChargesAllocation(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithTimeLimit(time.Minute)) // the cost limit, not the clock, must stop them
	for _, src := range []string{
		"input.map(x, lists.range(10000)).size()",
		"input.map(x, input.map(y, [x, y])).size()",
		"input.map(x, {'a': lists.range(5000)}).size()",
		"lists.range(3000).map(x, lists.range(x)).size()",
	} {
		p, err := env.Compile(src, KindAny)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = p.Eval(context.Background(), Vars{Input: longList(3000)})
		runtime.ReadMemStats(&after)
		assertEvalError(t, err, ErrCostLimit, "cost limit")
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
			t.Errorf("%s allocated %d MB before stopping", src, alloc>>20)
		}
	}
}

// Reading a large variable only to take its size costs one unit, however
// often it is read.
func TestCostLimitChargesSizeOfReadsLittle(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithCostLimit(50_000))
	p, err := env.Compile("input.all(x, input.size() > 0)", KindBool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Eval(context.Background(), Vars{Input: longList(5000)}); err != nil {
		t.Fatalf("Eval: %v", err)
	}
}

// replace and join are charged for their output before they build it.
func TestCostLimitGuardsAmplifyingCalls(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithTimeLimit(time.Minute))
	big := strings.Repeat("x", 4000)
	for _, src := range []string{
		`input.replace("", input).replace("", input)`,
		`lists.range(10000).map(i, "").join(input + input + input)`,
	} {
		p, err := env.Compile(src, KindString)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = p.Eval(context.Background(), Vars{Input: big})
		runtime.ReadMemStats(&after)
		assertEvalError(t, err, ErrCostLimit, "cost limit")
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 100<<20 {
			t.Errorf("%s allocated %d MB before stopping", src, alloc>>20)
		}
	}
	p, err := env.Compile(`input.replace("b", "cd", 1) + ["a", "b"].join("-") + ["c"].join()`, KindString)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Eval(context.Background(), Vars{Input: "abab"})
	if err != nil || out != "acdaba-bc" {
		t.Fatalf("out = %v, %v", out, err)
	}
}

func TestTimeLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, WithCostLimit(1<<62), WithTimeLimit(20*time.Millisecond))
	p, err := env.Compile("input.map(x, input.map(y, x * y)).size()", KindAny)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Eval(context.Background(), Vars{Input: longList(10_000)})
	assertEvalError(t, err, ErrTimeLimit, "time limit of 20ms exceeded")
	if errors.Is(err, ErrInterrupted) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("time limit %v matches the caller's interruption", err)
	}
}

// An expression that must exceed the cost limit whatever its input does
// not compile; one whose cost depends on its input does.
func TestCompileRejectsStaticallyOverBudget(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	_, err := env.Compile("lists.range(3000).map(x, lists.range(10000)).size()", KindAny)
	if !errors.Is(err, ErrCompile) || !strings.Contains(err.Error(), "exceeds the cost limit") {
		t.Fatalf("err = %v, want a compile error naming the cost limit", err)
	}
	for _, src := range []string{
		"lists.range(30).map(x, lists.range(100)).size()",
		"input.map(x, lists.range(10000)).size()",
		"lists.range(int(input.n)).size()",
	} {
		if _, err := env.Compile(src, KindAny); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}
