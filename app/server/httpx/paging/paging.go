// Package paging pages the server's lists with opaque cursors. A keyed
// list is kept in order of a unique key (a definition's key, a
// schedule's or webhook's id); a page of it is read by asking the store
// for one item more than the page holds, to learn whether the page
// beyond exists, and the next page starts after the page's last key.
//
// The cursor is the key in URL-safe base64: opaque to callers, who pass
// back what they were given, and no secret. The runs list, kept newest
// first and paged both ways, uses a time cursor (EncodeTime, DecodeTime).
package paging

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

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

// A time cursor points into a list kept newest first by (time, id): at
// an item, to read the older items before it, or, marked newer, the
// newer ones after it. It is the item's time in microseconds and its id,
// "n:"-prefixed when newer, in URL-safe base64.

// EncodeTime is the cursor of the page beside the item at (at, id):
// older than it, or newer when newer is set.
func EncodeTime(at time.Time, id uuid.UUID, newer bool) string {
	raw := fmt.Sprintf("%d:%s", at.UnixMicro(), id)
	if newer {
		raw = "n:" + raw
	}
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeTime reads a cursor EncodeTime made; anything else is refused
// as invalid.
func DecodeTime(cursor string) (at time.Time, id uuid.UUID, newer bool, err error) {
	bad := apperr.New(apperr.Invalid, "malformed cursor")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return time.Time{}, uuid.Nil, false, bad
	}
	rest, newer := strings.CutPrefix(string(raw), "n:")
	ts, sid, ok := strings.Cut(rest, ":")
	micros, err1 := strconv.ParseInt(ts, 10, 64)
	uid, err2 := uuid.Parse(sid)
	if !ok || err1 != nil || err2 != nil {
		return time.Time{}, uuid.Nil, false, bad
	}
	return time.UnixMicro(micros).UTC(), uid, newer, nil
}
