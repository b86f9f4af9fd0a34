package httpx

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ductor/ductor/app/apperr"
)

func TestToBodyHidesInternalErrors(t *testing.T) {
	t.Parallel()
	status, body := ToBody(errors.New("disk on fire: EOF"))
	if status != 500 || body.Error.Code != apperr.Internal || strings.Contains(body.Error.Message, "EOF") {
		t.Fatalf("internal error = %d %+v", status, body)
	}
	status, body = ToBody(apperr.New(apperr.Conflict, "duplicate signal").WithDetails([]string{"x"}))
	if status != 409 || body.Error.Message != "duplicate signal" || body.Error.Details == nil {
		t.Fatalf("conflict = %d %+v", status, body)
	}
	for code := range StatusOf {
		if StatusOf[code] == 0 {
			t.Errorf("code %s has no status", code)
		}
	}
}

// A database that cannot be reached is a 503 to retry, whatever wraps
// the error; a client error that happens to wrap the same cause keeps its
// own code.
func TestToBodyMapsAnUnreachableDatabaseToUnavailable(t *testing.T) {
	t.Parallel()
	status, body := ToBody(fmt.Errorf("load run: %w", &pgconn.ConnectError{}))
	if status != 503 || body.Error.Code != apperr.Unavailable {
		t.Fatalf("connect error = %d %+v, want 503 unavailable", status, body)
	}
	status, body = ToBody(apperr.Wrap(io.ErrUnexpectedEOF, apperr.Invalid, "truncated body"))
	if status != 400 || body.Error.Code != apperr.Invalid {
		t.Fatalf("a truncated request body = %d %+v, want 400 invalid", status, body)
	}
}
