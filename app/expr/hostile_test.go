package expr

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostileInput is what the hostile expressions read: big, a list of about
// 340 KB of JSON; a and b, two lists of 20,000 distinct numbers; s, a
// 64 KB string.
var hostileInput = sync.OnceValue(func() map[string]any {
	big := make([]any, 10_000)
	for i := range big {
		big[i] = fmt.Sprintf("%030d", i)
	}
	a, b := make([]any, 20_000), make([]any, 20_000)
	for i := range a {
		a[i], b[i] = int64(i), int64(-1-i)
	}
	return map[string]any{"big": big, "a": a, "b": b, "s": strings.Repeat("x", 64<<10), "n": int64(3)}
})

// measure evaluates src once against the hostile input and returns what
// the evaluation allocated and how long it took.
func measure(t testing.TB, env *Env, src string) (out any, err error, alloc uint64, took time.Duration) {
	t.Helper()
	p, err := env.Compile(src, KindAny)
	if err != nil {
		return nil, err, 0, 0
	}
	vars := Vars{Input: hostileInput()}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	began := time.Now()
	out, err = p.Eval(context.Background(), vars)
	took = time.Since(began)
	runtime.ReadMemStats(&after)
	return out, err, after.TotalAlloc - before.TotalAlloc, took
}

// Bounds every hostile evaluation must stay within: the default time
// limit (they normally take a few milliseconds; the machine may be
// loaded) and a few tens of megabytes.
const (
	hostileMaxAlloc = 48 << 20
	hostileMaxTime  = DefaultTimeLimit
)

// Expressions that build from many references to one large value, or
// compare every element of a list with every element of another, stop at
// the cost limit quickly and with little memory. They are not parallel:
// the allocation they measure is the process's.
func TestHostileExpressionsStopAtCostLimit(t *testing.T) {
	env := newTestEnv(t, WithTimeLimit(time.Minute)) // the cost limit, not the clock, must stop them
	for _, src := range []string{
		"lists.range(150).map(x, input.big)",
		"lists.range(400).map(x, input.big)",
		"lists.range(10000).map(x, input.big)",
		"lists.range(150).map(x, input.big).flatten()",
		"lists.range(10000).map(x, input.big).flatten().size()",
		"lists.range(10000).map(x, [input.big, input.big]).size()",
		"lists.range(10000).filter(x, input.big == input.big).size()",
		"lists.range(10000).map(x, input.s).join()",
		"lists.range(100).map(x, input.a.sort()).size()",
		"lists.range(100).map(x, input.a.sortBy(y, -y)).size()",
		"sets.intersects(input.a, input.b)",
		"sets.contains(input.a, input.b)",
		"sets.equivalent(input.a, input.b)",
		"input.a.distinct().size()",
		"(input.a + input.b).distinct().size()",
		`lists.range(10000).map(x, "%s".format([input.big])).size()`,
	} {
		t.Run(src, func(t *testing.T) {
			_, err, alloc, took := measure(t, env, src)
			assertEvalError(t, err, ErrCostLimit, "cost limit of 1000000 exceeded")
			if alloc > hostileMaxAlloc || took > hostileMaxTime {
				t.Errorf("stopped after %s having allocated %d MB", took, alloc>>20)
			}
			t.Logf("stopped after %s, %d KB allocated", took, alloc>>10)
		})
	}
}

// The same functions over ordinary sizes keep working.
func TestGuardedCallsStillWork(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for src, want := range map[string]string{
		"sets.contains([1, 2, 3], [2, 3])":             "true",
		"sets.contains([1, 2], [2, 4])":                "false",
		"sets.intersects([1, 2], [5, 2])":              "true",
		"sets.intersects([1, 2], [])":                  "false",
		"sets.equivalent([1, 2, 2], [2, 1])":           "true",
		"sets.equivalent([1], [1, 3])":                 "false",
		"[1, 2, 1, [3], [3]].distinct()":               "[1 2 [3]]",
		"[1, [2, [3, [4]]]].flatten()":                 "[1 2 [3 [4]]]",
		"[1, [2, [3, [4]]]].flatten(2)":                "[1 2 3 [4]]",
		"[[]].flatten()":                               "[]",
		"input.a.filter(x, x < input.a.size()).size()": "20000",
		"input.big.map(x, x.size()).sort()[0]":         "30",
		"lists.range(300).map(x, x % 3).distinct()":    "[0 1 2]",
		"[3, 1, 2].sortBy(x, -x)":                      "[3 2 1]",
		"[3, 1, 2].sort()":                             "[1 2 3]",
		"input.a.sort().size()":                        "20000",
		`"%s-%d".format(["a", 7])`:                     "a-7",
		"input.big.size() + input.big.size()":          "20000",
	} {
		_, err, _, _ := measure(t, env, src)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		p, _ := env.Compile(src, KindAny)
		out, _ := p.Eval(context.Background(), Vars{Input: hostileInput()})
		if got := fmt.Sprint(out); got != want {
			t.Errorf("%s = %s, want %s", src, got, want)
		}
	}
	p, err := env.Compile("[1].flatten(-1)", KindAny)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Eval(context.Background(), Vars{}); err == nil || !strings.Contains(err.Error(), "non-negative") {
		t.Errorf("flatten(-1): err = %v", err)
	}
}

// A read of a variable costs its whole size each time: 150 reads of a
// 10,000-element list cost more than a 1,000,000 budget, a single one
// does not.
func TestReadsChargeTheirSize(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for src, over := range map[string]bool{
		"input.big":                                false,
		"[input.big, input.big, input.big]":        false,
		"lists.range(10).map(x, input.big)":        false,
		"lists.range(150).map(x, input.big)":       true,
		"lists.range(150).map(x, input.big[x])":    false,
		"lists.range(150).map(x, size(input.big))": false,
	} {
		p, err := env.Compile(src, KindAny)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Eval(context.Background(), Vars{Input: hostileInput()})
		if got := errors.Is(err, ErrCostLimit); got != over {
			t.Errorf("%s: err = %v, want over the limit: %v", src, err, over)
		}
	}
}

// Converting the result is metered too, so a cost limit set just above
// what building the result costs stops it during the conversion, with the
// cost limit's error.
func TestResultConversionIsMetered(t *testing.T) {
	t.Parallel()
	big := map[string]any{"l": longList(1000)}
	for limit, over := range map[uint64]bool{1500: true, 4000: false} {
		env := newTestEnv(t, WithCostLimit(limit))
		p, err := env.Compile("input.l", KindAny)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Eval(context.Background(), Vars{Input: big})
		if got := errors.Is(err, ErrCostLimit); got != over {
			t.Errorf("limit %d: err = %v, want over: %v", limit, err, over)
		}
	}
}
