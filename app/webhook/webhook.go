// Package webhook verifies inbound webhook deliveries: the Standard
// Webhooks signature (headers webhook-id, webhook-timestamp and
// webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>", a
// secret "whsec_<base64>") and GitHub's X-Hub-Signature-256
// ("sha256=<hex HMAC-SHA256 of the body>", with neither timestamp nor
// signed delivery id). It is pure: the caller passes the time to check
// timestamps against.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Scheme is how deliveries are signed.
type Scheme string

const (
	SchemeStandard Scheme = "standard"
	SchemeGitHub   Scheme = "github"
)

// ParseScheme reads a scheme; empty means standard.
func ParseScheme(s string) (Scheme, error) {
	switch Scheme(s) {
	case "", SchemeStandard:
		return SchemeStandard, nil
	case SchemeGitHub:
		return SchemeGitHub, nil
	}
	return "", fmt.Errorf("scheme must be standard or github, not %q", s)
}

// Tolerance is how far a delivery's timestamp may be from now.
const Tolerance = 5 * time.Minute

// Verification failures.
var (
	ErrMissing      = errors.New("the delivery carries no signature")
	ErrBadSignature = errors.New("no signature matches")
	ErrStale        = errors.New("the delivery's timestamp is more than 5 minutes off")
)

const secretPrefix = "whsec_"

// NewSecret makes a signing secret: "whsec_" and 32 random bytes in
// base64, the form Standard Webhooks libraries take (GitHub takes any
// string, so it is the same).
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Hint is a secret's visible start, to recognise it by.
func Hint(secret string) string { return secret[:min(len(secret), len(secretPrefix)+4)] + "…" }

// key is the HMAC key of a secret: the decoded bytes after whsec_ for
// Standard Webhooks, the string itself for GitHub.
func key(s Scheme, secret string) []byte {
	if s == SchemeStandard {
		if raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix)); err == nil {
			return raw
		}
	}
	return []byte(secret)
}

// Signed reports whether a delivery carries the headers its scheme signs
// with, which can be told before its body is read.
func Signed(s Scheme, h http.Header) bool {
	if s == SchemeGitHub {
		return h.Get("X-Hub-Signature-256") != ""
	}
	return h.Get("webhook-id") != "" && h.Get("webhook-timestamp") != "" && h.Get("webhook-signature") != ""
}

// Verify checks a delivery against any of the secrets (the current one
// and, after a rotation, the previous) and returns its delivery id, the
// signed webhook-id. A GitHub delivery has none: its X-GitHub-Delivery
// is not signed, and the signature has no timestamp, so a captured
// delivery resent with a new X-GitHub-Delivery verifies as well; the
// caller tells deliveries apart by their bodies instead.
func Verify(s Scheme, secrets []string, h http.Header, body []byte, now time.Time) (string, error) {
	if s == SchemeGitHub {
		return "", verifyGitHub(secrets, h.Get("X-Hub-Signature-256"), body)
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sigs := h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return id, ErrMissing
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return id, ErrBadSignature
	}
	if d := now.Sub(time.Unix(secs, 0)); d > Tolerance || d < -Tolerance {
		return id, ErrStale
	}
	for _, secret := range secrets {
		want := SignStandard(secret, id, secs, body)
		for _, sig := range strings.Fields(sigs) {
			if hmac.Equal([]byte(sig), []byte(want)) {
				return id, nil
			}
		}
	}
	return id, ErrBadSignature
}

func verifyGitHub(secrets []string, sig string, body []byte) error {
	if sig == "" {
		return ErrMissing
	}
	for _, secret := range secrets {
		if hmac.Equal([]byte(sig), []byte(SignGitHub(secret, body))) {
			return nil
		}
	}
	return ErrBadSignature
}

// SignStandard is the Standard Webhooks signature of a delivery:
// "v1,<base64 HMAC-SHA256 of id.timestamp.body>".
func SignStandard(secret, id string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, key(SchemeStandard, secret))
	fmt.Fprintf(m, "%s.%d.", id, timestamp)
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// SignGitHub is GitHub's X-Hub-Signature-256 of a body.
func SignGitHub(secret string, body []byte) string {
	m := hmac.New(sha256.New, key(SchemeGitHub, secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}
