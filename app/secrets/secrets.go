// Package secrets seals the secrets Ductor must store and read back (a
// webhook's signing secret, which verifying a delivery needs in full):
// AES-256-GCM under a key derived from DUCTOR_SECRET_KEY with HKDF-SHA256,
// each sealed value bound to what it belongs to (additional data such as
// tenant and webhook id), so a sealed value copied onto another row does
// not open.
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
type Box struct{ aead cipher.AEAD }

// NewBox derives the sealing key from the server's secret key.
func NewBox(secretKey string) (*Box, error) {
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
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
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

// Open decrypts a value Seal made with the same aad.
func (b *Box) Open(sealed []byte, aad string) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != version {
		return nil, ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(aad))
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
