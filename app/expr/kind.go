package expr

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// Kind is the result type a caller expects from an expression. It is
// checked at compile time against the expression's static type, and again
// on every evaluation when that type is dyn.
type Kind int

const (
	KindAny Kind = iota
	KindBool
	KindList
	KindTimestamp
	KindString
	KindMap
	KindInt
)

func (k Kind) String() string {
	switch k {
	case KindAny:
		return "any"
	case KindBool:
		return "bool"
	case KindList:
		return "list"
	case KindTimestamp:
		return "timestamp"
	case KindString:
		return "string"
	case KindMap:
		return "map"
	case KindInt:
		return "int"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// celKind is the CEL type kind a Kind stands for; DynKind for KindAny.
func (k Kind) celKind() types.Kind {
	switch k {
	case KindBool:
		return types.BoolKind
	case KindList:
		return types.ListKind
	case KindTimestamp:
		return types.TimestampKind
	case KindString:
		return types.StringKind
	case KindMap:
		return types.MapKind
	case KindInt:
		return types.IntKind
	}
	return types.DynKind
}

func (k Kind) valid() bool { return k >= KindAny && k <= KindInt }

// admitsStatic reports whether a static type can produce this Kind. Dyn
// can produce anything and is checked again at evaluation.
func (k Kind) admitsStatic(t *cel.Type) bool {
	if k == KindAny {
		return true
	}
	tk := t.Kind()
	return tk == types.DynKind || tk == types.AnyKind || tk == k.celKind()
}

// admits reports whether an evaluated value is of this Kind.
func (k Kind) admits(v ref.Val) bool {
	if k == KindAny {
		return true
	}
	return v.Type().(*types.Type).Kind() == k.celKind()
}

// typeName is a value's CEL type name for messages.
func typeName(v ref.Val) string {
	return v.Type().TypeName()
}
