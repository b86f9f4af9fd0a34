package jsonvalue

import (
	stdjson "encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecode: whatever decodes survives Marshal and Decode unchanged, and
// what encoding/json calls valid decodes (unless a number is out of range).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.0, -0, 1e400]}`, `9007199254740993`, `{"a":1,"a":2}`, `"\u0000"`, `[`, `{"a":1`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := Decode(raw)
		if err != nil {
			var any any
			if stdjson.Unmarshal(raw, &any) == nil && !rangeError(err) {
				t.Fatalf("Decode(%q) = %v, but encoding/json accepts it", raw, err)
			}
			return
		}
		b, err := Marshal(v)
		if err != nil {
			t.Fatalf("Marshal(%#v): %v", v, err)
		}
		back, err := Decode(b)
		if err != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("round trip of %q: %#v, %v; want %#v", raw, back, err, v)
		}
	})
}

func rangeError(err error) bool {
	return strings.Contains(err.Error(), "out of range")
}
