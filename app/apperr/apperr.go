// Package apperr is Ductor's one application error type. Code decides the
// HTTP status in exactly one place (the server's error handler); Message is
// safe to show to the caller; Details carries structured data such as the
// list of problems in an invalid definition.
package apperr

import (
	"errors"
	"fmt"
	"time"
)

// Code classifies an error. The string is what API clients see.
type Code string

const (
	Invalid             Code = "invalid"              // 400: malformed request
	InvalidDefinition   Code = "invalid_definition"   // 422: a definition with problems
	Unprocessable       Code = "unprocessable"        // 422: well-formed but not acceptable
	Unauthorized        Code = "unauthorized"         // 401: no or bad credentials
	Forbidden           Code = "forbidden"            // 403: missing scope or role
	NotFound            Code = "not_found"            // 404
	Conflict            Code = "conflict"             // 409: duplicate or already decided
	IdempotencyMismatch Code = "idempotency_mismatch" // 409: a key reused with another request
	ConcurrencyLimit    Code = "concurrency_limit"    // 409: a concurrency rule refuses the run
	TooLarge            Code = "too_large"            // 413
	RateLimited         Code = "rate_limited"         // 429: rate or bound reached
	QuotaExceeded       Code = "quota_exceeded"       // 429: a tenant's usage quota is used up
	Unavailable         Code = "unavailable"          // 503
	Internal            Code = "internal"             // 500: never shows its cause
)

// Error is an error with a code, a caller-safe message and optional details.
type Error struct {
	Code    Code
	Message string
	Details any
	Err     error // the cause, for logs; never shown to callers
	// RetryAfter, when set, is how long the caller should wait before
	// trying again (a 429's Retry-After).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error with the code and a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error with the code and message that keeps err as its cause.
func Wrap(err error, code Code, message string) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

// WithDetails returns a copy of e carrying details.
func (e *Error) WithDetails(details any) *Error {
	c := *e
	c.Details = details
	return &c
}

// CodeOf returns the code of the first *Error in err's chain, or Internal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Is reports whether err carries the code.
func Is(err error, code Code) bool {
	return err != nil && CodeOf(err) == code
}
