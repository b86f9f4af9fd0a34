// Package login is Ductor's OIDC relying party: authorization code flow
// with PKCE (S256), state and nonce, on github.com/coreos/go-oidc and
// golang.org/x/oauth2. It keeps no state of its own: Begin returns the
// Attempt the caller stores (server-side) and Finish checks a callback
// against it. go-oidc verifies the ID token's signature, issuer, audience
// and expiry; the nonce is checked here, because go-oidc does not.
package login

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

// Config is the relying party's registration at the provider.
type Config struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is Ductor's callback: BASE_URL/auth/callback.
	RedirectURL string
}

// Provider is a discovered OIDC provider.
type Provider struct {
	issuer     string
	oauth      oauth2.Config
	verifier   *oidc.IDTokenVerifier
	endSession string
}

// Attempt is what a login in flight must remember until its callback.
type Attempt struct {
	State    string
	Nonce    string
	Verifier string // the PKCE code verifier
}

// New discovers the provider (its endpoints and signing keys).
func New(ctx context.Context, cfg Config) (*Provider, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("OIDC discovery at %s: %w", cfg.Issuer, err)
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := p.Claims(&extra); err != nil {
		return nil, fmt.Errorf("OIDC discovery at %s: %w", cfg.Issuer, err)
	}
	return &Provider{
		issuer: cfg.Issuer,
		oauth: oauth2.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
			Endpoint: p.Endpoint(), RedirectURL: cfg.RedirectURL,
			Scopes: []string{oidc.ScopeOpenID, "email", "profile"},
		},
		verifier:   p.Verifier(&oidc.Config{ClientID: cfg.ClientID}),
		endSession: extra.EndSession,
	}, nil
}

// Begin starts a login: the URL to send the browser to and the attempt to
// keep for the callback.
func (p *Provider) Begin() (string, Attempt) {
	a := Attempt{State: auth.NewToken(), Nonce: auth.NewToken(), Verifier: oauth2.GenerateVerifier()}
	u := p.oauth.AuthCodeURL(a.State, oidc.Nonce(a.Nonce), oauth2.S256ChallengeOption(a.Verifier))
	return u, a
}

// Finish checks a callback's state against the attempt, exchanges the code
// with the PKCE verifier, verifies the ID token and its nonce, and returns
// who logged in with the raw ID token (for logout). Every failure is
// Unauthorized.
func (p *Provider) Finish(ctx context.Context, a Attempt, state, code string) (store.Identity, string, error) {
	if !auth.TokensEqual(state, a.State) {
		return store.Identity{}, "", apperr.New(apperr.Unauthorized, "login state does not match: start again")
	}
	if code == "" || a.Verifier == "" || a.Nonce == "" {
		return store.Identity{}, "", apperr.New(apperr.Unauthorized, "incomplete login: start again")
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	tok, err := p.oauth.Exchange(ctx, code, oauth2.VerifierOption(a.Verifier))
	if err != nil {
		return store.Identity{}, "", apperr.Wrap(err, apperr.Unauthorized, "the identity provider refused the login code")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return store.Identity{}, "", apperr.New(apperr.Unauthorized, "the identity provider sent no ID token")
	}
	id, err := p.verify(ctx, raw, a.Nonce)
	return id, raw, err
}

func (p *Provider) verify(ctx context.Context, raw, nonce string) (store.Identity, error) {
	tok, err := p.verifier.Verify(ctx, raw)
	if err != nil {
		return store.Identity{}, apperr.Wrap(err, apperr.Unauthorized, "invalid ID token")
	}
	if !auth.TokensEqual(tok.Nonce, nonce) {
		return store.Identity{}, apperr.New(apperr.Unauthorized, "ID token nonce does not match the login")
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified *bool  `json:"email_verified"`
		Name          string `json:"name"`
	}
	if err := tok.Claims(&claims); err != nil {
		return store.Identity{}, apperr.Wrap(err, apperr.Unauthorized, "invalid ID token claims")
	}
	if claims.Email == "" || claims.EmailVerified == nil || !*claims.EmailVerified {
		return store.Identity{}, apperr.New(apperr.Unauthorized, "the identity provider did not vouch for an email address")
	}
	return store.Identity{Issuer: tok.Issuer, Subject: tok.Subject, Email: claims.Email, Name: claims.Name}, nil
}

// LogoutURL is where to send the browser to end its session at the
// provider (RP-initiated logout), or "" when the provider offers none.
func (p *Provider) LogoutURL(idToken, postLogout string) string {
	if p.endSession == "" {
		return ""
	}
	q := url.Values{"client_id": {p.oauth.ClientID}, "post_logout_redirect_uri": {postLogout}}
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	u, err := url.Parse(p.endSession)
	if err != nil {
		return ""
	}
	for k, v := range u.Query() {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	return u.String()
}
