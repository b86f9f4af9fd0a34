package steps

import (
	"context"
	"time"
)

// Names of the built-in handlers every registry holds.
const (
	BuiltinNoop  = "builtin.noop"
	BuiltinEcho  = "builtin.echo"
	BuiltinSleep = "builtin.sleep"
	BuiltinFail  = "builtin.fail"
)

func builtins() map[string]Handler {
	return map[string]Handler{
		BuiltinNoop:  noop,
		BuiltinEcho:  echo,
		BuiltinSleep: sleep,
		BuiltinFail:  fail,
	}
}

// noop succeeds with an empty object.
func noop(context.Context, Call) (any, error) { return map[string]any{}, nil }

// echo succeeds with its input.
func echo(_ context.Context, c Call) (any, error) { return c.Input, nil }

// sleep waits input.ms milliseconds, or until ctx ends, and reports how
// long it slept.
func sleep(ctx context.Context, c Call) (any, error) {
	ms, ok := intOf(field(c.Input, "ms"))
	if !ok || ms < 0 {
		return nil, Fail(CodeInvalidInput, `builtin.sleep wants {"ms": N} with N a whole number >= 0`, false)
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return map[string]any{"slept_ms": ms}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fail always fails with code task_failed and input.message. It is not
// retryable unless input.retryable is true, so a demo of a failing step
// fails at once and a demo of retries opts in.
func fail(_ context.Context, c Call) (any, error) {
	msg, retryable := "failed by builtin.fail", false
	if v := field(c.Input, "message"); v != nil {
		s, ok := v.(string)
		if !ok {
			return nil, Fail(CodeInvalidInput, "builtin.fail: message must be a string", false)
		}
		msg = s
	}
	if v := field(c.Input, "retryable"); v != nil {
		b, ok := v.(bool)
		if !ok {
			return nil, Fail(CodeInvalidInput, "builtin.fail: retryable must be a boolean", false)
		}
		retryable = b
	}
	return nil, Fail(CodeTaskFailed, msg, retryable)
}
