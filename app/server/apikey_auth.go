package server

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

// apiKeyAuth authenticates the bearer key. A key with the wrong shape or
// tag is refused before any database query, and so is a key of the old
// format while no live key has it. Failed authentications are counted per
// client address (see failureLimiter): past the limit the address gets
// 429 with Retry-After, whatever key it sends, until its budget refills.
func apiKeyAuth(s *store.Store, failures *failureLimiter) echo.MiddlewareFunc {
	keys := &keyChecker{store: s}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get(echo.HeaderAuthorization)
			token, ok := strings.CutPrefix(h, "Bearer ")
			if !ok || token == "" {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="ductor"`)
				return apperr.New(apperr.Unauthorized, "missing API key: send Authorization: Bearer dk_…")
			}
			addr := clientAddr(c.Request())
			if err := failures.check(c, addr); err != nil {
				return err
			}
			key, err := keys.authenticate(c.Request().Context(), strings.TrimSpace(token))
			if apperr.Is(err, apperr.Unauthorized) {
				failures.fail(addr)
			}
			if err != nil {
				return err
			}
			c.Set(principalKey, Principal{Key: key})
			return next(c)
		}
	}
}

// keyChecker checks presented keys with the deployment's keyring, loaded
// on first use, and knows whether keys of the old format are still live.
type keyChecker struct {
	store *store.Store

	mu          sync.Mutex
	keyring     *auth.Keyring
	legacyLive  bool
	legacyUntil time.Time // when legacyLive is to be read again
}

// legacyRecheck is how long a live legacy key is believed to stay live.
// None can be made any more, so once there is none that holds for good.
const legacyRecheck = 30 * time.Second

var errBadKey = apperr.New(apperr.Unauthorized, "invalid or revoked API key")

func (k *keyChecker) authenticate(ctx context.Context, token string) (store.APIKey, error) {
	kr, err := k.ring(ctx)
	if err != nil {
		return store.APIKey{}, err
	}
	p, err := kr.Check(token)
	if err != nil {
		return store.APIKey{}, apperr.New(apperr.Unauthorized, "malformed API key")
	}
	if p.Legacy {
		live, err := k.legacy(ctx)
		if err != nil {
			return store.APIKey{}, err
		}
		if !live {
			return store.APIKey{}, errBadKey
		}
	}
	return k.store.APIKeyAuthenticate(ctx, p.Hash)
}

func (k *keyChecker) ring(ctx context.Context) (*auth.Keyring, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keyring != nil {
		return k.keyring, nil
	}
	kr, err := k.store.Keyring(ctx)
	if err != nil {
		return nil, err
	}
	k.keyring = kr
	return kr, nil
}

func (k *keyChecker) legacy(ctx context.Context) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	if !k.legacyUntil.IsZero() && (!k.legacyLive || now.Before(k.legacyUntil)) {
		return k.legacyLive, nil
	}
	live, err := k.store.APIKeyLegacyLive(ctx)
	if err != nil {
		return false, err
	}
	k.legacyLive, k.legacyUntil = live, now.Add(legacyRecheck)
	return live, nil
}
