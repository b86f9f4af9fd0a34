package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/testdb"
)

// uuids go to Postgres and back unchanged through the direct codec: as
// parameters (alone, in arrays, nil as NULL, empty arrays) and as columns
// scanned into uuid.UUID, *uuid.UUID and []uuid.UUID.
func TestUUIDsRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := testdb.Tx(t)
	a, b := uuid.New(), uuid.New()
	var one uuid.UUID
	var text string
	if err := tx.QueryRow(ctx, "SELECT $1::uuid, $1::uuid::text", a).Scan(&one, &text); err != nil || one != a || text != a.String() {
		t.Fatalf("uuid: %v %q, %v; want %v", one, text, err, a)
	}
	var null *uuid.UUID
	var zero uuid.UUID = a
	if err := tx.QueryRow(ctx, "SELECT NULL::uuid, NULL::uuid").Scan(&null, &zero); err != nil || null != nil || zero != uuid.Nil {
		t.Fatalf("NULL uuid: %v %v, %v", null, zero, err)
	}
	ptr := &b
	if err := tx.QueryRow(ctx, "SELECT $1::uuid", ptr).Scan(&null); err != nil || null == nil || *null != b {
		t.Fatalf("*uuid: %v, %v; want %v", null, err, b)
	}
	for _, in := range [][]uuid.UUID{{a, b, a}, {}, nil} {
		var out []uuid.UUID
		var n int
		var isNull bool
		err := tx.QueryRow(ctx, "SELECT $1::uuid[], coalesce(cardinality($1::uuid[]), -1), $1::uuid[] IS NULL", in).Scan(&out, &n, &isNull)
		if err != nil {
			t.Fatalf("%v: %v", in, err)
		}
		if isNull != (in == nil) || (in != nil && n != len(in)) || len(out) != len(in) || (len(in) > 0 && !reflect.DeepEqual(out, in)) {
			t.Fatalf("%v read back %v (cardinality %d, NULL %v)", in, out, n, isNull)
		}
	}
	var found bool
	if err := tx.QueryRow(ctx, "SELECT $1::uuid = ANY($2::uuid[])", b, []uuid.UUID{a, b}).Scan(&found); err != nil || !found {
		t.Fatalf("ANY: %v, %v", found, err)
	}
}
