package definition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Canonical JSON, RFC 8785 (JCS): object members sorted by the UTF-16 code
// units of their names, numbers in ECMAScript's shortest round-trip form,
// strings with the minimal escaping of JSON.stringify, no whitespace.
// jsontext implements the scheme in place, without building a tree of the
// document (a tenth of the garbage the tree made for a large manifest).

// CanonicalJSON marshals v and returns its RFC 8785 form.
func CanonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("definition: marshal for canonical JSON: %w", err)
	}
	return Canonicalize(raw)
}

// Canonicalize rewrites one JSON text into its RFC 8785 form.
func Canonicalize(raw []byte) ([]byte, error) {
	if err := checkFinite(raw); err != nil {
		return nil, err
	}
	v := jsontext.Value(bytes.Clone(raw))
	if err := v.Canonicalize(); err != nil {
		return nil, fmt.Errorf("definition: canonical JSON: %w", err)
	}
	return v, nil
}

var errNonFinite = errors.New("definition: canonical JSON: numbers must be finite")

// checkFinite fails on a number beyond float64's range, which RFC 8785
// cannot represent (jsontext's canonical form would clamp it), and on
// text that is not one JSON value.
func checkFinite(raw []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("definition: canonical JSON: %w", err)
		}
		if tok.Kind() != '0' {
			continue
		}
		f, err := strconv.ParseFloat(tok.String(), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0) {
			return errNonFinite
		}
	}
}
