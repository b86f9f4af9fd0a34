package jsonvalue

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Decode parses exactly one JSON value into the model. Duplicate names
// keep the last value and invalid UTF-8 becomes U+FFFD, as encoding/json
// and jsonb do.
func Decode(raw []byte) (any, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), decodeOptions)
	v, err := readValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			return nil, errors.New("jsonvalue: unexpected data after the value")
		}
		return nil, err
	}
	return v, nil
}

var decodeOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// unmarshalOptions decode like encoding/json, except that every Go value
// of type any (a struct field, a map or slice element) is read by the
// model.
var unmarshalOptions = json.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
		x, err := readValue(dec)
		if err != nil {
			return err
		}
		*v = x
		return nil
	})),
)

var strictOptions = json.JoinOptions(unmarshalOptions, json.RejectUnknownMembers(true))

// Unmarshal decodes raw into dst like encoding/json.Unmarshal, except
// that every value of type any inside dst is decoded by the model.
func Unmarshal(raw []byte, dst any) error {
	if p, ok := dst.(*any); ok {
		v, err := Decode(raw)
		if err != nil {
			return err
		}
		*p = v
		return nil
	}
	return json.Unmarshal(raw, dst, unmarshalOptions)
}

// UnmarshalStrict is Unmarshal refusing object members that match no
// field of the destination struct.
func UnmarshalStrict(raw []byte, dst any) error {
	return json.Unmarshal(raw, dst, strictOptions)
}

func readValue(dec *jsontext.Decoder) (any, error) {
	return ReadTree(dec, Number)
}

// ReadTree reads the decoder's next JSON value into a tree of
// map[string]any, []any, string, bool and nil, with each number literal
// made by number: Number for the model, or a reader keeping the
// literal's text.
func ReadTree(dec *jsontext.Decoder, number func(literal string) (any, error)) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		return number(tok.String())
	case '{':
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids tok
			v, err := ReadTree(dec, number)
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		_, err := dec.ReadToken()
		return m, err
	case '[':
		l := []any{}
		for dec.PeekKind() != ']' {
			v, err := ReadTree(dec, number)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.ReadToken()
		return l, err
	}
	return nil, fmt.Errorf("jsonvalue: unexpected %v", tok)
}

// Number reads a JSON number literal by the model: an integral literal
// that fits in int64 is an int64, anything else a float64. A number
// beyond float64's range is an error.
func Number(lit string) (any, error) {
	if integral(lit) {
		if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("jsonvalue: number %s is out of range", clip(lit))
	}
	return f, nil
}

// integral reports whether a number literal has neither fraction nor
// exponent.
func integral(lit string) bool {
	s := strings.TrimPrefix(lit, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
