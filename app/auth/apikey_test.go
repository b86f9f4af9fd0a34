package auth

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestNewKeyRoundTrip(t *testing.T) {
	t.Parallel()
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.Secret, "dk_") || len(k.Secret) != keyLen {
		t.Fatalf("key %q: want dk_ prefix and %d characters", k.Secret, keyLen)
	}
	if k.Prefix != k.Secret[:11] {
		t.Fatalf("prefix %q is not the start of the key", k.Prefix)
	}
	hash, err := ParseKey(k.Secret)
	if err != nil {
		t.Fatalf("parse own key: %v", err)
	}
	if !bytes.Equal(hash, k.Hash) {
		t.Fatal("parsed hash differs from generated hash")
	}
}

func TestNewKeyUnique(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 200 {
		k, err := NewKey()
		if err != nil {
			t.Fatal(err)
		}
		if seen[k.Secret] {
			t.Fatalf("duplicate key %q", k.Secret)
		}
		seen[k.Secret] = true
	}
}

func TestParseKeyRejectsMalformed(t *testing.T) {
	t.Parallel()
	good, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	flip := []byte(good.Secret)
	flip[10] = map[bool]byte{true: 'b', false: 'a'}[flip[10] == 'a']
	cases := map[string]string{
		"empty":          "",
		"no prefix":      strings.TrimPrefix(good.Secret, "dk_") + "xyz",
		"short":          good.Secret[:20],
		"long":           good.Secret + "a",
		"bad character":  good.Secret[:12] + "-" + good.Secret[13:],
		"typo":           string(flip),
		"wrong checksum": good.Secret[:keyLen-1] + map[bool]string{true: "1", false: "0"}[good.Secret[keyLen-1] == '0'],
	}
	for name, s := range cases {
		if _, err := ParseKey(s); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("%s: ParseKey(%q) = %v, want ErrMalformedKey", name, s, err)
		}
	}
}

func TestParseScopes(t *testing.T) {
	t.Parallel()
	got, err := ParseScopes(nil)
	if err != nil || len(got) != 1 || got[0] != ScopeAdmin {
		t.Fatalf("no scopes = %v, %v; want [admin]", got, err)
	}
	got, err = ParseScopes([]string{"runs:write", "runs:read", "runs:write"})
	if err != nil || len(got) != 2 {
		t.Fatalf("ParseScopes = %v, %v; want two scopes", got, err)
	}
	if _, err := ParseScopes([]string{"runs:delete"}); err == nil || !strings.Contains(err.Error(), "runs:delete") {
		t.Fatalf("unknown scope error = %v", err)
	}
}

func TestAllows(t *testing.T) {
	t.Parallel()
	if !Allows([]Scope{ScopeAdmin}, ScopeTasksWork) {
		t.Error("admin must allow every scope")
	}
	if !Allows([]Scope{ScopeRunsRead}, ScopeRunsRead) {
		t.Error("a scope must allow itself")
	}
	if Allows([]Scope{ScopeRunsRead}, ScopeRunsWrite) {
		t.Error("runs:read must not allow runs:write")
	}
}
