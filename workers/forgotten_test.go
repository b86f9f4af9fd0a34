package workers_test

import (
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/workers"
)

// A delivery stored without the tick job that would drain it (what a
// failover to an asynchronous standby can leave: the signal replicated,
// its run's tick job not) is found by the sweep once it is older than the
// rescue window, and its run is ticked: the signal is consumed and the
// run ends, long before the signal step's timeout.
func TestASignalWhoseTickWasLostIsDrainedBySweep(t *testing.T) {
	t.Parallel()
	b := setupWith(t, func(c *workers.Config) { c.RescueWindow = 200 * time.Millisecond })
	b.publishYAML(t, `
key: waits
output_expr: steps.go.output
steps:
  - {ref: go, type: signal, with: {name: go, timeout: 1h}}
`)
	id := b.start(t, "waits", nil)
	b.waitRunStatus(t, id, engine.RunWaiting)

	// Every tick job of this run is lost as it is stored with the signal.
	if _, err := b.pool.Exec(b.ctx, `
		CREATE FUNCTION lose_tick() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM river_job WHERE id = NEW.id; RETURN NULL; END $$;
		CREATE TRIGGER lose_tick AFTER INSERT ON river_job FOR EACH ROW
			WHEN (NEW.kind = 'ductor.tick' AND NEW.args->>'run_id' = '`+id.String()+`') EXECUTE FUNCTION lose_tick();`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.coord.Runs.Signal(b.ctx, b.tenant.ID, id, engine.Signal{RequestID: "r1", Name: "go", Payload: map[string]any{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	var jobs int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM river_job WHERE kind = 'ductor.tick' AND args->>'run_id' = $1 AND state <> 'completed'`, id.String()).Scan(&jobs); err != nil || jobs != 0 {
		t.Fatalf("%d tick jobs of the run are left (%v): the fault did not take", jobs, err)
	}
	if _, err := b.pool.Exec(b.ctx, `DROP TRIGGER lose_tick ON river_job`); err != nil {
		t.Fatal(err)
	}
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunSucceeded {
		t.Fatalf("the run ended %s", run.Status)
	}
}
