package httpx

import (
	"bytes"
	"encoding/json"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/jsonvalue"
)

// JSONSerializer writes API answers by the JSON value model, so a double
// reads back as a double (2.0, not 2) and an int64 keeps every digit;
// requests go through BindJSON.
type JSONSerializer struct{}

func (JSONSerializer) Serialize(c echo.Context, v any, indent string) error {
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		return err
	}
	if indent != "" {
		var out bytes.Buffer
		if err := json.Indent(&out, b, "", indent); err != nil {
			return err
		}
		b = out.Bytes()
	}
	_, err = c.Response().Write(append(b, '\n'))
	return err
}

func (JSONSerializer) Deserialize(c echo.Context, v any) error { return BindJSON(c, v) }
