package httpx

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/runs"
)

// maxCachedSchemas bounds the compiled input schemas kept; the cache
// starts over when it is full.
const maxCachedSchemas = 1024

// NewInputValidator returns the check that trigger input matches a
// definition's input_schema. Each schema is compiled once and kept. An
// input that does not match is a 422 (unprocessable) whose details list
// where, with paths starting at "input".
func NewInputValidator() runs.InputValidator {
	var mu sync.Mutex
	cache := map[[32]byte]*definition.InputValidator{}
	return func(schema []byte, input any) error {
		sum := sha256.Sum256(schema)
		mu.Lock()
		v := cache[sum]
		mu.Unlock()
		if v == nil {
			var err error
			if v, err = definition.NewInputValidator(&definition.Manifest{InputSchema: schema}); err != nil {
				return fmt.Errorf("input schema: %w", err)
			}
			mu.Lock()
			if len(cache) >= maxCachedSchemas {
				clear(cache)
			}
			cache[sum] = v
			mu.Unlock()
		}
		return inputError(v.Validate(input))
	}
}

func inputError(err error) error {
	var ie *definition.InputError
	if !errors.As(err, &ie) {
		return err
	}
	return apperr.New(apperr.Unprocessable, "input does not match the definition's input_schema: %s", ie.Error()).WithDetails(ie.Problems)
}

// MaxReasonLength bounds the reason an operator gives for a cancel.
const MaxReasonLength = 1000

// MaxBodyBytes bounds every request body: definitions are at most 1 MiB,
// so 2 MiB leaves room for the JSON around them.
const MaxBodyBytes = 2 << 20

// MaxFormBytes bounds dashboard form posts.
const MaxFormBytes = 64 << 10
