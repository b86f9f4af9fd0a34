package subscriptions_test

import (
	"testing"
	"time"

	"github.com/ductor/ductor/app/subscriptions"
)

// The Standard Webhooks libraries' test vector (the specification's
// example, which the official libraries test against): Ductor's signer
// produces the same headers.
func TestHeadersMatchTheStandardWebhooksVector(t *testing.T) {
	t.Parallel()
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		body   = `{"test": 2432232314}`
		sig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	h := subscriptions.Headers(id, time.Unix(1614265330, 0), []byte(body), secret)
	if h.Get("webhook-id") != id || h.Get("webhook-timestamp") != "1614265330" || h.Get("webhook-signature") != sig {
		t.Fatalf("headers = %v, want signature %s", h, sig)
	}
	// During a rotation's grace both secrets sign, space-separated.
	h = subscriptions.Headers(id, time.Unix(1614265330, 0), []byte(body), "whsec_"+"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", secret)
	if got := h.Get("webhook-signature"); len(got) < len(sig)*2 || got[len(got)-len(sig):] != sig {
		t.Errorf("rotated signatures = %q", got)
	}
}
