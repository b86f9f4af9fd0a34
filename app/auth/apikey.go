// Package auth holds Ductor's credentials: API keys and the scopes they
// carry. Keys look like dk_<50 base62 characters>: 34 random characters
// (about 202 bits) and a 16-character tag, an HMAC-SHA-256 of the rest
// under the deployment's key secret (a random value the database holds;
// see [Keyring]), so a mistyped, made-up or forged key is refused without
// a database query. Keys made before the tag existed, dk_<40 characters>
// with a CRC-32 checksum, still work (see [Presented.Legacy]). Only the
// key's SHA-256 is stored.
package auth

import (
	"crypto/hmac"
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
	keyPrefix         = "dk_"
	secretLen         = 34 // base62 characters of randomness (≈ 202 bits)
	tagLen            = 16 // base62 characters of HMAC (≈ 95 bits)
	keyLen            = len(keyPrefix) + secretLen + tagLen
	legacyChecksumLen = 6
	legacyKeyLen      = len(keyPrefix) + secretLen + legacyChecksumLen
	visibleChars      = 8
	alphabet          = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	// MinSecretBytes is the shortest key secret a Keyring accepts.
	MinSecretBytes = 16
)

// ErrMalformedKey is returned for a string that cannot be a Ductor key.
var ErrMalformedKey = errors.New("malformed API key")

// Key is a newly generated API key. Secret is shown once and never stored.
type Key struct {
	Secret string
	Prefix string
	Hash   []byte
}

// Keyring makes and checks keys with the deployment's key secret. The
// secret is not a credential: it only lets a process refuse keys that no
// process of the deployment made before it looks them up.
type Keyring struct{ secret []byte }

// NewKeyring returns a keyring for the secret, of at least MinSecretBytes.
func NewKeyring(secret []byte) (*Keyring, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("API key secret is %d bytes, want at least %d", len(secret), MinSecretBytes)
	}
	return &Keyring{secret: slices.Clone(secret)}, nil
}

// NewKey generates a key from crypto/rand.
func (k *Keyring) NewKey() (Key, error) {
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
	secret := body + k.tag(body)
	return Key{Secret: secret, Prefix: PrefixOf(secret), Hash: HashKey(secret)}, nil
}

// Presented is a key that passed its checks, ready to look up.
type Presented struct {
	Hash []byte
	// Legacy is a key of the old format, whose CRC-32 checksum anyone can
	// compute: only a lookup tells a forged one.
	Legacy bool
}

// Check checks a presented key's shape and tag (or legacy checksum)
// without any I/O and returns its hash for lookup.
func (k *Keyring) Check(s string) (Presented, error) {
	if !strings.HasPrefix(s, keyPrefix) || len(s) != keyLen && len(s) != legacyKeyLen {
		return Presented{}, ErrMalformedKey
	}
	for i := len(keyPrefix); i < len(s); i++ {
		if !strings.ContainsRune(alphabet, rune(s[i])) {
			return Presented{}, ErrMalformedKey
		}
	}
	body := s[:len(keyPrefix)+secretLen]
	if len(s) == legacyKeyLen {
		if legacyChecksum(body) != s[len(body):] {
			return Presented{}, ErrMalformedKey
		}
		return Presented{Hash: HashKey(s), Legacy: true}, nil
	}
	if !hmac.Equal([]byte(k.tag(body)), []byte(s[len(body):])) {
		return Presented{}, ErrMalformedKey
	}
	return Presented{Hash: HashKey(s)}, nil
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

// tag is the key body's HMAC-SHA-256, its first tagLen bytes each taken
// to a base62 character.
func (k *Keyring) tag(body string) string {
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte(body))
	sum := m.Sum(nil)
	out := make([]byte, tagLen)
	for i := range out {
		out[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(out)
}

func legacyChecksum(body string) string {
	n := crc32.ChecksumIEEE([]byte(body))
	out := make([]byte, legacyChecksumLen)
	for i := legacyChecksumLen - 1; i >= 0; i-- {
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
	ScopeSecretsWrite     Scope = "secrets:write"
	ScopeSecretsRead      Scope = "secrets:read"
	ScopeUsageRead        Scope = "usage:read"
	ScopeAdmin            Scope = "admin"
)

// AllScopes lists every scope, in a stable order.
var AllScopes = []Scope{
	ScopeRunsWrite, ScopeRunsRead, ScopeSignalsWrite, ScopeEventsWrite,
	ScopeDefinitionsWrite, ScopeDefinitionsRead, ScopeApprovalsWrite,
	ScopeTasksWork, ScopeSchedulesWrite, ScopeSchedulesRead, ScopeWebhooksWrite, ScopeWebhooksRead,
	ScopeSecretsWrite, ScopeSecretsRead, ScopeUsageRead, ScopeAdmin,
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
