package workers_test

import (
	"context"
	"testing"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

// Expired sessions and login attempts are deleted, more than a batch of
// them, by the database's clock; live ones stay and still work.
func TestExpiredLoginsAreDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.Schema(t)
	s := store.New(pool)
	u, err := s.UserEnsure(ctx, "e@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	live, err := s.SessionCreate(ctx, u.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.LoginAttemptCreate(ctx, "live-attempt", store.LoginAttempt{State: "s"}); err != nil {
		t.Fatal(err)
	}
	expired := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO web_session (token_hash, user_id, csrf_token, expires_at)
		  SELECT sha256(('old-' || i)::bytea), $1, 'c', now() - interval '1 second' FROM generate_series(1, 1500) i`, []any{u.ID}},
		{`INSERT INTO login_attempt (token_hash, state, nonce, verifier, expires_at)
		  SELECT sha256(('old-' || i)::bytea), 's', 'n', 'v', now() - interval '1 second' FROM generate_series(1, 1200) i`, nil},
	}
	for _, e := range expired {
		if _, err := pool.Exec(ctx, e.sql, e.args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := workers.ExpiredLoginsOnce(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var sessions, attempts int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM web_session), (SELECT count(*) FROM login_attempt)`).Scan(&sessions, &attempts); err != nil {
		t.Fatal(err)
	}
	if sessions != 1 || attempts != 1 {
		t.Fatalf("%d sessions and %d login attempts left, want the live one of each", sessions, attempts)
	}
	if _, err := s.SessionGet(ctx, live); err != nil {
		t.Errorf("the live session: %v", err)
	}
	if _, err := s.LoginAttemptTake(ctx, "live-attempt"); err != nil {
		t.Errorf("the live login attempt: %v", err)
	}
}
