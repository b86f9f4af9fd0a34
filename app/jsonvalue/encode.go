package jsonvalue

import (
	stdjson "encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// ErrNotFinite is a NaN or an infinity, which JSON cannot represent.
var ErrNotFinite = errors.New("jsonvalue: NaN and infinity have no JSON form")

// marshalOptions encode like encoding/json, except numbers: float64 (and
// float32) always read back as doubles, a json.Number is written by the
// model.
var marshalOptions = json.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	json.WithMarshalers(json.JoinMarshalers(
		json.MarshalToFunc(func(enc *jsontext.Encoder, f float64) error { return writeDouble(enc, f) }),
		json.MarshalToFunc(func(enc *jsontext.Encoder, f float32) error { return writeDouble(enc, float64(f)) }),
		json.MarshalToFunc(func(enc *jsontext.Encoder, n stdjson.Number) error { return writeNumber(enc, n) }),
	)),
)

// Marshal encodes v like encoding/json.Marshal, except numbers (see the
// package doc). Structs, their tags and MarshalJSON methods behave as
// with encoding/json.
func Marshal(v any) ([]byte, error) {
	return json.Marshal(v, marshalOptions)
}

func writeDouble(enc *jsontext.Encoder, f float64) error {
	s, err := FormatDouble(f)
	if err != nil {
		return err
	}
	return enc.WriteValue(jsontext.Value(s))
}

func writeNumber(enc *jsontext.Encoder, n stdjson.Number) error {
	if n == "" {
		return enc.WriteValue(jsontext.Value("0"))
	}
	v, err := Number(string(n))
	if err != nil {
		return err
	}
	if f, ok := v.(float64); ok {
		return writeDouble(enc, f)
	}
	return enc.WriteValue(jsontext.Value(strconv.FormatInt(v.(int64), 10)))
}

// FormatDouble writes f as a JSON number that decodes as a float64 again,
// also after Postgres's jsonb rewrote it: shortest digits, with ".0" when
// f is whole, and an exponent only where the value is far outside int64
// (beyond 1e21) or tiny (below 1e-6), where jsonb's plain digits still
// read as a double.
func FormatDouble(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", ErrNotFinite
	}
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.FormatFloat(f, 'e', -1, 64), nil
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s, nil
}
