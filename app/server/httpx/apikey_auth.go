package httpx

import (
	"context"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

// APIKeyAuth authenticates the bearer key (the scheme in any case). A
// key with the wrong shape or tag is refused before any database query,
// and so is a key of the old format while no live key has it. Failed
// authentications are counted per client address and what failed (see
// failureKey): past the budget that failure gets 429 with Retry-After,
// without a lookup, until the budget refills. A key with a valid tag is
// refused only for its own failures, never for others'.
func APIKeyAuth(s *store.Store, failures *FailureLimiter, proxies TrustedProxies) echo.MiddlewareFunc {
	keys := &keyChecker{store: s}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			token, ok := bearerToken(c.Request().Header.Get(echo.HeaderAuthorization))
			if !ok {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="ductor"`)
				return apperr.New(apperr.Unauthorized, "missing API key: send Authorization: Bearer dk_…")
			}
			addr, ctx := proxies.ClientAddr(c.Request()), c.Request().Context()
			p, err := keys.check(ctx, token)
			if apperr.Is(err, apperr.Unauthorized) {
				return failures.refuse(c, "forged "+addr, err)
			} else if err != nil {
				return err
			}
			budget := failureKey(addr, p)
			if err := failures.Check(c, budget); err != nil {
				return err
			}
			key, err := keys.lookup(ctx, p)
			if apperr.Is(err, apperr.Unauthorized) {
				failures.Fail(budget)
			}
			if err != nil {
				return err
			}
			c.Set(principalKey, Principal{Key: key})
			return next(c)
		}
	}
}

// bearerToken reads "Bearer TOKEN"; the scheme is case-insensitive (RFC
// 7235).
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

// failureKey is the budget a presented key's failures spend: its own
// when it has a valid tag (only this deployment makes those, so a client
// can spend no budget but its keys'), and the address's budget for keys
// of the old format, whose checksum anyone can compute.
func failureKey(addr string, p auth.Presented) string {
	if p.Legacy {
		return "legacy " + addr
	}
	return "key " + addr + " " + hex.EncodeToString(p.Hash)
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

// Check checks a key's shape and tag, with no query but the keyring's
// first load.
func (k *keyChecker) check(ctx context.Context, token string) (auth.Presented, error) {
	kr, err := k.ring(ctx)
	if err != nil {
		return auth.Presented{}, err
	}
	p, err := kr.Check(token)
	if err != nil {
		return auth.Presented{}, apperr.New(apperr.Unauthorized, "malformed API key")
	}
	return p, nil
}

// lookup finds the key a checked one is.
func (k *keyChecker) lookup(ctx context.Context, p auth.Presented) (store.APIKey, error) {
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
