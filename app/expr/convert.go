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
func ToNative(v ref.Val) (any, error) { return converter{}.native(v) }

// converter converts a result, charging its meter (when it has one) for
// what it copies as it goes: one unit per element or entry and one per
// [bytesPerUnit] bytes of string, so a result built from many references
// to one large value stops at the cost limit instead of being copied
// whole first.
type converter struct{ m *meter }

func (c converter) charge(units uint64) error {
	if c.m == nil {
		return nil
	}
	if err := c.m.spend(units); err != nil {
		return *err
	}
	return nil
}

func (c converter) native(v ref.Val) (any, error) {
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
		if err := c.charge(uint64(len(x)) / bytesPerUnit); err != nil {
			return nil, err
		}
		return string(x), nil
	case types.Bytes:
		if err := c.charge(uint64(len(x)) / bytesPerUnit); err != nil {
			return nil, err
		}
		return base64.StdEncoding.EncodeToString(x), nil
	case types.Timestamp:
		return x.Time.UTC(), nil
	case types.Duration:
		return fmt.Sprint(x.ConvertToType(types.StringType).Value()), nil
	case *types.Optional:
		if !x.HasValue() {
			return nil, nil
		}
		return c.native(x.GetValue())
	case *types.Type:
		return x.TypeName(), nil
	}
	return c.aggregate(v)
}

func uintNative(u types.Uint) any {
	if u > math.MaxInt64 {
		return float64(u)
	}
	return int64(u)
}

func (c converter) aggregate(v ref.Val) (any, error) {
	switch x := v.(type) {
	case traits.Mapper:
		return c.mapNative(x)
	case traits.Lister:
		return c.listNative(x)
	}
	if types.IsUnknownOrError(v) {
		return nil, fmt.Errorf("%v", v)
	}
	return nil, fmt.Errorf("cannot convert a %s value", v.Type().TypeName())
}

func (c converter) listNative(l traits.Lister) ([]any, error) {
	n := int(l.Size().(types.Int))
	if err := c.charge(uint64(n)); err != nil {
		return nil, err
	}
	out := make([]any, 0, n)
	for i := range n {
		e, err := c.native(l.Get(types.Int(i)))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (c converter) mapNative(m traits.Mapper) (map[string]any, error) {
	n := int(m.Size().(types.Int))
	if err := c.charge(uint64(n)); err != nil {
		return nil, err
	}
	out := make(map[string]any, n)
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		key, err := c.native(k)
		if err != nil {
			return nil, err
		}
		val, err := c.native(m.Get(k))
		if err != nil {
			return nil, err
		}
		out[fmt.Sprint(key)] = val
	}
	return out, nil
}
