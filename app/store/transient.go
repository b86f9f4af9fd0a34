package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// Transient reports whether err is worth trying again unchanged a moment
// later: the database was unavailable (Unavailable), or a statement
// failed for a reason of the moment rather than of the statement itself:
// a statement timeout (query_canceled), a lock timeout
// (lock_not_available), a serialization failure or a deadlock. A caller
// that keeps something it could not write (a step's result, say) offers
// it again after such an error instead of dropping it.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if Unavailable(err) {
		return true
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pgErr.Code {
		case "57014", "55P03", "40001", "40P01":
			return true
		}
	}
	return false
}
