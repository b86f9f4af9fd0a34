// Package secrets seals the secrets Ductor must store and read back (a
// webhook's signing secret, which verifying a delivery needs in full):
// AES-256-GCM under a key derived from DUCTOR_SECRET_KEY with HKDF-SHA256,
// each sealed value bound to what it belongs to (additional data such as
// tenant and webhook id), so a sealed value copied onto another row does
// not open.
//
// A box may hold a previous key besides the current one
// (DUCTOR_SECRET_KEY_PREVIOUS): values sealed under it still open, and
// [Box.Reseal] seals them again under the current key, so that the
// previous key can be dropped once every stored value is re-sealed
// (`ductor secrets rekey`).
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// MinKeyLength is the shortest DUCTOR_SECRET_KEY accepted.
const MinKeyLength = 32

// version is the first byte of a sealed value: the key derivation and
// cipher it was sealed with.
const version = 1

// ErrOpen: a sealed value is damaged, was sealed under another key, or
// belongs to something else.
var ErrOpen = errors.New("secret does not open")

// Box seals and opens stored secrets.
type Box struct {
	aead cipher.AEAD
	prev cipher.AEAD // nil without a previous key
}

// NewBox derives the sealing key from the server's secret key.
func NewBox(secretKey string) (*Box, error) {
	aead, err := newAEAD(secretKey)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// NewKeyring is NewBox with a previous key, accepted for opening only;
// an empty previous key is none.
func NewKeyring(current, previous string) (*Box, error) {
	b, err := NewBox(current)
	if err != nil || previous == "" {
		return b, err
	}
	if previous == current {
		return nil, errors.New("the previous secret key is the current one")
	}
	if b.prev, err = newAEAD(previous); err != nil {
		return nil, fmt.Errorf("previous key: %w", err)
	}
	return b, nil
}

// HasPrevious reports whether the box holds a previous key.
func (b *Box) HasPrevious() bool { return b.prev != nil }

func newAEAD(secretKey string) (cipher.AEAD, error) {
	if len(secretKey) < MinKeyLength {
		return nil, fmt.Errorf("the secret key must be at least %d characters", MinKeyLength)
	}
	key, err := hkdf.Key(sha256.New, []byte(secretKey), nil, "ductor stored secrets v1", 32)
	if err != nil {
		return nil, fmt.Errorf("derive the sealing key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Seal encrypts plain, bound to aad.
func (b *Box) Seal(plain []byte, aad string) []byte {
	out := make([]byte, 1, 1+b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	out[0] = version
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand never fails on supported platforms
	out = append(out, nonce...)
	return b.aead.Seal(out, nonce, plain, []byte(aad))
}

// Open decrypts a value Seal made with the same aad, under the current
// key or the previous one.
func (b *Box) Open(sealed []byte, aad string) ([]byte, error) {
	plain, err := open(b.aead, sealed, aad)
	if err != nil && b.prev != nil {
		return open(b.prev, sealed, aad)
	}
	return plain, err
}

// Reseal opens sealed and, when it was sealed under the previous key,
// seals it again under the current one: resealed is false (and out is
// sealed itself) when it already opens under the current key.
func (b *Box) Reseal(sealed []byte, aad string) (out []byte, resealed bool, err error) {
	if _, err := open(b.aead, sealed, aad); err == nil {
		return sealed, false, nil
	}
	if b.prev == nil {
		return nil, false, ErrOpen
	}
	plain, err := open(b.prev, sealed, aad)
	if err != nil {
		return nil, false, err
	}
	return b.Seal(plain, aad), true, nil
}

func open(aead cipher.AEAD, sealed []byte, aad string) ([]byte, error) {
	n := aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != version {
		return nil, ErrOpen
	}
	plain, err := aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(aad))
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
