package steps

import (
	"encoding/json"
	"math"
)

// Params arrive in the JSON value model (int64 and float64 numbers), or
// from a manifest's literals (json.Number) and Go callers (int, uint64…).
// These helpers read them without caring which.

// intOf returns v as an integer; ok is false for anything that is not a
// whole number.
func intOf(v any) (n int64, ok bool) {
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case uint32:
		return int64(v), true
	case uint64:
		return int64(v), v <= math.MaxInt64
	case float64:
		return int64(v), v == math.Trunc(v) && math.Abs(v) < 1<<63
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			f, ferr := v.Float64()
			return int64(f), ferr == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63
		}
		return n, true
	}
	return 0, false
}

// field returns m[key] when v is a JSON object; nil otherwise.
func field(v any, key string) any {
	m, _ := v.(map[string]any)
	return m[key]
}
