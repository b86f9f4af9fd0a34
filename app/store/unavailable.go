package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err says that the database could not be
// reached or is restarting (refused or dropped connections, a server
// shutting down or recovering), as opposed to a statement the database
// refused. Such an error is worth retrying a little later: workers keep
// what they could not write and try again, and the API answers 503
// unavailable with Retry-After instead of 500. It is the one place that
// tells the two apart.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return unavailableState(pgErr.Code)
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	for _, cause := range []error{pgconn.ErrConnClosed, io.EOF, io.ErrUnexpectedEOF,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE} {
		if errors.Is(err, cause) {
			return true
		}
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	return pgconn.SafeToRetry(err)
}

// unavailableState holds for SQLSTATEs of a connection that failed or a
// server that is shutting down, starting, full or no longer the primary:
// class 08 (connection exception), admin_shutdown, crash_shutdown,
// cannot_connect_now, too_many_connections and read_only_sql_transaction
// (Ductor opens no read-only transaction of its own, so a refused write
// means its connection now leads to a standby).
func unavailableState(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", "53300", readOnlySQLTransaction:
		return true
	}
	return strings.HasPrefix(code, "08")
}
