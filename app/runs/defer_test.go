package runs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// A ContinueAsNew that arrives with more inputs than one tick drains
// waits for them: every one of 600 signals sent with it ends up buffered
// on the successor, none left behind on the closed run.
func TestContinueAsNewDefersWhileInputsArePending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, sh, pool := serviceOn(t, true)
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	compiled, err := definition.Compile([]byte(`
key: patient
steps:
  - {ref: wait, type: signal, with: {name: never}}
`), definition.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.DefinitionPublish(ctx, tenant.ID, store.Publication{Manifest: compiled.Manifest, ManifestHash: compiled.Hash, Source: "{}", SourceFormat: "json"}); err != nil {
		t.Fatal(err)
	}
	run, _, err := c.Start(ctx, Trigger{TenantID: tenant.ID, Definition: "patient"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 20*time.Second, "the run waits", func() bool {
		r, _ := s.RunGet(ctx, tenant.ID, run.ID)
		return r.Status == engine.RunWaiting
	})

	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := sh.Writer.Deliver(ctx, tx, tenant.ID, run.ID, engine.ContinueAsNew{RequestID: "can"}); err != nil {
			return err
		}
		ts := store.New(tx)
		r, err := ts.RunGet(ctx, tenant.ID, run.ID)
		if err != nil {
			return err
		}
		for i := range 600 {
			if err := c.signalTx(ctx, tx, ts, r, engine.Signal{RequestID: fmt.Sprint("s", i), Name: "other"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	successor := uuid.MustParse(engine.SuccessorRunID(run.ID.String(), "can"))
	var buffered []engine.Signal
	testwait.Eventually(t, 20*time.Second, "the successor buffers 600 signals", func() bool {
		buffered, _ = s.SignalsBuffered(ctx, tenant.ID, successor)
		return len(buffered) == 600
	})
	if left, _ := s.SignalsBuffered(ctx, tenant.ID, run.ID); len(left) != 0 {
		t.Fatalf("%d signals stayed on the closed run", len(left))
	}
}
