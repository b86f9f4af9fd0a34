package definition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Canonical JSON, RFC 8785 (JCS): object members sorted by the UTF-16 code
// units of their names, numbers in ECMAScript's shortest round-trip form,
// strings with the minimal escaping of JSON.stringify, no whitespace.

// CanonicalJSON returns the RFC 8785 form of v, which is first marshalled
// with encoding/json.
func CanonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("definition: marshal for canonical JSON: %w", err)
	}
	return Canonicalize(raw)
}

// Canonicalize rewrites one JSON text into its RFC 8785 form.
func Canonicalize(raw []byte) ([]byte, error) {
	v, err := readJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("definition: canonical JSON: %w", err)
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeString(b, x)
	case json.Number:
		return writeNumber(b, x)
	case []any:
		return writeArray(b, x)
	case map[string]any:
		return writeObject(b, x)
	default:
		return fmt.Errorf("definition: canonical JSON: unexpected %T", v)
	}
	return nil
}

func writeArray(b *bytes.Buffer, xs []any) error {
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeCanonical(b, x); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

func writeObject(b *bytes.Buffer, m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUTF16)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, k)
		b.WriteByte(':')
		if err := writeCanonical(b, m[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785
// requires (it differs from byte order above U+FFFF).
func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func writeString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

var errNonFinite = errors.New("definition: canonical JSON: numbers must be finite")

func writeNumber(b *bytes.Buffer, n json.Number) error {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("definition: canonical JSON: number %q: %w", n, err)
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return errNonFinite
	}
	b.WriteString(FormatNumber(f))
	return nil
}

// FormatNumber formats f as ECMAScript's Number.prototype.toString does
// (the form RFC 8785 prescribes). f must be finite.
func FormatNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Shortest round-trip digits d1.d2d3…e±X.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	return sign + esLayout(digits, x+1)
}

// esLayout places the digits for a value of 0.digits × 10^n.
func esLayout(digits string, n int) string {
	k := len(digits)
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	exp := n - 1
	es := "e+"
	if exp < 0 {
		es, exp = "e-", -exp
	}
	if k == 1 {
		return digits + es + strconv.Itoa(exp)
	}
	return digits[:1] + "." + digits[1:] + es + strconv.Itoa(exp)
}
