package wftest

import "github.com/ductor/ductor/app/engine"

// builtin answers a task step of a built-in handler the case does not
// mock, as the server's workers would: builtin.noop succeeds with {},
// builtin.echo with its input, builtin.fail fails with code task_failed
// (input.message, input.retryable); builtin.sleep reports slept_ms, at
// once in virtual time.
func builtin(da engine.DispatchAttempt) (*engine.StepResult, bool) {
	if da.Type != "task" {
		return nil, false
	}
	r := &engine.StepResult{Node: da.Node, Generation: da.Generation, Attempt: da.Attempt}
	in, _ := da.Params["input"].(map[string]any)
	switch da.Params["handler"] {
	case "builtin.noop":
		r.Output = map[string]any{}
	case "builtin.echo":
		r.Output = da.Params["input"]
	case "builtin.sleep":
		r.Output = map[string]any{"slept_ms": in["ms"]}
	case "builtin.fail":
		msg, ok := in["message"].(string)
		if !ok {
			msg = "failed by builtin.fail"
		}
		retryable, _ := in["retryable"].(bool)
		r.Error = &engine.Error{Code: "task_failed", Message: msg, Retryable: retryable}
	default:
		return nil, false
	}
	return r, true
}
