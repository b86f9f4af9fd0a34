package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/queries"
)

// SessionTTL is how long a dashboard session lasts after login.
const SessionTTL = 7 * 24 * time.Hour

// LoginTTL is how long an OIDC login may take between redirect and callback.
const LoginTTL = 10 * time.Minute

// Session is a logged-in browser. The token is in its cookie; the store
// keeps only the token's hash.
type Session struct {
	User      User
	CSRFToken string
	IDToken   string
	ExpiresAt time.Time
}

// SessionCreate starts a session for the user and returns its token, the
// cookie's only copy. It lasts SessionTTL by the database's clock;
// ExpiredLoginsDelete removes it after that.
func (s *Store) SessionCreate(ctx context.Context, userID uuid.UUID, idToken string) (string, error) {
	token := auth.NewToken()
	_, err := s.q.WebSessionCreate(ctx, queries.WebSessionCreateParams{
		TokenHash: auth.HashToken(token), UserID: userID, CsrfToken: auth.NewToken(),
		IDToken: idToken, TtlSeconds: SessionTTL.Seconds(),
	})
	if err != nil {
		return "", fmt.Errorf("create session: %w", err)
	}
	return token, nil
}

// SessionGet finds the live session of a token; an unknown or expired one
// is Unauthorized.
func (s *Store) SessionGet(ctx context.Context, token string) (Session, error) {
	row, err := s.q.WebSessionGet(ctx, auth.HashToken(token))
	if err != nil {
		if apperr.Is(notFound(err, "session"), apperr.NotFound) {
			return Session{}, apperr.New(apperr.Unauthorized, "not logged in")
		}
		return Session{}, fmt.Errorf("look up session: %w", err)
	}
	return Session{
		User:      userFromRow(row.AppUser),
		CSRFToken: row.WebSession.CsrfToken, IDToken: row.WebSession.IDToken,
		ExpiresAt: row.WebSession.ExpiresAt,
	}, nil
}

// SessionDelete ends a session; ending an unknown one is not an error.
func (s *Store) SessionDelete(ctx context.Context, token string) error {
	_, err := s.q.WebSessionDelete(ctx, auth.HashToken(token))
	if err != nil && !apperr.Is(notFound(err, "session"), apperr.NotFound) {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// LoginAttempt is an OIDC login in flight.
type LoginAttempt struct {
	State, Nonce, Verifier, ReturnTo string
}

// LoginAttemptCreate stores an attempt under the hash of the browser's
// login token, for LoginTTL by the database's clock; ExpiredLoginsDelete
// removes it after that.
func (s *Store) LoginAttemptCreate(ctx context.Context, token string, a LoginAttempt) error {
	err := s.q.LoginAttemptCreate(ctx, queries.LoginAttemptCreateParams{
		TokenHash: auth.HashToken(token), State: a.State, Nonce: a.Nonce,
		Verifier: a.Verifier, ReturnTo: a.ReturnTo, TtlSeconds: LoginTTL.Seconds(),
	})
	if err != nil {
		return fmt.Errorf("store login attempt: %w", err)
	}
	return nil
}

// LoginAttemptTake removes and returns the live attempt of a token: an
// attempt is used once. Unknown or expired is Unauthorized.
func (s *Store) LoginAttemptTake(ctx context.Context, token string) (LoginAttempt, error) {
	row, err := s.q.LoginAttemptTake(ctx, auth.HashToken(token))
	if err != nil {
		if apperr.Is(notFound(err, "login"), apperr.NotFound) {
			return LoginAttempt{}, apperr.New(apperr.Unauthorized, "no login in progress: start again")
		}
		return LoginAttempt{}, fmt.Errorf("take login attempt: %w", err)
	}
	if !row.Live {
		return LoginAttempt{}, apperr.New(apperr.Unauthorized, "the login took too long: start again")
	}
	return LoginAttempt{State: row.State, Nonce: row.Nonce, Verifier: row.Verifier, ReturnTo: row.ReturnTo}, nil
}

// ExpiredLoginsDelete deletes up to limit expired sessions and up to
// limit expired login attempts, by the database's clock, and returns how
// many of each it deleted.
func (s *Store) ExpiredLoginsDelete(ctx context.Context, limit int) (sessions, attempts int, err error) {
	n, err := s.q.WebSessionDeleteExpired(ctx, int32(limit))
	if err != nil {
		return 0, 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	m, err := s.q.LoginAttemptDeleteExpired(ctx, int32(limit))
	if err != nil {
		return int(n), 0, fmt.Errorf("delete expired login attempts: %w", err)
	}
	return int(n), int(m), nil
}
