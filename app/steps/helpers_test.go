package steps_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/steps"
)

type testBundle struct {
	reg  *steps.Registry
	exec *steps.Executor
}

type setupOpts struct {
	allow   []string
	maxBody int64
	options []steps.Option
}

func setup(t *testing.T, opts *setupOpts) *testBundle {
	t.Helper()
	if opts == nil {
		opts = &setupOpts{}
	}
	var allow []netip.Prefix
	for _, s := range opts.allow {
		allow = append(allow, netip.MustParsePrefix(s))
	}
	reg := steps.NewRegistry()
	exec := steps.NewExecutor(reg, steps.HTTPOptions{Allow: allow, MaxResponseBytes: opts.maxBody}, opts.options...)
	return &testBundle{reg: reg, exec: exec}
}

// task builds the request for a task attempt of handler with input.
func task(handler string, input any) steps.Request {
	return steps.Request{
		TenantID: "t1", RunID: "r1", Node: "n", Ref: "n", Type: "task", Attempt: 1,
		IdempotencyKey: "r1:n", Params: map[string]any{"handler": handler, "input": input},
	}
}

// run executes req with a generous timeout unless req sets one.
func (b *testBundle) run(t *testing.T, req steps.Request) (any, *engine.Error) {
	t.Helper()
	if req.Timeout == 0 {
		req.Timeout = 10 * time.Second
	}
	return b.exec.Execute(t.Context(), req)
}

func (b *testBundle) register(t *testing.T, name string, h steps.Handler) {
	t.Helper()
	if err := b.reg.Register(name, h); err != nil {
		t.Fatalf("Register(%q): %v", name, err)
	}
}

// jsonOf renders v as JSON, map keys sorted, for comparisons.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	return string(b)
}

func wantOutput(t *testing.T, out any, err *engine.Error, want string) {
	t.Helper()
	if err != nil {
		t.Fatalf("Execute failed: %+v", *err)
	}
	if got := jsonOf(t, out); got != want {
		t.Errorf("output = %s, want %s", got, want)
	}
}

// wantError checks the code and retryability, and that the message
// contains each of parts.
func wantError(t *testing.T, err *engine.Error, code string, retryable bool, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Execute succeeded, want error %s", code)
	}
	if err.Code != code || err.Retryable != retryable {
		t.Fatalf("error = %+v, want code %s retryable %v", *err, code, retryable)
	}
	for _, p := range parts {
		if !strings.Contains(err.Message, p) {
			t.Errorf("message %q does not contain %q", err.Message, p)
		}
	}
}

// blockUntilDone is a handler that waits for ctx to end.
func blockUntilDone(ctx context.Context, _ steps.Call) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
