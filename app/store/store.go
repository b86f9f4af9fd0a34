// Package store is Ductor's storage seam: it runs the sqlc-generated
// queries and translates their rows into domain types in one place, so
// nothing above it sees pgx rows or generated structs.
package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/queries"
)

// DB is a pool or a transaction: both run queries, send batches and begin
// (nested) transactions, so tests can hand the store a transaction they
// roll back.
type DB interface {
	queries.DBTX
	Begin(ctx context.Context) (pgx.Tx, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Store reads and writes Ductor's tables.
type Store struct {
	db   DB
	q    *queries.Queries
	opts options
}

// options change how a store does some of its work; see Option.
type options struct {
	sameStatementTickLoad bool
}

// Option configures a store (New, With).
type Option func(*options)

// New returns a store over db.
func New(db DB, opts ...Option) *Store {
	s := &Store{db: db, q: queries.New(db)}
	for _, o := range opts {
		o(&s.opts)
	}
	return s
}

// With returns a store over the same pool or transaction with opts
// applied on top of the store's own.
func (s *Store) With(opts ...Option) *Store {
	c := *s
	for _, o := range opts {
		o(&c.opts)
	}
	return &c
}

// DB returns the pool or transaction the store runs on.
func (s *Store) DB() DB { return s.db }

// Beginner opens a transaction: a pool or a connection begins one, a
// transaction a savepoint within it.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// WithTx runs fn in a new transaction of db (a savepoint when db is a
// transaction), committing if fn returns nil and rolling back otherwise.
// It is the one way Ductor opens a transaction: InTx for callers that work
// through a Store, WithTx for those that need the pgx.Tx itself.
func WithTx(ctx context.Context, db Beginner, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db, fn)
}

// InTx runs fn on a store bound to a new transaction, with the store's
// options, committing if fn returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	return WithTx(ctx, s.db, func(tx pgx.Tx) error { return fn(&Store{db: tx, q: queries.New(tx), opts: s.opts}) })
}

// notFound turns pgx.ErrNoRows into a NotFound error naming what was missing.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return apperr.New(apperr.NotFound, "%s not found", what)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// isUniqueViolation reports a unique-constraint error.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.db.QueryRow(ctx, "SELECT 1").Scan(&one)
}

// isForeignKeyViolation reports a foreign-key error.
func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}
