package jsonvalue

import (
	stdjson "encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDecodeNumbers(t *testing.T) {
	t.Parallel()
	for lit, want := range map[string]any{
		"9007199254740993":     int64(9007199254740993),
		"-9223372036854775808": int64(math.MinInt64),
		"9223372036854775808":  float64(9223372036854775808),
		"2":                    int64(2),
		"-0":                   int64(0),
		"2.0":                  2.0,
		"1e2":                  100.0,
		"1.5e-7":               1.5e-7,
		"0.1":                  0.1,
	} {
		got, err := Decode([]byte(lit))
		if err != nil || got != want {
			t.Errorf("Decode(%s) = %#v, %v; want %#v", lit, got, err, want)
		}
	}
	if _, err := Decode([]byte("1e400")); err == nil {
		t.Error("Decode(1e400) succeeded, want out of range")
	}
}

func TestMarshalKeepsKinds(t *testing.T) {
	t.Parallel()
	for v, want := range map[any]string{
		int64(9007199254740993): "9007199254740993",
		2.0:                     "2.0",
		-0.5:                    "-0.5",
		1e21:                    "1e+21",
		1e20:                    "100000000000000000000.0",
		1.5e-7:                  "1.5e-07",
		stdjson.Number("7"):     "7",
		stdjson.Number("7.0"):   "7.0",
		stdjson.Number("1e2"):   "100.0",
		float32(0.5):            "0.5",
	} {
		got, err := Marshal(v)
		if err != nil || string(got) != want {
			t.Errorf("Marshal(%#v) = %s, %v; want %s", v, got, err, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := Marshal(map[string]any{"x": f}); !errors.Is(err, ErrNotFinite) {
			t.Errorf("Marshal(%v) error = %v, want ErrNotFinite", f, err)
		}
	}
}

// randomValue draws a value of the model, with numbers at the edges that
// used to change on a round trip.
func randomValue(r *rand.Rand, depth int) any {
	n := 9
	if depth > 3 {
		n = 6
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return randomString(r)
	case 3:
		return randomInt(r)
	case 4:
		return randomDouble(r)
	case 5:
		return float64(randomInt(r) % (1 << 53))
	case 6, 7:
		m := map[string]any{}
		for range r.IntN(4) {
			m[randomString(r)] = randomValue(r, depth+1)
		}
		return m
	}
	l := []any{}
	for range r.IntN(4) {
		l = append(l, randomValue(r, depth+1))
	}
	return l
}

func randomInt(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return int64(r.Uint64())
	case 1:
		return (1 << 53) + int64(r.IntN(10)) - 5
	}
	return int64(r.IntN(2000)) - 1000
}

func randomDouble(r *rand.Rand) float64 {
	switch r.IntN(5) {
	case 0:
		return math.Float64frombits(r.Uint64()&^(0x7ff<<52) | uint64(r.IntN(0x7fe))<<52)
	case 1:
		return float64(r.IntN(100)) / 4
	case 2:
		return r.NormFloat64() * 1e25
	case 3:
		return r.NormFloat64() * 1e-9
	}
	return r.Float64()
}

func randomString(r *rand.Rand) string {
	const alphabet = "ab <&>\"\\é\u2028😀\t"
	var b strings.Builder
	runes := []rune(alphabet)
	for range r.IntN(6) {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

func TestRoundTripIsIdentity(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		v := randomValue(r, 0)
		b, err := Marshal(v)
		if err != nil {
			t.Fatalf("Marshal(%#v): %v", v, err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", b, err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("round trip of %#v gave %#v (JSON %s)", v, got, b)
		}
		if n, err := Normalize(v); err != nil || !reflect.DeepEqual(n, v) {
			t.Fatalf("Normalize(%#v) = %#v, %v; want it unchanged", v, n, err)
		}
	}
}

func TestNormalizeMatchesDecoding(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC)
	in := map[string]any{
		"int": 3, "uint": uint64(math.MaxUint64), "small": uint8(7), "f32": float32(1.5),
		"num": stdjson.Number("12"), "at": at, "list": []any{int32(1), "x"},
		"strs": []string{"a"}, "keep": map[string]any{"n": int64(1)},
	}
	got, err := Normalize(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"int": int64(3), "uint": float64(math.MaxUint64), "small": int64(7), "f32": 1.5,
		"num": int64(12), "at": "2026-03-01T12:00:00.000000005Z", "list": []any{int64(1), "x"},
		"strs": []any{"a"}, "keep": map[string]any{"n": int64(1)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Normalize = %#v\nwant %#v", got, want)
	}
	if _, ok := in["int"].(int); !ok {
		t.Fatal("Normalize modified its argument")
	}
}

type holder struct {
	Output any            `json:"output,omitempty"`
	Items  []any          `json:"items"`
	Byname map[string]any `json:"byname"`
	When   time.Time      `json:"when,omitzero"`
	Count  int            `json:"count"`
}

func TestUnmarshalStructFields(t *testing.T) {
	t.Parallel()
	raw := `{"output": {"id": 9007199254740993, "p": 2.0}, "items": [1, 1.5], "byname": {"a": 3}, "count": 4, "Extra": 1}`
	var h holder
	if err := Unmarshal([]byte(raw), &h); err != nil {
		t.Fatal(err)
	}
	want := holder{
		Output: map[string]any{"id": int64(9007199254740993), "p": 2.0},
		Items:  []any{int64(1), 1.5}, Byname: map[string]any{"a": int64(3)}, Count: 4,
	}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("Unmarshal = %#v\nwant %#v", h, want)
	}
	if err := UnmarshalStrict([]byte(raw), &holder{}); err == nil {
		t.Fatal("UnmarshalStrict accepted an unknown member")
	}
	b, err := Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"output":{"id":9007199254740993,"p":2.0},"items":[1,1.5],"byname":{"a":3},"count":4}`; string(b) != want {
		t.Fatalf("Marshal = %s\nwant %s", b, want)
	}
}

func TestObjectInsideEncodingJSON(t *testing.T) {
	t.Parallel()
	type args struct {
		Params Object `json:"params"`
	}
	b, err := stdjson.Marshal(args{Params: Object{"n": int64(9007199254740993), "d": 3.0}})
	if err != nil {
		t.Fatal(err)
	}
	var back args
	if err := stdjson.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Params["n"] != int64(9007199254740993) || back.Params["d"] != 3.0 {
		t.Fatalf("params after encoding/json round trip = %#v (JSON %s)", back.Params, b)
	}
}

func TestFindNUL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    any
		path string
	}{
		{"a\x00", ""},
		{map[string]any{"a": []any{"ok", map[string]any{"b c": "x\x00"}}}, `.a[1]["b c"]`},
		{map[string]any{"k\x00": 1}, `["k\x00"]`},
	} {
		e, ok := FindNUL(c.v)
		if !ok || e.Path != c.path {
			t.Errorf("FindNUL(%#v) = %v, %v; want path %q", c.v, e, ok, c.path)
		}
	}
	if _, ok := FindNUL(map[string]any{"a": `\u0000`}); ok {
		t.Error("FindNUL found a NUL in an escaped backslash")
	}
	v, err := Decode([]byte(`{"a": "x\u0000"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Check(v, 0); err == nil || !strings.Contains(err.Error(), "at .a") {
		t.Fatalf("Check = %v, want the NUL at .a", err)
	}
}

func TestCheckCapsSize(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 100)
	if _, _, err := Check(map[string]any{"s": big}, 50); !IsTooLarge(err) {
		t.Fatalf("Check of 100 bytes under a 50-byte cap = %v, want too large", err)
	}
	out, n, err := Check(map[string]any{"s": big, "at": time.Unix(0, 0).UTC()}, 1000)
	if err != nil || n != len(`{"at":"1970-01-01T00:00:00Z","s":"`)+100+2 || out.(map[string]any)["at"] != "1970-01-01T00:00:00Z" {
		t.Fatalf("Check = %#v, %d, %v", out, n, err)
	}
}
