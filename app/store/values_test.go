package store_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// Values survive Postgres's jsonb unchanged: a run's input, an event's
// data and a node's output read back (by the store, and by pgx's own
// decoding of a jsonb column) exactly as the engine wrote them, numbers
// keeping their kind. jsonb rewrites numbers (1e2 becomes 100, an
// integral literal), which is why doubles are written with a fraction.
func TestValuesSurviveJSONB(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenant := testdb.Tenant(t, b.store, nil)
	v := testdb.Definition(t, b.store, tenant.ID, "key: vals\nsteps:\n  - {ref: a, type: transform, with: {expr: '1'}}\n")
	r := rand.New(rand.NewPCG(5, 3))
	for i := range 150 {
		want := map[string]any{"v": jsonbValue(r, 0)}
		id := uuid.New()
		run, _, err := b.store.RunCreate(b.ctx, store.NewRun{
			TenantID: tenant.ID, ID: id, DefinitionKey: v.Key, DefinitionVersion: v.Version, ManifestHash: v.ManifestHash,
			RootRunID: id, State: engine.Run{ID: id.String(), Status: engine.RunPending, Input: want},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(run.State.Input, want) {
			t.Fatalf("value %d: input read back %#v, want %#v", i, run.State.Input, want)
		}
		k := store.RunKey{TenantID: tenant.ID, ID: id}
		loads, err := b.store.RunTickLoad(b.ctx, []store.RunKey{k}, []uuid.UUID{id})
		if err != nil {
			t.Fatal(err)
		}
		if got := loads[k].Input; !reflect.DeepEqual(got, want) {
			t.Fatalf("value %d: a tick's load decoded %#v, want %#v", i, got, want)
		}
		node := &engine.Node{ID: "a", Ref: "a", State: engine.NodeSucceeded, Output: want}
		if err := b.store.RunNodesUpsert(b.ctx, tenant.ID, id, []*engine.Node{node}); err != nil {
			t.Fatal(err)
		}
		nodes, err := b.store.RunNodesSteps(b.ctx, tenant.ID, id)
		if err != nil || len(nodes) != 1 || !reflect.DeepEqual(nodes[0].Output, want) {
			t.Fatalf("value %d: node output read back %#v, %v; want %#v", i, nodes, err, want)
		}
		ev, _, err := b.store.EventAdd(b.ctx, store.Event{TenantID: tenant.ID, ID: uuid.New(), Name: "n", Data: want})
		if err != nil || !reflect.DeepEqual(ev.Data, want) {
			t.Fatalf("value %d: event data read back %#v, %v; want %#v", i, ev.Data, err, want)
		}
	}
}

func jsonbValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(9); {
	case k == 0:
		return nil
	case k == 1:
		return []any{"", "é", "2.0", "a\\u0000b"}[r.IntN(4)]
	case k == 2:
		return []int64{0, -1, 1<<53 + 1, math.MaxInt64, math.MinInt64}[r.IntN(5)]
	case k == 3:
		return []float64{2.0, 100.0, -0.5, 1e21, 1e20, 1.5e-7, 9223372036854775807.0, 0.1}[r.IntN(8)]
	case k == 4:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	case k == 5:
		return r.IntN(2) == 0
	case k <= 7 && depth < 2:
		m := map[string]any{}
		for j := range r.IntN(3) + 1 {
			m[fmt.Sprint("k", j)] = jsonbValue(r, depth+1)
		}
		return m
	case depth < 2:
		return []any{jsonbValue(r, depth+1), jsonbValue(r, depth+1)}
	}
	return int64(r.IntN(100))
}

// Decoding and encoding the model by hand agree with what jsonb gives
// back for the literals it rewrites.
func TestJSONBRewritesStillDecodeAlike(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenant := testdb.Tenant(t, b.store, nil)
	for lit, want := range map[string]any{"1e2": 100.0, "2.50": 2.5, "-0": int64(0), "9007199254740993": int64(9007199254740993), "1E-7": 1e-7} {
		in, err := jsonvalue.Decode([]byte(lit))
		if err != nil {
			t.Fatal(err)
		}
		ev, _, err := b.store.EventAdd(b.ctx, store.Event{TenantID: tenant.ID, ID: uuid.New(), Name: "n", Data: in})
		if err != nil || !reflect.DeepEqual(ev.Data, want) || !reflect.DeepEqual(in, want) {
			t.Errorf("%s: decoded %#v, through jsonb %#v (%v); want %#v", lit, in, ev.Data, err, want)
		}
	}
}
