package steps

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/version"
)

// parseHTTPCall checks an http step's params: url, method, headers, body
// and expect_status. Anything malformed fails as invalid_step.
func parseHTTPCall(p map[string]any) (*httpCall, error) {
	u, err := parseURL(p["url"])
	if err != nil {
		return nil, err
	}
	c := &httpCall{method: http.MethodGet, url: u, header: http.Header{"User-Agent": {version.UserAgent()}}}
	if m, ok := p["method"]; ok && m != nil {
		s, ok := m.(string)
		if !ok || !isToken(s) {
			return nil, failf(CodeInvalidStep, "http step: method %v is not an HTTP method", m)
		}
		c.method = strings.ToUpper(s)
	}
	if err := c.parseHeaders(p["headers"]); err != nil {
		return nil, err
	}
	if err := c.parseBody(p["body"]); err != nil {
		return nil, err
	}
	c.expect, err = parseExpect(p["expect_status"])
	return c, err
}

func parseURL(v any) (*url.URL, error) {
	s, ok := v.(string)
	if !ok || s == "" {
		return nil, failf(CodeInvalidStep, "http step: url must be a non-empty string")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, failf(CodeInvalidStep, "http step: bad url: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, failf(CodeInvalidStep, "http step: url scheme %q is not http or https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, failf(CodeInvalidStep, "http step: url has no host")
	}
	return u, nil
}

func (c *httpCall) parseHeaders(v any) error {
	var m map[string]any
	switch v := v.(type) {
	case nil:
		return nil
	case map[string]any:
		m = v
	case map[string]string:
		m = make(map[string]any, len(v))
		for k, s := range v {
			m[k] = s
		}
	default:
		return failf(CodeInvalidStep, "http step: headers must be a map of strings")
	}
	for name, val := range m {
		s, ok := val.(string)
		if !ok || !isToken(name) || strings.ContainsAny(s, "\r\n\x00") {
			return failf(CodeInvalidStep, "http step: header %q must be a token with a single-line string value", name)
		}
		c.header.Set(name, s)
	}
	return nil
}

// parseBody takes a string as the body as-is and JSON-encodes any other
// value, defaulting Content-Type to application/json.
func (c *httpCall) parseBody(v any) error {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		c.body, c.hasBody = []byte(v), true
		return nil
	}
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		return failf(CodeInvalidStep, "http step: body is not JSON: %v", err)
	}
	c.body, c.hasBody = b, true
	if c.header.Get("Content-Type") == "" {
		c.header.Set("Content-Type", "application/json")
	}
	return nil
}

// parseExpect reads expect_status: one status or a list; nil means 2xx.
func parseExpect(v any) ([]int, error) {
	if v == nil {
		return nil, nil
	}
	list, isList := v.([]any)
	if !isList {
		list = []any{v}
	}
	out := make([]int, 0, len(list))
	for _, e := range list {
		n, ok := intOf(e)
		if !ok || n < 100 || n > 599 {
			return nil, failf(CodeInvalidStep, "http step: expect_status %v is not an HTTP status", e)
		}
		out = append(out, int(n))
	}
	if len(out) == 0 {
		return nil, failf(CodeInvalidStep, "http step: expect_status is an empty list")
	}
	return out, nil
}

// isToken reports whether s is a non-empty RFC 9110 token (a valid method
// or header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}
