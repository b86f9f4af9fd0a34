package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one Ductor server's API with one API key. It is safe for
// concurrent use.
type Client struct {
	conn
	injectTrace func(context.Context, http.Header)
}

// conn is the HTTP exchange of a client's calls: where they go, with
// which key and User-Agent, and how Retry-After answers are waited out.
type conn struct {
	baseURL   string
	apiKey    string
	http      *http.Client
	userAgent string
	// retries and maxWait bound how often and how long a call waits for
	// a Retry-After of a 429 or 503 answer.
	retries int
	maxWait time.Duration
}

// Option configures a [Client].
type Option func(*Client)

// WithHTTPClient sets the HTTP client requests go through (default: one
// without an overall timeout, since task polls wait up to 30 s).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// DefaultURL is where New connects when baseURL is empty: `ductor dev`.
const DefaultURL = "http://127.0.0.1:8080"

// New returns a client of the server at baseURL (DefaultURL when empty;
// for example os.Getenv("DUCTOR_URL")) authenticating with apiKey. It
// fails when baseURL is not an http or https URL or apiKey is not a
// Ductor API key (dk_…).
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ductor: the server URL must be http(s)://HOST[:PORT], not %q", baseURL)
	}
	if !strings.HasPrefix(apiKey, "dk_") || strings.ContainsAny(apiKey, " \t\r\n") {
		return nil, errors.New("ductor: the API key must be a Ductor key (dk_…): `ductor dev` prints one, `ductor apikey create` makes one")
	}
	c := &Client{conn: conn{
		baseURL:   strings.TrimRight(u.String(), "/"),
		apiKey:    apiKey,
		http:      &http.Client{Transport: http.DefaultTransport},
		userAgent: userAgent,
		retries:   defaultRetries,
		maxWait:   defaultMaxWait,
	}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// APIError is an error answer of the API: its HTTP status and the body's
// code, message and details.
type APIError struct {
	Status  int
	Code    string
	Message string
	Details json.RawMessage
	// RetryAfter is how long the server asked to wait before trying
	// again (its Retry-After header), 0 when it did not say.
	RetryAfter time.Duration
	// retryAfterSent is whether the answer had a Retry-After (one of 0
	// says to try again at once).
	retryAfterSent bool
}

func (e *APIError) Error() string {
	return fmt.Sprintf("ductor: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsStatus reports whether err is an [APIError] with the HTTP status.
func IsStatus(err error, status int) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == status
}

// do sends a JSON request to path under /api/v1 and decodes a JSON answer
// into out (when not nil). It returns the answer's status. A 429 or 503
// answer with a Retry-After is tried again after that wait (see
// WithRetryAfter).
func (c *conn) do(ctx context.Context, method, path string, in, out any) (int, error) {
	return c.send(ctx, method, path, in, out, nil)
}

// send is do with a hook that sets headers of each request.
func (c *conn) send(ctx context.Context, method, path string, in, out any, header func(http.Header)) (int, error) {
	for retry := 0; ; retry++ {
		status, err := c.once(ctx, method, path, in, out, header)
		wait, ok := c.retryAfter(ctx, err, retry)
		if !ok || !sleepCtx(ctx, wait) {
			return status, err
		}
	}
}

func (c *conn) once(ctx context.Context, method, path string, in, out any, header func(http.Header)) (int, error) {
	req, err := c.request(ctx, method, path, in)
	if err != nil {
		return 0, err
	}
	if header != nil {
		header(req.Header)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("ductor: %s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		return res.StatusCode, apiError(res)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode, nil
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return res.StatusCode, fmt.Errorf("ductor: %s %s: decode answer: %w", method, path, err)
	}
	return res.StatusCode, nil
}

func (c *conn) request(ctx context.Context, method, path string, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("ductor: encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+"/api/v1"+path, body)
	if err != nil {
		return nil, fmt.Errorf("ductor: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func apiError(res *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var body struct {
		Error struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
	}
	e := &APIError{Status: res.StatusCode}
	e.RetryAfter, e.retryAfterSent = parseRetryAfter(res.Header.Get("Retry-After"), time.Now())
	if json.Unmarshal(raw, &body) == nil && body.Error.Code != "" {
		e.Code, e.Message, e.Details = body.Error.Code, body.Error.Message, body.Error.Details
	} else {
		e.Code, e.Message = "http_"+fmt.Sprint(res.StatusCode), strings.TrimSpace(string(raw))
	}
	return e
}

// retryable reports whether a call may succeed when tried again: the
// server was unreachable, or answered 429 or a 5xx.
func retryable(err error) bool {
	var e *APIError
	if !errors.As(err, &e) {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// backoff is an exponential delay with jitter between minimum and
// maximum.
type backoff struct {
	min, max time.Duration
	next     time.Duration
}

func (b *backoff) reset() { b.next = 0 }

func (b *backoff) delay() time.Duration {
	if b.next == 0 {
		b.next = b.min
	}
	d := b.next
	b.next = min(2*b.next, b.max)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// sleepCtx waits d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
