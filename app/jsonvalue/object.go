package jsonvalue

import "fmt"

// Object is a JSON object that encodes and decodes by the model even
// inside structs that other code encodes with encoding/json (River's job
// arguments).
type Object map[string]any

// MarshalJSON implements json.Marshaler.
func (o Object) MarshalJSON() ([]byte, error) {
	if o == nil {
		return []byte("null"), nil
	}
	return Marshal(map[string]any(o))
}

// UnmarshalJSON implements json.Unmarshaler.
func (o *Object) UnmarshalJSON(raw []byte) error {
	v, err := Decode(raw)
	if err != nil {
		return err
	}
	switch m := v.(type) {
	case nil:
		*o = nil
	case map[string]any:
		*o = m
	default:
		return fmt.Errorf("jsonvalue: want an object, got %T", v)
	}
	return nil
}
