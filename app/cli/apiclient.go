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
	Status int
	Code   string `json:"code"`
	Msg    string `json:"message"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (%d %s)", e.Msg, e.Status, e.Code) }

// do sends body (JSON-encoded unless nil) and decodes the answer into out.
func (c *apiClient) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var e struct {
			Error apiError `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		e.Error.Status = res.StatusCode
		if e.Error.Msg == "" {
			e.Error.Msg = strings.TrimSpace(string(raw))
		}
		return &e.Error
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}
