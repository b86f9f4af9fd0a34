package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/jsonvalue"
)

// An idempotency key names one request: the same key with the same
// request answers what the first made, and the same key with a different
// request is refused (idempotency_mismatch), as Stripe does, instead of
// silently answering with something the caller did not ask for. A request
// is compared by its hash (RequestHash), stored with what it made.

// RequestHash is the SHA-256 of v's JSON in the value model (object keys
// sorted; see jsonvalue), in hex.
func RequestHash(v any) (string, error) {
	raw, err := jsonvalue.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("hash request: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// checkRequest refuses a request whose hash differs from the one stored
// with what its key made first; a row stored without a hash matches any.
func checkRequest(stored, asked, what string, id uuid.UUID, key string) error {
	if stored == "" || asked == "" || stored == asked {
		return nil
	}
	return apperr.New(apperr.IdempotencyMismatch,
		"idempotency key %q was already used for %s %s, with a different request", key, what, id).
		WithDetails(map[string]string{what + "_id": id.String()})
}
