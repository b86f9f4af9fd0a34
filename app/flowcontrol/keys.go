package flowcontrol

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/ductor/ductor/app/definition"
)

// MaxKeyBytes bounds a key's text.
const MaxKeyBytes = 256

// ErrKey is a key or limit expression whose value cannot be used.
var ErrKey = errors.New("flow: unusable key or limit")

// KeyText is the text of a key expression's value: a string as it is, an
// integer or a boolean in its JSON spelling. Anything else (a double, a
// list, null), and a string over MaxKeyBytes, is refused: a key names a
// pool, and two spellings of one number must not name two.
func KeyText(v any) (string, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	case int:
		s = strconv.Itoa(x)
	case bool:
		s = strconv.FormatBool(x)
	default:
		return "", fmt.Errorf("%w: a key must be a string, an integer or a boolean, not %s", ErrKey, typeName(v))
	}
	if len(s) > MaxKeyBytes || !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: a key must be valid UTF-8 of at most %d bytes", ErrKey, MaxKeyBytes)
	}
	return s, nil
}

// LimitOf is a limit expression's value: an integer from 1 to
// definition.MaxFlowLimit.
func LimitOf(v any) (int, error) {
	n, ok := v.(int64)
	if !ok || n < 1 || n > definition.MaxFlowLimit {
		return 0, fmt.Errorf("%w: a limit must be an integer from 1 to %d, not %v", ErrKey, definition.MaxFlowLimit, v)
	}
	return int(n), nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case float64:
		return "a double"
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}

// Kind names a kind of rule; pools of different kinds never mix.
type Kind string

const (
	KindConcurrency Kind = "concurrency"
	KindDebounce    Kind = "debounce"
	KindThrottle    Kind = "throttle"
	KindRateLimit   Kind = "rate_limit"
	// KindStep is a step's concurrency: its pool is the key alone,
	// shared by every definition of the tenant.
	KindStep Kind = "step"
)

// Pool names the pool of a run rule: the rule's kind, its definition and
// its key expression (so that changing the expression makes a new pool,
// and reordering rules does not). A step's pool is StepPool.
func Pool(k Kind, definitionKey, keyExpr string) string {
	h := sha256.Sum256([]byte(string(k) + "\x00" + definitionKey + "\x00" + keyExpr))
	return string(k) + ":" + hex.EncodeToString(h[:12])
}

// StepPool is the pool every step's concurrency key lives in.
const StepPool = "step"
