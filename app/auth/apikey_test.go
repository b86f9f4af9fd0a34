package auth

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func testKeyring(t *testing.T, secret string) *Keyring {
	t.Helper()
	k, err := NewKeyring([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestNewKeyRoundTrip(t *testing.T) {
	t.Parallel()
	kr := testKeyring(t, "0123456789abcdef")
	k, err := kr.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.Secret, "dk_") || len(k.Secret) != keyLen {
		t.Fatalf("key %q: want dk_ prefix and %d characters", k.Secret, keyLen)
	}
	if k.Prefix != k.Secret[:11] {
		t.Fatalf("prefix %q is not the start of the key", k.Prefix)
	}
	p, err := kr.Check(k.Secret)
	if err != nil {
		t.Fatalf("parse own key: %v", err)
	}
	if !bytes.Equal(p.Hash, k.Hash) || p.Legacy {
		t.Fatal("parsed hash differs from generated hash")
	}
}

func TestNewKeyUnique(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	kr := testKeyring(t, "0123456789abcdef")
	for range 200 {
		k, err := kr.NewKey()
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
	kr := testKeyring(t, "0123456789abcdef")
	good, err := kr.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	other, err := testKeyring(t, "another deployment").NewKey()
	if err != nil {
		t.Fatal(err)
	}
	body := good.Secret[:legacyKeyLen-legacyChecksumLen]
	flip := []byte(good.Secret)
	flip[10] = map[bool]byte{true: 'b', false: 'a'}[flip[10] == 'a']
	cases := map[string]string{
		"empty":         "",
		"no prefix":     strings.TrimPrefix(good.Secret, "dk_") + "xyz",
		"short":         good.Secret[:20],
		"long":          good.Secret + "a",
		"bad character": good.Secret[:12] + "-" + good.Secret[13:],
		"typo":          string(flip),
		"wrong tag":     good.Secret[:keyLen-1] + map[bool]string{true: "1", false: "0"}[good.Secret[keyLen-1] == '0'],
		"other secret":  other.Secret,
		"legacy typo":   body[:12] + map[bool]string{true: "b", false: "a"}[body[12] == 'a'] + body[13:] + legacyChecksum(body),
	}
	for name, s := range cases {
		if _, err := kr.Check(s); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("%s: Check(%q) = %v, want ErrMalformedKey", name, s, err)
		}
	}
}

// A key of the old format, with its CRC-32 checksum, still passes, marked
// legacy.
func TestCheckAcceptsLegacyKeys(t *testing.T) {
	t.Parallel()
	kr := testKeyring(t, "0123456789abcdef")
	body := "dk_" + strings.Repeat("a1B2", 8) + "xy"
	legacy := body + legacyChecksum(body)
	p, err := kr.Check(legacy)
	if err != nil || !p.Legacy || !bytes.Equal(p.Hash, HashKey(legacy)) {
		t.Fatalf("Check(legacy) = %+v, %v", p, err)
	}
}

func TestNewKeyringRejectsShortSecrets(t *testing.T) {
	t.Parallel()
	if _, err := NewKeyring([]byte("short")); err == nil {
		t.Fatal("NewKeyring accepted a 5-byte secret")
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
