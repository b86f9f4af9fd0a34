package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ductor/ductor/app/config"

	"github.com/ductor/ductor/app/jsonvalue"
)

// apiClient is the thin HTTP client behind `ductor run`, `signal` and
// friends: DUCTOR_URL and DUCTOR_API_KEY say where and as whom.
type apiClient struct {
	base string
	key  string
	http *http.Client
}

func newAPIClient(env Env) (*apiClient, error) {
	base := strings.TrimRight(env.Getenv("DUCTOR_URL"), "/")
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	key := env.Getenv("DUCTOR_API_KEY")
	if key == "" {
		return nil, &config.Error{Setting: "DUCTOR_API_KEY", Problem: "required (`ductor dev` prints one)"}
	}
	return &apiClient{base: base, key: key, http: &http.Client{Timeout: 60 * time.Second}}, nil
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
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
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
