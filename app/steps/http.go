package steps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/propagation"

	"github.com/ductor/ductor/app/jsonvalue"
)

// httpCall is an http step's params, checked.
type httpCall struct {
	method  string
	url     *url.URL
	header  http.Header
	body    []byte
	hasBody bool
	expect  []int // nil: any 2xx
}

func (x *Executor) runHTTP(ctx context.Context, req Request) (any, error) {
	params, m, err := x.resolveHTTPSecrets(ctx, req.TenantID, req.Params)
	if err != nil {
		return nil, err
	}
	out, err := x.sendHTTP(ctx, req, params)
	// The output and error are what the attempt records: a response or
	// error that echoes a secret back shows *** in its place.
	return m.output(out), m.error(err)
}

func (x *Executor) sendHTTP(ctx context.Context, req Request, params map[string]any) (any, error) {
	c, err := parseHTTPCall(params)
	if err != nil {
		return nil, err
	}
	hreq, err := c.request(ctx, req.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	// A step cancelled while it was being prepared sends nothing.
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	resp, err := x.client.Do(hreq)
	if err != nil {
		return nil, c.transportError(err)
	}
	defer resp.Body.Close()
	body, berr := readCapped(resp.Body, x.maxBody)
	if !c.expected(resp.StatusCode) {
		if berr != nil {
			body = nil
		}
		return responseOutput(resp, body), c.statusError(resp.StatusCode)
	}
	if berr != nil {
		return nil, berr
	}
	return responseOutput(resp, body), nil
}

func (c *httpCall) request(ctx context.Context, idempotencyKey string) (*http.Request, error) {
	var body io.Reader
	if c.hasBody {
		body = bytes.NewReader(c.body)
	}
	r, err := http.NewRequestWithContext(ctx, c.method, c.url.String(), body)
	if err != nil {
		return nil, failf(CodeInvalidStep, "http step: %v", err)
	}
	r.Header = c.header
	if h := c.header.Get("Host"); h != "" {
		r.Host = h
	}
	if idempotencyKey != "" {
		r.Header.Set("Idempotency-Key", idempotencyKey)
	}
	if r.Header.Get("Traceparent") == "" {
		// The attempt's place in its run's trace (W3C Trace Context), so
		// the receiver's spans join it.
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(r.Header))
	}
	return r, nil
}

func (c *httpCall) expected(status int) bool {
	if c.expect == nil {
		return status >= 200 && status <= 299
	}
	for _, s := range c.expect {
		if s == status {
			return true
		}
	}
	return false
}

// statusError fails an unexpected status, retryable when a later attempt
// may well succeed: 5xx, 408 Request Timeout and 429 Too Many Requests.
func (c *httpCall) statusError(status int) error {
	retryable := status >= 500 || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests
	return &Error{Code: CodeHTTPStatus, Retryable: retryable,
		Message: fmt.Sprintf("%s %s: unexpected status %d %s", c.method, safeURL(c.url), status, http.StatusText(status))}
}

// transportError classifies a failed request: refused by the SSRF guard
// or the redirect policy (not retryable), or a network failure (retryable).
func (c *httpCall) transportError(err error) error {
	if b, ok := errors.AsType[*BlockedError](err); ok {
		return &Error{Code: CodeSSRFBlocked, Message: b.Error(), Err: err}
	}
	cause := err
	if ue, ok := errors.AsType[*url.Error](err); ok {
		cause = ue.Err // its text repeats the whole URL, query included
	}
	return &Error{Code: CodeHTTPError, Retryable: !errors.Is(err, errRedirectPolicy), Err: err,
		Message: fmt.Sprintf("%s %s: %v", c.method, safeURL(c.url), cause)}
}

// safeURL is u without user info, query and fragment, for messages.
func safeURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// readCapped reads all of r, failing with payload_too_large past max.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, &Error{Code: CodeHTTPError, Message: "reading the response: " + err.Error(), Retryable: true, Err: err}
	}
	if int64(len(b)) > max {
		return nil, failf(CodePayloadTooLarge, "response body is over the %d-byte limit", max)
	}
	return b, nil
}

// responseOutput is an http step's output: status, headers by lower-case
// name (repeated values joined with ", ") and the body, parsed when the
// response says it is JSON and text otherwise.
func responseOutput(resp *http.Response, body []byte) map[string]any {
	headers := make(map[string]any, len(resp.Header))
	for name, values := range resp.Header {
		headers[strings.ToLower(name)] = strings.Join(values, ", ")
	}
	return map[string]any{"status": resp.StatusCode, "headers": headers, "body": parseBody(resp.Header.Get("Content-Type"), body)}
}

func parseBody(contentType string, body []byte) any {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		if v, err := jsonvalue.Decode(body); err == nil {
			return v
		}
	}
	return string(body)
}
