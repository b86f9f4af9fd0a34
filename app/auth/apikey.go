// Package auth holds Ductor's credentials: API keys and the scopes they
// carry. Keys look like dk_<40 base62 characters>: 232 random bits and a
// 6-character checksum, so a mistyped or made-up key is refused without a
// database query. Only the key's SHA-256 is stored.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"math/big"
	"slices"
	"strings"
)

const (
	keyPrefix    = "dk_"
	secretLen    = 34 // base62 characters of randomness (≈ 202 bits)
	checksumLen  = 6
	keyLen       = len(keyPrefix) + secretLen + checksumLen
	visibleChars = 8
	alphabet     = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// ErrMalformedKey is returned for a string that cannot be a Ductor key.
var ErrMalformedKey = errors.New("malformed API key")

// Key is a newly generated API key. Secret is shown once and never stored.
type Key struct {
	Secret string
	Prefix string
	Hash   []byte
}

// NewKey generates a key from crypto/rand.
func NewKey() (Key, error) {
	var b strings.Builder
	b.WriteString(keyPrefix)
	max := big.NewInt(int64(len(alphabet)))
	for range secretLen {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return Key{}, fmt.Errorf("generate key: %w", err)
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	body := b.String()
	secret := body + checksum(body)
	return Key{Secret: secret, Prefix: PrefixOf(secret), Hash: HashKey(secret)}, nil
}

// ParseKey checks a presented key's shape and checksum without any I/O and
// returns its hash for lookup.
func ParseKey(s string) ([]byte, error) {
	if len(s) != keyLen || !strings.HasPrefix(s, keyPrefix) {
		return nil, ErrMalformedKey
	}
	for i := len(keyPrefix); i < len(s); i++ {
		if !strings.ContainsRune(alphabet, rune(s[i])) {
			return nil, ErrMalformedKey
		}
	}
	body, sum := s[:keyLen-checksumLen], s[keyLen-checksumLen:]
	if checksum(body) != sum {
		return nil, ErrMalformedKey
	}
	return HashKey(s), nil
}

// HashKey is the stored form of a key.
func HashKey(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// PrefixOf is the visible part of a key, safe to list.
func PrefixOf(secret string) string {
	return secret[:len(keyPrefix)+visibleChars]
}

func checksum(body string) string {
	n := crc32.ChecksumIEEE([]byte(body))
	out := make([]byte, checksumLen)
	for i := checksumLen - 1; i >= 0; i-- {
		out[i] = alphabet[n%uint32(len(alphabet))]
		n /= uint32(len(alphabet))
	}
	return string(out)
}

// Scope is a permission an API key carries.
type Scope string

const (
	ScopeRunsWrite        Scope = "runs:write"
	ScopeRunsRead         Scope = "runs:read"
	ScopeSignalsWrite     Scope = "signals:write"
	ScopeEventsWrite      Scope = "events:write"
	ScopeDefinitionsWrite Scope = "definitions:write"
	ScopeDefinitionsRead  Scope = "definitions:read"
	ScopeApprovalsWrite   Scope = "approvals:write"
	ScopeTasksWork        Scope = "tasks:work"
	ScopeSchedulesWrite   Scope = "schedules:write"
	ScopeSchedulesRead    Scope = "schedules:read"
	ScopeWebhooksWrite    Scope = "webhooks:write"
	ScopeWebhooksRead     Scope = "webhooks:read"
	ScopeAdmin            Scope = "admin"
)

// AllScopes lists every scope, in a stable order.
var AllScopes = []Scope{
	ScopeRunsWrite, ScopeRunsRead, ScopeSignalsWrite, ScopeEventsWrite,
	ScopeDefinitionsWrite, ScopeDefinitionsRead, ScopeApprovalsWrite,
	ScopeTasksWork, ScopeSchedulesWrite, ScopeSchedulesRead, ScopeWebhooksWrite, ScopeWebhooksRead, ScopeAdmin,
}

// ParseScopes validates scope names; none at all means admin.
func ParseScopes(names []string) ([]Scope, error) {
	if len(names) == 0 {
		return []Scope{ScopeAdmin}, nil
	}
	out := make([]Scope, 0, len(names))
	for _, n := range names {
		s := Scope(strings.TrimSpace(n))
		if !slices.Contains(AllScopes, s) {
			return nil, fmt.Errorf("unknown scope %q (known: %s)", n, joinScopes(AllScopes))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Allows reports whether a key holding have may act with need.
func Allows(have []Scope, need Scope) bool {
	return slices.Contains(have, ScopeAdmin) || slices.Contains(have, need)
}

func joinScopes(s []Scope) string {
	names := make([]string, len(s))
	for i, v := range s {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}
