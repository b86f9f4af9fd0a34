package expr

import (
	"encoding/json"
	"strconv"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// jsonAdapter turns JSON-decoded Go values into CEL values. It keeps itself
// as the adapter of the maps and lists it builds, so values nested at any
// depth go through it too; everything else goes to CEL's default adapter.
type jsonAdapter struct{}

func (a jsonAdapter) NativeToValue(v any) ref.Val {
	switch x := v.(type) {
	case map[string]any:
		return types.NewStringInterfaceMap(a, x)
	case []any:
		return types.NewDynamicList(a, x)
	case json.Number:
		return numberValue(x)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

// numberValue is an int when the number is an integer that fits, a double
// otherwise.
func numberValue(n json.Number) ref.Val {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return types.Int(i)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return types.NewErr("invalid JSON number %q", string(n))
	}
	return types.Double(f)
}
