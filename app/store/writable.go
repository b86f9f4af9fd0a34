package store

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Ductor writes, so every connection it holds must be to a server that
// accepts writes: the primary. With a multi-host DATABASE_URL
// (host=a,b), a new connection tries each host until one is writable
// (target_session_attrs=read-write, whatever the URL says), so that
// after a failover the pool finds the promoted standby by itself. A
// connection to a server that became read-only under it (a primary
// demoted, or a proxy's address now leading to a standby) fails its
// writes with read_only_sql_transaction: that error counts as the
// database being unavailable (503, tried again later), and the pool
// drops the connection when it is released instead of handing it out
// again.

// readOnlySQLTransaction is the SQLSTATE of a write refused by a
// read-only server or transaction.
const readOnlySQLTransaction = "25006"

// requireWritable configures cfg as above.
func requireWritable(cfg *pgxpool.Config) {
	cfg.ConnConfig.ValidateConnect = pgconn.ValidateConnectTargetSessionAttrsReadWrite
	spoiled := &spoiledConns{}
	cfg.ConnConfig.Tracer = spoiled
	next := cfg.AfterRelease
	cfg.AfterRelease = func(conn *pgx.Conn) bool {
		if spoiled.take(conn) {
			return false
		}
		return next == nil || next(conn)
	}
}

// spoiledConns are the connections that met a read-only server, noted by
// tracing every statement's end (a pgx.QueryTracer and BatchTracer) and
// dropped on release.
type spoiledConns struct{ m sync.Map }

func (s *spoiledConns) note(conn *pgx.Conn, err error) {
	if readOnly(err) {
		s.m.Store(conn, struct{}{})
	}
}

func (s *spoiledConns) take(conn *pgx.Conn) bool {
	_, found := s.m.LoadAndDelete(conn)
	return found
}

func (s *spoiledConns) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (s *spoiledConns) TraceQueryEnd(_ context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	s.note(conn, data.Err)
}

func (s *spoiledConns) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (s *spoiledConns) TraceBatchQuery(_ context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	s.note(conn, data.Err)
}

func (s *spoiledConns) TraceBatchEnd(_ context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	s.note(conn, data.Err)
}

// readOnly reports whether err is a write a read-only server refused.
func readOnly(err error) bool {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pgErr.Code == readOnlySQLTransaction
}
