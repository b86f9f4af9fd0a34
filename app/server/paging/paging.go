// Package paging pages the server's lists with opaque cursors. A keyed
// list is kept in order of a unique key (a definition's key, a
// schedule's or webhook's id); a page of it is read by asking the store
// for one item more than the page holds, to learn whether the page
// beyond exists, and the next page starts after the page's last key.
//
// The cursor is the key in URL-safe base64: opaque to callers, who pass
// back what they were given, and no secret.
package paging

import (
	"encoding/base64"

	"github.com/ductor/ductor/app/apperr"
)

// Keyed trims items, read with a limit of limit+1, to the page of at
// most limit and gives the cursor of the next page ("": this is the
// last).
func Keyed[T any](items []T, limit int, key func(T) string) ([]T, string) {
	if len(items) <= limit {
		return items, ""
	}
	items = items[:limit]
	return items, EncodeKey(key(items[limit-1]))
}

// EncodeKey is the cursor of the page after key.
func EncodeKey(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key))
}

// DecodeKey reads a cursor EncodeKey made ("": the first page, "");
// anything else is refused as invalid.
func DecodeKey(cursor string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", apperr.New(apperr.Invalid, "malformed cursor")
	}
	return string(raw), nil
}
