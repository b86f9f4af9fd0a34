package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ductor/ductor/app/store"
)

func TestUnavailable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"refused", fmt.Errorf("load: %w", syscall.ECONNREFUSED), true},
		{"dropped", fmt.Errorf("write: %w", io.ErrUnexpectedEOF), true},
		{"closed", pgconn.ErrConnClosed, true},
		{"shutting down", &pgconn.PgError{Code: "57P01"}, true},
		{"recovering", &pgconn.PgError{Code: "57P03"}, true},
		{"connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"undefined table", &pgconn.PgError{Code: "42P01"}, false},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), false},
		{"deadline", context.DeadlineExceeded, false},
		{"other", errors.New("boom"), false},
	} {
		if got := store.Unavailable(tc.err); got != tc.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
