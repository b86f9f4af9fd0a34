package steps

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ductor/ductor/app/expr"
)

// CodeSecretNotFound fails a step that references a tenant secret that
// does not exist: not retryable (retry the node once the secret is set).
const CodeSecretNotFound = "secret_not_found"

// Masked is what a secret's value is replaced with wherever a response or
// an error would echo it back.
const Masked = "***"

// SecretSource opens a tenant's secrets by name for a step about to send
// them; names that do not exist are left out of the answer.
type SecretSource interface {
	Values(ctx context.Context, tenantID string, names []string) (map[string]string, error)
}

// WithSecrets sets where http steps' secret references (secret("NAME") in
// url, headers and body, and the auth shorthand) and task steps'
// `secrets` are resolved. Without it a step that references a secret
// fails with secret_not_found.
func WithSecrets(src SecretSource) Option { return func(x *Executor) { x.secrets = src } }

// TaskSecrets opens a task step's `secrets` (its params' list of names)
// for the worker that runs it, failing with secret_not_found naming the
// first that does not exist. A step without secrets gets nil.
func (x *Executor) TaskSecrets(ctx context.Context, tenantID string, params map[string]any) (map[string]string, error) {
	names := stringList(params["secrets"])
	if len(names) == 0 {
		return nil, nil
	}
	return x.openSecrets(ctx, tenantID, names)
}

func (x *Executor) openSecrets(ctx context.Context, tenantID string, names []string) (map[string]string, error) {
	if x.secrets == nil {
		return nil, &Error{Code: CodeSecretNotFound, Message: fmt.Sprintf("secret %s not found: this server has no secret store (DUCTOR_SECRET_KEY)", names[0])}
	}
	values, err := x.secrets.Values(ctx, tenantID, names)
	if err != nil {
		return nil, &Error{Code: CodeHTTPError, Retryable: true, Message: "reading the step's secrets: " + err.Error(), Err: err}
	}
	for _, n := range names {
		if _, ok := values[n]; !ok {
			return nil, &Error{Code: CodeSecretNotFound, Message: fmt.Sprintf("secret %s not found: set it (PUT /api/v1/secrets/%s) and retry the step", n, n)}
		}
	}
	return values, nil
}

// resolveHTTPSecrets returns an http step's params with every secret
// reference replaced by its value, and the mask that hides those values
// again in what the step records. Params without references are returned
// as they are, with a nil mask.
func (x *Executor) resolveHTTPSecrets(ctx context.Context, tenantID string, p map[string]any) (map[string]any, *mask, error) {
	// Only the references the step's own expressions make resolve (the
	// engine lists them in secret_refs): a placeholder that arrived in
	// data, such as a run's input echoed into the body, stays the text it
	// is, so no caller can have a step send a secret it was not written
	// to send.
	declared := stringList(p["secret_refs"])
	var names []string
	add := func(ns ...string) {
		for _, n := range ns {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	addDeclared := func(s string) {
		for _, n := range expr.SecretRefs(s) {
			if slices.Contains(declared, n) {
				add(n)
			}
		}
	}
	walkStrings(p["url"], addDeclared)
	walkStrings(p["headers"], addDeclared)
	walkStrings(p["body"], addDeclared)
	auth, _ := p["auth"].(map[string]any)
	bearer, _ := auth["bearer"].(string)
	basic, _ := auth["basic"].(map[string]any)
	user, _ := basic["user"].(string)
	password, _ := basic["password"].(string)
	if bearer != "" {
		add(bearer)
	}
	if password != "" {
		add(password)
	}
	if len(names) == 0 {
		return p, nil, nil
	}
	values, err := x.openSecrets(ctx, tenantID, names)
	if err != nil {
		return nil, nil, err
	}
	refValues := map[string]string{}
	for _, n := range declared {
		if v, ok := values[n]; ok {
			refValues[n] = v
		}
	}
	m := newMask(slices.Collect(maps.Values(values)))
	out := maps.Clone(p)
	delete(out, "auth")
	out["url"] = replaceRefs(p["url"], refValues)
	out["body"] = replaceRefs(p["body"], refValues)
	if _, ok := p["body"]; !ok {
		delete(out, "body")
	}
	headers := map[string]any{}
	if h, ok := replaceRefs(p["headers"], refValues).(map[string]any); ok {
		headers = h
	}
	switch {
	case bearer != "":
		headers["Authorization"] = "Bearer " + values[bearer]
	case password != "":
		cred := base64.StdEncoding.EncodeToString([]byte(user + ":" + values[password]))
		m = newMask(append(m.values, cred))
		headers["Authorization"] = "Basic " + cred
	}
	out["headers"] = headers
	return out, m, nil
}

// walkStrings calls f on every string in v, keys included.
func walkStrings(v any, f func(string)) {
	switch v := v.(type) {
	case string:
		f(v)
	case map[string]any:
		for k, e := range v {
			f(k)
			walkStrings(e, f)
		}
	case []any:
		for _, e := range v {
			walkStrings(e, f)
		}
	}
}

// replaceRefs copies v with the secret references in its strings (keys
// included) replaced by their values.
func replaceRefs(v any, values map[string]string) any {
	return mapStrings(v, func(s string) string { return expr.ReplaceSecretRefs(s, values) })
}

func mapStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[f(k)] = mapStrings(e, f)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = mapStrings(e, f)
		}
		return out
	}
	return v
}

// mask replaces secrets' values with [Masked].
type mask struct{ values []string } // longest first

func newMask(values []string) *mask {
	vs := slices.DeleteFunc(slices.Clone(values), func(s string) bool { return s == "" })
	slices.SortFunc(vs, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return &mask{values: slices.Compact(vs)}
}

func (m *mask) string(s string) string {
	for _, v := range m.values {
		s = strings.ReplaceAll(s, v, Masked)
	}
	return s
}

// output masks an output's strings, keys included.
func (m *mask) output(v any) any {
	if m == nil {
		return v
	}
	return mapStrings(v, m.string)
}

// error masks an error's message.
func (m *mask) error(err error) error {
	if m == nil || err == nil {
		return err
	}
	if se, ok := errors.AsType[*Error](err); ok {
		return &Error{Code: se.Code, Retryable: se.Retryable, Message: m.string(err.Error())}
	}
	return &Error{Code: CodeHTTPError, Retryable: true, Message: m.string(err.Error())}
}

func stringList(v any) []string {
	var out []string
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = v
	}
	return out
}
