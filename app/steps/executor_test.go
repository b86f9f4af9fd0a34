package steps_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ductor/ductor/app/steps"
)

func TestExecuteUnknownHandler(t *testing.T) {
	t.Parallel()
	_, err := setup(t, nil).run(t, task("billing.charge", nil))
	wantError(t, err, steps.CodeUnknownHandler, false, "billing.charge")
}

func TestExecuteInvalidSteps(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	_, err := b.run(t, steps.Request{Type: "task", Params: map[string]any{}})
	wantError(t, err, steps.CodeInvalidStep, false, "handler")
	_, err = b.run(t, steps.Request{Type: "transform", Params: map[string]any{}})
	wantError(t, err, steps.CodeInvalidStep, false, "transform")
}

func TestExecutePassesTheCall(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	var got steps.Call
	b.register(t, "capture", func(_ context.Context, c steps.Call) (any, error) {
		got = c
		return nil, nil
	})
	req := task("capture", "in")
	req.Attempt = 3
	if _, err := b.run(t, req); err != nil {
		t.Fatalf("Execute: %+v", *err)
	}
	want := steps.Call{TenantID: "t1", RunID: "r1", Node: "n", Attempt: 3, IdempotencyKey: "r1:n", Input: "in"}
	if got != want {
		t.Errorf("call = %+v, want %+v", got, want)
	}
}

func TestExecuteHandlerErrors(t *testing.T) {
	t.Parallel()
	base := errors.New("gateway said no")
	tests := []struct {
		name      string
		err       error
		code      string
		retryable bool
		message   string
	}{
		{"plain", base, steps.CodeTaskFailed, true, "gateway said no"},
		{"wrapped", fmt.Errorf("charging: %w", base), steps.CodeTaskFailed, true, "charging: gateway said no"},
		{"permanent", steps.Permanent(base), steps.CodeTaskFailed, false, "gateway said no"},
		{"fail", steps.Fail("card_declined", "declined", false), "card_declined", false, "declined"},
		{"fail retryable", steps.Fail("rate_limited", "slow down", true), "rate_limited", true, "slow down"},
		{"wrapped fail", fmt.Errorf("charging: %w", steps.Fail("card_declined", "declined", false)), "card_declined", false, "charging: declined"},
		{"permanent keeps code", steps.Permanent(steps.Fail("rate_limited", "slow down", true)), "rate_limited", false, "slow down"},
		{"error type", &steps.Error{Code: "custom", Message: "m", Retryable: true}, "custom", true, "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			b.register(t, "h", func(context.Context, steps.Call) (any, error) { return nil, tt.err })
			_, err := b.run(t, task("h", nil))
			wantError(t, err, tt.code, tt.retryable, tt.message)
		})
	}
}

func TestPermanentNil(t *testing.T) {
	t.Parallel()
	if err := steps.Permanent(nil); err != nil {
		t.Errorf("Permanent(nil) = %v", err)
	}
}

func TestExecuteRecoversPanics(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	b := setup(t, &setupOpts{options: []steps.Option{steps.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}})
	b.register(t, "boom", func(context.Context, steps.Call) (any, error) { panic("kaboom") })
	out, err := b.run(t, task("boom", nil))
	wantError(t, err, steps.CodePanic, true, "kaboom")
	if out != nil {
		t.Errorf("output = %v, want nil", out)
	}
	if s := logs.String(); !strings.Contains(s, "kaboom") || !strings.Contains(s, "TestExecuteRecoversPanics") {
		t.Errorf("log lacks the panic and its stack:\n%s", s)
	}
}

func TestExecuteRecoversGoexit(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.register(t, "exit", func(context.Context, steps.Call) (any, error) {
		runtime.Goexit()
		return nil, nil
	})
	_, err := b.run(t, task("exit", nil))
	wantError(t, err, steps.CodePanic, true, "Goexit")
}

func TestExecuteTimeoutAbandonsAHandlerIgnoringItsContext(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { close(release); wg.Wait() })
	b.register(t, "hang", func(context.Context, steps.Call) (any, error) {
		defer wg.Done()
		<-release
		return "too late", nil
	})
	req := task("hang", nil)
	req.Timeout = 20 * time.Millisecond
	out, err := b.run(t, req)
	wantError(t, err, steps.CodeTimeout, true, "timed out after 20ms")
	if out != nil {
		t.Errorf("output = %v, want nil", out)
	}
}

func TestExecuteCancelled(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.register(t, "block", blockUntilDone)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := b.exec.Execute(ctx, task("block", nil))
	wantError(t, err, steps.CodeCancelled, true, "cancel")
}

func TestExecuteOutputCap(t *testing.T) {
	t.Parallel()
	b := setup(t, &setupOpts{options: []steps.Option{steps.WithMaxOutputBytes(16)}})
	out, err := b.run(t, task(steps.BuiltinEcho, "0123456789ab")) // 14 bytes of JSON
	wantOutput(t, out, err, `"0123456789ab"`)
	_, err = b.run(t, task(steps.BuiltinEcho, "0123456789abcdef")) // 18 bytes
	wantError(t, err, steps.CodePayloadTooLarge, false, "18 bytes", "16-byte")
}

func TestExecuteOutputCapDefaultsToOneMiB(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	_, err := b.run(t, task(steps.BuiltinEcho, strings.Repeat("x", 1<<20-2)))
	if err != nil {
		t.Fatalf("exactly 1 MiB of JSON: %+v", *err)
	}
	_, err = b.run(t, task(steps.BuiltinEcho, strings.Repeat("x", 1<<20-1)))
	wantError(t, err, steps.CodePayloadTooLarge, false)
}

func TestExecuteRejectsNonJSONOutput(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.register(t, "chan", func(context.Context, steps.Call) (any, error) { return make(chan int), nil })
	_, err := b.run(t, task("chan", nil))
	wantError(t, err, steps.CodeInvalidOutput, false, "chan")
}

func TestExecuteTruncatesLongMessages(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.register(t, "loud", func(context.Context, steps.Call) (any, error) {
		return nil, errors.New(strings.Repeat("é", 10_000))
	})
	_, err := b.run(t, task("loud", nil))
	wantError(t, err, steps.CodeTaskFailed, true)
	if len(err.Message) > 5000 || !strings.HasSuffix(err.Message, "…") || !utf8.ValidString(err.Message) {
		t.Errorf("message of %d bytes not truncated", len(err.Message))
	}
}
