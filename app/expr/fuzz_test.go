package expr

import (
	"errors"
	"testing"
)

// FuzzEvalBounded evaluates arbitrary expressions against the hostile
// input (hostile_test.go): whatever the expression, the evaluation ends
// with a value or an [*Error] within twice the time limit, having
// allocated at most a few tens of megabytes. Its seed corpus, in
// testdata/fuzz/FuzzEvalBounded, holds the expressions that once escaped
// the meter; the seeds run with every `go test`.
func FuzzEvalBounded(f *testing.F) {
	env, err := NewEnv()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(`input.big.size()`)
	f.Fuzz(func(t *testing.T, src string) {
		_, err, alloc, took := measure(t, env, src)
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("%q: error %v is not an *Error", src, err)
		}
		if e != nil && errors.Is(err, ErrCompile) {
			return
		}
		if took > 2*DefaultTimeLimit {
			t.Errorf("%q took %s (err %v)", src, took, err)
		}
		if alloc > fuzzMaxAlloc {
			t.Errorf("%q allocated %d MB (err %v)", src, alloc>>20, err)
		}
	})
}

// fuzzMaxAlloc bounds what one fuzzed evaluation allocates.
const fuzzMaxAlloc = 64 << 20
