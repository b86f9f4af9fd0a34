package definition

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ductor/ductor/app/jsonvalue"
)

// readJSON reads exactly one JSON value into a tree of map[string]any,
// []any, string, bool, nil and json.Number (the number's literal text).
// It rejects invalid UTF-8, duplicate names and trailing data.
func readJSON(raw []byte) (any, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	v, err := readValue(dec)
	if err != nil {
		msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "jsontext: "), "jsonvalue: ")
		return nil, errors.New(msg)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the value")
	}
	return v, nil
}

// readValue reads the next value, keeping each number's literal text.
func readValue(dec *jsontext.Decoder) (any, error) {
	return jsonvalue.ReadTree(dec, func(literal string) (any, error) { return json.Number(literal), nil })
}
