// Package jsonvalue is Ductor's one model of JSON values, used wherever a
// value enters or leaves the engine: run input, step outputs, signal
// payloads, event data, http bodies, bridge results, and the state stored
// in Postgres and read back on the next tick.
//
// # The model
//
// A value is nil, bool, string, int64, float64, []any or map[string]any.
// A JSON number whose literal is integral (no fraction, no exponent) and
// fits in int64 decodes as int64 (a CEL int); every other number decodes
// as float64 (a CEL double). Nothing is rounded on the way in.
//
// On the way out, an int64 is written as its digits, so every int64
// survives exactly, and a float64 is always written so that it reads back
// as a float64: with a fraction ("2.0") or an exponent ("1e+21"), in a
// form Postgres's jsonb keeps (jsonb rewrites "1e2" as 100, an integral
// literal, but keeps "100.0"). NaN and the infinities have no JSON form
// and are refused.
//
// Hence a value means the same after a trip through the database as
// before it: Decode(Marshal(v)) equals v for every value of the model,
// and [Normalize] brings any other Go value (a CEL result holding a
// timestamp, a uint, a json.Number) to the model, as its JSON would
// decode.
//
// # Limits
//
// Postgres cannot store a NUL character (U+0000) in jsonb; [FindNUL]
// finds one and names where it is, so that callers can refuse it with a
// clear error instead of failing at the database. [Check] applies both
// that and a size cap.
package jsonvalue
