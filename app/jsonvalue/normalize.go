package jsonvalue

import (
	stdjson "encoding/json"
	"fmt"
	"math"
	"time"
)

// Normalize returns v as the model holds it: what decoding v's JSON gives.
// Values already in the model come back as they are (maps and slices are
// copied only where something inside them changes, so v is never
// modified). Go integers become int64 (a uint64 past int64 a float64),
// float32 a float64, a json.Number its int64 or float64, a time.Time its
// RFC 3339 string; anything else takes a trip through Marshal and Decode.
func Normalize(v any) (any, error) {
	out, _, err := normalize(v)
	return out, err
}

func normalize(v any) (any, bool, error) {
	switch x := v.(type) {
	case nil, bool, string, int64:
		return v, false, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false, ErrNotFinite
		}
		return v, false, nil
	case map[string]any:
		return normalizeMap(x)
	case []any:
		return normalizeList(x)
	}
	out, err := normalizeScalar(v)
	return out, true, err
}

func normalizeScalar(v any) (any, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case uint64:
		return unsigned(x), nil
	case uint:
		return unsigned(uint64(x)), nil
	case uint32:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case float32:
		return normalizeFloat(float64(x))
	case stdjson.Number:
		return Number(string(x))
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	}
	return roundTrip(v)
}

func unsigned(u uint64) any {
	if u > math.MaxInt64 {
		return float64(u)
	}
	return int64(u)
}

func normalizeFloat(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, ErrNotFinite
	}
	return f, nil
}

func roundTrip(v any) (any, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("jsonvalue: %T: %w", v, err)
	}
	return Decode(b)
}

func normalizeMap(m map[string]any) (any, bool, error) {
	var out map[string]any
	for k, e := range m {
		ne, changed, err := normalize(e)
		if err != nil {
			return nil, false, err
		}
		if changed && out == nil {
			out = make(map[string]any, len(m))
			for k2, e2 := range m {
				out[k2] = e2
			}
		}
		if out != nil {
			out[k] = ne
		}
	}
	if out == nil {
		return m, false, nil
	}
	return out, true, nil
}

func normalizeList(l []any) (any, bool, error) {
	var out []any
	for i, e := range l {
		ne, changed, err := normalize(e)
		if err != nil {
			return nil, false, err
		}
		if changed && out == nil {
			out = append(make([]any, 0, len(l)), l...)
		}
		if out != nil {
			out[i] = ne
		}
	}
	if out == nil {
		return l, false, nil
	}
	return out, true, nil
}
