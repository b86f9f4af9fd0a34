package wftest

import (
	"bytes"
	"encoding/json"
)

func indentJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Indent(&buf, b, "", "  ") != nil {
		return string(b)
	}
	return buf.String()
}
