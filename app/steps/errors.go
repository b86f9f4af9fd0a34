package steps

import (
	"errors"
	"fmt"

	"github.com/ductor/ductor/app/engine"
)

// Error codes an attempt fails with. Retryability is decided per error
// (see [Error.Retryable]); the comment gives each code's usual value.
const (
	CodeTaskFailed      = "task_failed"              // a handler failed: retryable unless Permanent
	CodeUnknownHandler  = "unknown_handler"          // no handler of that name here: no
	CodeInvalidInput    = "invalid_input"            // a built-in's input is malformed: no
	CodeInvalidOutput   = "invalid_output"           // the output is not JSON: no
	CodePanic           = "panic"                    // the handler panicked: yes
	CodeCancelled       = "cancelled"                // the caller's context ended: yes
	CodeHTTPStatus      = "http_status"              // unexpected status: 5xx, 408, 429 only
	CodeHTTPError       = "http_error"               // transport failure: yes (redirect policy: no)
	CodeSSRFBlocked     = "ssrf_blocked"             // refused destination address: no
	CodeTimeout         = engine.CodeTimeout         // the attempt's deadline passed: yes
	CodePayloadTooLarge = engine.CodePayloadTooLarge // output or response body too big: no
	CodeInvalidStep     = engine.CodeInvalidStep     // bad params (url, method…): no
)

// Error is a failure with a code and a retryability. Handlers return one
// with [Fail] or [Permanent]; any other error a handler returns fails the
// attempt as a retryable task_failed.
type Error struct {
	Code      string
	Message   string
	Retryable bool
	Err       error // the cause, if any
}

func (e *Error) Error() string {
	if e.Message == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Fail returns an error that fails the attempt with code and message.
func Fail(code, message string, retryable bool) error {
	return &Error{Code: code, Message: message, Retryable: retryable}
}

// Permanent marks err as not worth retrying. It keeps the code of an
// [*Error] found in err's chain, and uses task_failed otherwise.
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	code := CodeTaskFailed
	if se, ok := errors.AsType[*Error](err); ok {
		code = se.Code
	}
	return &Error{Code: code, Message: err.Error(), Err: err}
}

// failf builds a non-retryable *Error with a formatted message.
func failf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// toEngine converts a handler's error to the engine's form. The message
// is err's whole text, so context added by wrapping is kept.
func toEngine(err error) *engine.Error {
	if se, ok := errors.AsType[*Error](err); ok {
		return &engine.Error{Code: se.Code, Message: err.Error(), Retryable: se.Retryable}
	}
	return &engine.Error{Code: CodeTaskFailed, Message: err.Error(), Retryable: true}
}
