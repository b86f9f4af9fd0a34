package httpx

import (
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
)

// maxIdempotencyKey bounds an idempotency key's length, as Stripe does.
const maxIdempotencyKey = 255

// IdempotencyKey is a request's idempotency key: the standard
// Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header) or
// the body's idempotency_key, which must agree when both are sent.
func IdempotencyKey(c echo.Context, body string) (string, error) {
	header := c.Request().Header.Get("Idempotency-Key")
	key := body
	switch {
	case header != "" && body != "" && header != body:
		return "", apperr.New(apperr.Invalid, "the Idempotency-Key header and the body's idempotency_key differ: send one, or the same in both")
	case header != "":
		key = header
	}
	if len(key) > maxIdempotencyKey {
		return "", apperr.New(apperr.Invalid, "the idempotency key is %d characters long, over the limit of %d", len(key), maxIdempotencyKey)
	}
	return key, nil
}
