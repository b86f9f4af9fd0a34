package webhook

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// The Standard Webhooks specification's example delivery.
const (
	specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTS     = 1614265330
	specBody   = `{"test": 2432232314}`
	specSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func specHeaders(sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", specID)
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", sig)
	return h
}

func TestStandardWebhooksVector(t *testing.T) {
	t.Parallel()
	if got := SignStandard(specSecret, specID, specTS, []byte(specBody)); got != specSig {
		t.Fatalf("signature = %s, want the specification's %s", got, specSig)
	}
	now := time.Unix(specTS+60, 0)
	id, err := Verify(SchemeStandard, []string{specSecret}, specHeaders("v1,bm9wZQ== "+specSig), []byte(specBody), now)
	if err != nil || id != specID {
		t.Fatalf("verify = %q, %v", id, err)
	}
	cases := map[string]struct {
		h    http.Header
		body string
		now  time.Time
		want error
	}{
		"tampered body":   {specHeaders(specSig), `{"test": 1}`, now, ErrBadSignature},
		"forged":          {specHeaders("v1,Zm9yZ2Vk"), specBody, now, ErrBadSignature},
		"no signature":    {specHeaders(""), specBody, now, ErrMissing},
		"too old":         {specHeaders(specSig), specBody, time.Unix(specTS+301, 0), ErrStale},
		"from the future": {specHeaders(specSig), specBody, time.Unix(specTS-301, 0), ErrStale},
	}
	for name, c := range cases {
		if _, err := Verify(SchemeStandard, []string{specSecret}, c.h, []byte(c.body), c.now); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if _, err := Verify(SchemeStandard, []string{NewSecret(), specSecret}, specHeaders(specSig), []byte(specBody), now); err != nil {
		t.Errorf("the previous secret after a rotation: %v", err)
	}
}

// GitHub's documented example: secret "It's a Secret to Everybody",
// payload "Hello, World!".
func TestGitHubSignature(t *testing.T) {
	t.Parallel()
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got := SignGitHub("It's a Secret to Everybody", []byte("Hello, World!")); got != want {
		t.Fatalf("signature = %s, want GitHub's %s", got, want)
	}
	h := http.Header{}
	h.Set("X-Hub-Signature-256", want)
	h.Set("X-GitHub-Delivery", "d-1")
	id, err := Verify(SchemeGitHub, []string{"It's a Secret to Everybody"}, h, []byte("Hello, World!"), time.Time{})
	if err != nil || id != "" {
		t.Errorf("verify = %q, %v; want no delivery id (X-GitHub-Delivery is not signed)", id, err)
	}
	if _, err := Verify(SchemeGitHub, []string{"other"}, h, []byte("Hello, World!"), time.Time{}); !errors.Is(err, ErrBadSignature) {
		t.Errorf("wrong secret: %v", err)
	}
}
