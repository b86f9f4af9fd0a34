package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ductor/ductor/app/config"
	"github.com/ductor/ductor/app/jsonvalue"
)

// apiClient is the thin HTTP client behind `ductor run`, `signal` and
// friends: --url and --api-key, else DUCTOR_URL and DUCTOR_API_KEY, say
// where and as whom. It reads them at its first request, once every flag
// is parsed.
type apiClient struct {
	env  Env
	http *http.Client
}

func newAPIClient(env Env) *apiClient {
	return &apiClient{env: env, http: &http.Client{Timeout: 60 * time.Second}}
}

// apiFlags are the API commands' --url and --api-key; each flag set of an
// API command registers them, so they go anywhere on its command line.
type apiFlags struct {
	url, key string
}

func api(run func(context.Context, Env, []string) error) func(context.Context, Env, []string) error {
	return func(ctx context.Context, env Env, args []string) error {
		env.api = &apiFlags{}
		return run(ctx, env, args)
	}
}

func (a *apiFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.url, "url", a.url, "the Ductor to call (default $DUCTOR_URL, else http://127.0.0.1:8080)")
	fs.StringVar(&a.key, "api-key", a.key, "the API key to call it with (default $DUCTOR_API_KEY)")
}

// target is the base URL and key to call: the flags win over the
// environment.
func (c *apiClient) target() (base, key string, err error) {
	var f apiFlags
	if c.env.api != nil {
		f = *c.env.api
	}
	base = strings.TrimRight(first(f.url, c.env.Getenv("DUCTOR_URL"), "http://127.0.0.1:8080"), "/")
	key = first(f.key, c.env.Getenv("DUCTOR_API_KEY"))
	if key == "" {
		return "", "", &config.Error{Setting: "DUCTOR_API_KEY", Problem: "required, or --api-key (`ductor dev` prints one)"}
	}
	return base, key, nil
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// apiError is the API's error shape.
type apiError struct {
	Status  int
	Code    string          `json:"code"`
	Msg     string          `json:"message"`
	Details json.RawMessage `json:"details"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (%d %s)", e.Msg, e.Status, e.Code) }

// do sends body (JSON-encoded unless nil) and decodes the answer into out.
func (c *apiClient) do(ctx context.Context, method, path string, body, out any) error {
	var raw []byte
	if body != nil {
		b, err := jsonvalue.Marshal(body)
		if err != nil {
			return err
		}
		raw = b
	}
	_, err := c.send(ctx, method, path, "application/json", raw, out)
	return err
}

// send sends a raw body of the content type and decodes a successful
// answer into out; it returns the status. An error answer is an *apiError.
func (c *apiClient) send(ctx context.Context, method, path, contentType string, body []byte, out any) (int, error) {
	base, key, err := c.target()
	if err != nil {
		return 0, err
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", contentType)
	res, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode >= 300 {
		return res.StatusCode, errorOf(res.StatusCode, raw)
	}
	if out == nil {
		return res.StatusCode, nil
	}
	return res.StatusCode, jsonvalue.Unmarshal(raw, out)
}

func errorOf(status int, raw []byte) *apiError {
	var e struct {
		Error apiError `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	e.Error.Status = status
	if e.Error.Msg == "" {
		e.Error.Msg = strings.TrimSpace(string(raw))
	}
	return &e.Error
}
