package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/queries"
)

// User is a person who logs in to the dashboard.
type User struct {
	ID          uuid.UUID
	Email       string
	Name        string
	CreatedAt   time.Time
	LastLoginAt *time.Time
}

// Identity is what an OIDC login proves about a person.
type Identity struct {
	Issuer  string
	Subject string
	Email   string // verified
	Name    string
}

// NormalizeEmail lower-cases and trims an email and checks its shape.
func NormalizeEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	at := strings.IndexByte(e, '@')
	if at <= 0 || at == len(e)-1 || strings.ContainsAny(e, " \t\r\n<>") {
		return "", apperr.New(apperr.Invalid, "%q is not an email address", email)
	}
	return e, nil
}

// UserLogin records a login, creating the user at their first one.
func (s *Store) UserLogin(ctx context.Context, id Identity) (User, error) {
	email, err := NormalizeEmail(id.Email)
	if err != nil {
		return User{}, err
	}
	row, err := s.q.UserUpsertLogin(ctx, queries.UserUpsertLoginParams{
		ID: uuid.New(), Email: email, Name: id.Name,
		OidcIssuer: id.Issuer, OidcSubject: id.Subject,
	})
	if err != nil {
		return User{}, fmt.Errorf("record login: %w", err)
	}
	return userFromRow(row), nil
}

// UserEnsure returns the user with the email, creating them if needed.
func (s *Store) UserEnsure(ctx context.Context, email, name string) (User, error) {
	e, err := NormalizeEmail(email)
	if err != nil {
		return User{}, err
	}
	row, err := s.q.UserEnsure(ctx, queries.UserEnsureParams{ID: uuid.New(), Email: e, Name: name})
	if err != nil {
		return User{}, fmt.Errorf("ensure user: %w", err)
	}
	return userFromRow(row), nil
}

// UserGetByID finds a user.
func (s *Store) UserGetByID(ctx context.Context, id uuid.UUID) (User, error) {
	row, err := s.q.UserGetByID(ctx, id)
	if err != nil {
		return User{}, notFound(err, "user")
	}
	return userFromRow(row), nil
}

func userFromRow(r queries.AppUser) User {
	return User{ID: r.ID, Email: r.Email, Name: r.Name, CreatedAt: r.CreatedAt, LastLoginAt: r.LastLoginAt}
}

// DevUserEmail is the person `ductor dev` signs in with its dev login; dev
// makes them owner of the dev tenant.
const DevUserEmail = "dev@localhost"
