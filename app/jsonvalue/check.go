package jsonvalue

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// NULError reports a NUL character (U+0000), which Postgres cannot store
// in jsonb, in a string or an object member name.
type NULError struct {
	// Path locates it from the value's root ("" for the root itself):
	// `.name`, `[2]`, `["a b"]`.
	Path string
}

func (e *NULError) Error() string {
	if e.Path == "" {
		return "contains a NUL character (\\u0000)"
	}
	return fmt.Sprintf("contains a NUL character (\\u0000) at %s", e.Path)
}

// TooLargeError reports a value whose JSON is over a cap.
type TooLargeError struct {
	Size, Max int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("is %d bytes of JSON, over the %d-byte limit", e.Size, e.Max)
}

// FindNUL reports the first NUL character in v (in member name order, so
// the answer is stable) and where it is.
func FindNUL(v any) (*NULError, bool) {
	if !hasNUL(v) {
		return nil, false
	}
	p, ok := findNUL(v, "")
	if !ok {
		return nil, false
	}
	return &NULError{Path: p}, true
}

// hasNUL is the quick test, without building paths or sorting names.
func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.IndexByte(x, 0) >= 0
	case []any:
		for _, e := range x {
			if hasNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 || hasNUL(e) {
				return true
			}
		}
	}
	return false
}

func findNUL(v any, at string) (string, bool) {
	switch x := v.(type) {
	case string:
		return at, strings.IndexByte(x, 0) >= 0
	case []any:
		for i, e := range x {
			if p, ok := findNUL(e, at+"["+strconv.Itoa(i)+"]"); ok {
				return p, true
			}
		}
	case map[string]any:
		return findNULMap(x, at)
	}
	return "", false
}

func findNULMap(m map[string]any, at string) (string, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := at + member(k)
		if strings.IndexByte(k, 0) >= 0 {
			return p, true
		}
		if p, ok := findNUL(m[k], p); ok {
			return p, true
		}
	}
	return "", false
}

// member renders an object member for a path: .name for identifiers,
// ["…"] for anything else.
func member(k string) string {
	if k == "" {
		return `[""]`
	}
	for i, r := range k {
		ident := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ident {
			return "[" + strconv.QuoteToASCII(k) + "]"
		}
	}
	return "." + k
}

// Check normalizes v and checks it can be stored: no NUL character and,
// when max > 0, at most max bytes of JSON. It returns the normalized value
// and its JSON size. Errors are a [*NULError], a [*TooLargeError] or an
// error matching [ErrNotFinite] (or another encoding error).
func Check(v any, max int) (any, int, error) {
	out, err := Normalize(v)
	if err != nil {
		return nil, 0, err
	}
	if e, ok := FindNUL(out); ok {
		return nil, 0, e
	}
	b, err := Marshal(out)
	if err != nil {
		return nil, 0, err
	}
	if max > 0 && len(b) > max {
		return nil, len(b), &TooLargeError{Size: len(b), Max: max}
	}
	return out, len(b), nil
}

// IsTooLarge reports whether err is a [*TooLargeError].
func IsTooLarge(err error) bool {
	var e *TooLargeError
	return errors.As(err, &e)
}
