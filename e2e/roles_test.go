package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// A process with the api and coordinator roles but not steps: a task of
// a built-in handler, which only a steps process runs, fails as no_worker
// once its schedule_to_start has passed, naming the handler and the
// queue; and the coordinator deletes expired dashboard sessions.
func TestCoordinatorWithoutStepsRole(t *testing.T) {
	t.Parallel()
	pool, dbURL := testdb.SchemaURL(t)
	env := map[string]string{"DATABASE_URL": dbURL, "DUCTOR_ADDR": "127.0.0.1:0", "DUCTOR_ROLES": "api,coordinator"}
	ductorCLI(t, env, "migrate")
	ctx := context.Background()
	_, err := pool.Exec(ctx, `WITH u AS (INSERT INTO app_user (id, email) VALUES (gen_random_uuid(), 'gone@example.com') RETURNING id)
		INSERT INTO web_session (token_hash, user_id, csrf_token, expires_at) SELECT 'old'::bytea, id, 'c', now() - interval '1 minute' FROM u`)
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, env, "dev")

	id := publishRun(t, p, "lonely", `
key: lonely
steps:
  - ref: t
    type: task
    with: {handler: builtin.echo, schedule_to_start: 2s}
    retry: {max_attempts: 1}
`, map[string]any{})
	// The run as the wait saw it: polling spends the key's rate, so
	// another request at once may be refused.
	run := waitAPIStatus(t, p, id, "failed")
	msg := fmt.Sprint(run)
	if !strings.Contains(msg, "no_worker") || !strings.Contains(msg, `"builtin.echo"`) || !strings.Contains(msg, `queue "steps_interactive"`) {
		t.Fatalf("run = %s, want failed with no_worker naming the handler and queue", msg)
	}

	if !testwait.Until(context.Background(), 30*time.Second, func() bool {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM web_session`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	}) {
		t.Fatal("the expired session is still there after 30 s")
	}
}
