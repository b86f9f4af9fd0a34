package paging

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
)

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "k" + strconv.Itoa(i)
	}
	return out
}

func self(s string) string { return s }

// Walking a list page by page visits every item once, in order, and the
// last page has no cursor.
func TestKeyedWalksTheWholeList(t *testing.T) {
	all := keys(7)
	var seen []string
	after, pages := "", 0
	for {
		var rest []string
		for _, k := range all {
			if k > after {
				rest = append(rest, k)
			}
		}
		page, next := Keyed(rest[:min(len(rest), 3+1)], 3, self)
		seen = append(seen, page...)
		pages++
		if next == "" {
			break
		}
		var err error
		if after, err = DecodeKey(next); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(seen, all) || pages != 3 {
		t.Fatalf("walked %v in %d pages, want %v in 3", seen, pages, all)
	}
}

func TestKeyedFullLastPageHasNoCursor(t *testing.T) {
	page, next := Keyed(keys(3), 3, self)
	if len(page) != 3 || next != "" {
		t.Fatalf("page %v next %q, want 3 items and no cursor", page, next)
	}
}

func TestDecodeKeyRefusesAMalformedCursor(t *testing.T) {
	if k, err := DecodeKey(""); err != nil || k != "" {
		t.Fatalf("empty cursor = %q, %v; want the start", k, err)
	}
	_, err := DecodeKey("not base64!")
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code != apperr.Invalid {
		t.Fatalf("malformed cursor: %v, want an invalid error", err)
	}
}

// A time cursor gives back the time (to the microsecond, in UTC), the id
// and the direction it was made with.
func TestTimeCursorRoundTrips(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 891234000, time.FixedZone("x", 3600))
	id := uuid.New()
	for _, newer := range []bool{false, true} {
		gotAt, gotID, gotNewer, err := DecodeTime(EncodeTime(at, id, newer))
		if err != nil || !gotAt.Equal(at) || gotAt.Location() != time.UTC || gotID != id || gotNewer != newer {
			t.Fatalf("round trip of (%s, %s, %v) = (%s, %s, %v), %v", at, id, newer, gotAt, gotID, gotNewer, err)
		}
	}
	for _, bad := range []string{"!", EncodeKey("12:not-a-uuid"), EncodeKey("x:" + id.String()), EncodeKey(id.String())} {
		if _, _, _, err := DecodeTime(bad); err == nil {
			t.Errorf("DecodeTime(%q) took a malformed cursor", bad)
		}
	}
}
