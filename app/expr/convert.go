package expr

import (
	"encoding/base64"
	"fmt"
	"math"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// ToNative converts a CEL value to a plain Go value: nil, bool, int64,
// float64, string, time.Time, []any or map[string]any. A uint becomes an
// int64 (a float64 past the int64 range), a duration its CEL string form
// ("90s"), bytes a standard base64 string, map keys their string form, an
// optional its value or nil.
func ToNative(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return uintNative(x), nil
	case types.Double:
		return float64(x), nil
	case types.String:
		return string(x), nil
	case types.Bytes:
		return base64.StdEncoding.EncodeToString(x), nil
	case types.Timestamp:
		return x.Time.UTC(), nil
	case types.Duration:
		return fmt.Sprint(x.ConvertToType(types.StringType).Value()), nil
	case *types.Optional:
		if !x.HasValue() {
			return nil, nil
		}
		return ToNative(x.GetValue())
	case *types.Type:
		return x.TypeName(), nil
	}
	return aggregateNative(v)
}

func uintNative(u types.Uint) any {
	if u > math.MaxInt64 {
		return float64(u)
	}
	return int64(u)
}

func aggregateNative(v ref.Val) (any, error) {
	switch x := v.(type) {
	case traits.Mapper:
		return mapNative(x)
	case traits.Lister:
		return listNative(x)
	}
	if types.IsUnknownOrError(v) {
		return nil, fmt.Errorf("%v", v)
	}
	return nil, fmt.Errorf("cannot convert a %s value", v.Type().TypeName())
}

func listNative(l traits.Lister) ([]any, error) {
	n := int(l.Size().(types.Int))
	out := make([]any, 0, n)
	for i := range n {
		e, err := ToNative(l.Get(types.Int(i)))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func mapNative(m traits.Mapper) (map[string]any, error) {
	out := make(map[string]any, int(m.Size().(types.Int)))
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		key, err := ToNative(k)
		if err != nil {
			return nil, err
		}
		val, err := ToNative(m.Get(k))
		if err != nil {
			return nil, err
		}
		out[fmt.Sprint(key)] = val
	}
	return out, nil
}
