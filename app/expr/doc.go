// Package expr is Ductor's CEL wrapper: one environment with the variables a
// definition's expressions may read, compilation with size and nesting
// bounds, and cost-limited, interruptible evaluation that returns plain Go
// values.
//
// # Variables
//
//	input   dyn                  the run's trigger input
//	steps   map(string, dyn)     ref → {output, state, error} of finished nodes
//	run     map(string, dyn)     {id, key, version, subject, context, …}
//	now     timestamp            the tick's timestamp, recorded for replay
//	item    dyn                  the current element (scatter children, for_each)
//	index   int                  the current element's position
//	key     string               the current child's key
//	event   dyn                  the event a match expression looks at
//
// and, only where a field provides them (scoped.go):
//
//	succeeded, failed, done, total  int        a scatter's children so far (complete_when)
//	results                         list(dyn)  the finished children's outcomes (complete_when)
//	output                          dyn        the last iteration's output (repeat)
//	iteration                       int        iterations finished so far (repeat)
//
// Values arrive in the model of package jsonvalue: map[string]any, []any,
// string, bool, nil, int64 and float64 (a json.Number is read the same
// way). A JSON number with an integral literal within int64 is a CEL int,
// any other a double, so a value means the same on every tick, fresh or
// reloaded. Arithmetic mixes int (or uint) with double and gives a double
// (`input.price * 2`, `input.count + 0.5`); comparisons work across all
// three; int with int stays int (`7 / 2` is 3). See numbers.go.
//
// # Lifecycle
//
// An [Env] is built once per process. [Env.Compile] parses and type-checks
// an expression once, at publish time, and checks its result type against
// the [Kind] the caller expects; the returned [Program] is immutable, safe
// for concurrent use and evaluated on every tick with [Program.Eval]. A
// [Cache] keeps compiled programs by source so the engine compiles each
// expression once per process.
//
// # Errors
//
// Every failure is an [*Error]. Compile failures match [ErrCompile];
// evaluation failures match [ErrEval]. A runtime error carries
// [CodeExpressionError]; a breach of a resource limit carries
// [CodeExpressionLimit] and also matches [ErrCostLimit] or [ErrTimeLimit].
// Nodes failing with either code are never retried. A cancellation of the
// caller's context matches [ErrInterrupted] and the context's own error
// instead, so a caller that is shutting down (or that gave the evaluation
// a budget of its own) can tell it from a faulty expression.
//
// # Limits
//
// Expressions are bounded at compile time (length in code points, syntactic
// nesting, comprehension nesting, and a statically estimated cost that is
// certain to exceed the cost limit) and metered at evaluation: every
// evaluated node costs one unit, every element of a list or map it builds
// one more, every 16 bytes of string it builds one more, and every read of
// a variable the whole size of the value read (but a read only size()
// looks at), so that what an expression builds from references has been
// paid for once per reference. Calls that can build or compare far more
// than they read (replace, join, flatten, distinct, sort, the sets
// functions, format, the strings extension's) are charged before they
// run (see guard.go), and converting the result is metered too. An
// evaluation also has a time limit, and the context is checked every
// hundred units. The meter stands in for cel-go's own cost tracker, whose
// overhead grows quadratically with the length of the lists a
// comprehension walks (see meter.go).
//
// Nothing here does I/O or reads a clock for its results: `now` is
// whatever the caller puts in [Vars]; the time limit is a context
// deadline.
package expr
