package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
)

// NewToken returns 256 random bits, URL-safe: session cookies, CSRF
// tokens, OIDC state and nonce.
func NewToken() string {
	return rand.Text() + rand.Text()
}

// HashToken is the stored form of a session or login token.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// TokensEqual compares two tokens in constant time; empty never matches.
func TokensEqual(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
