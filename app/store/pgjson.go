package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/jsonvalue"
)

// ConfigurePool makes every connection of the pool decode and encode json
// and jsonb by Ductor's value model (package jsonvalue), so that a column
// pgx decodes itself (into any, a map or a struct) reads as the store's
// own decoding does: integral numbers within int64 as int64, others as
// float64; and encode and scan uuids directly (RegisterUUID). It also
// keeps the pool on the server that accepts writes (writable.go). Call
// it on every pool before it is opened.
func ConfigurePool(cfg *pgxpool.Config) {
	requireWritable(cfg)
	next := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		RegisterJSON(conn.TypeMap())
		RegisterUUID(conn.TypeMap())
		if next != nil {
			return next(ctx, conn)
		}
		return nil
	}
}

// RegisterJSON installs the value model's json and jsonb codecs in m.
func RegisterJSON(m *pgtype.Map) {
	m.RegisterType(&pgtype.Type{Name: "json", OID: pgtype.JSONOID,
		Codec: &pgtype.JSONCodec{Marshal: jsonvalue.Marshal, Unmarshal: jsonvalue.Unmarshal}})
	m.RegisterType(&pgtype.Type{Name: "jsonb", OID: pgtype.JSONBOID,
		Codec: &pgtype.JSONBCodec{Marshal: jsonvalue.Marshal, Unmarshal: jsonvalue.Unmarshal}})
}
