package definition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// readJSON reads exactly one JSON value into a tree of map[string]any,
// []any, string, bool, nil and json.Number (the number's literal text).
// It rejects invalid UTF-8, duplicate names and trailing data.
func readJSON(raw []byte) (any, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	v, err := readValue(dec)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "jsontext: "))
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the value")
	}
	return v, nil
}

func readValue(dec *jsontext.Decoder) (any, error) {
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
		return json.Number(tok.String()), nil
	case '{':
		return readObject(dec)
	case '[':
		return readArray(dec)
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func readObject(dec *jsontext.Decoder) (map[string]any, error) {
	m := map[string]any{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // tok is void after the next read
		v, err := readValue(dec)
		if err != nil {
			return nil, err
		}
		m[name] = v
	}
	_, err := dec.ReadToken()
	return m, err
}

func readArray(dec *jsontext.Decoder) ([]any, error) {
	l := []any{}
	for dec.PeekKind() != ']' {
		v, err := readValue(dec)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
	}
	_, err := dec.ReadToken()
	return l, err
}
