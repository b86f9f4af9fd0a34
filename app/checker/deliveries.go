package checker

import (
	"cmp"
	"net/netip"
	"time"

	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/subscriptions"
)

// Deliveries: with WorkerOptions.SecretKey, workers also send the
// subscriptions' deliveries, each process claiming due ones through the
// claim's lease and SKIP LOCKED, and dispatch the system events of the
// outbox that make them. The delivery checker (deliveries_test.go)
// stores system events from outside, lets several workers deliver them
// to a loopback receiver that logs every request, and then checks from
// the database and that log that every event reached every subscription
// it matches, that no delivery was sent by two processes (nor twice at
// all, since nothing fails), that no subscription ever had two requests
// in flight, and that every delivery's log has exactly the one attempt.
// UnguardedClaim makes the claim skip its lock and its guards: the
// checker must then find deliveries sent twice.

// LoopbackPrefixes are the addresses a checker's receivers listen on,
// which the SSRF guard lets deliveries reach.
var LoopbackPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func (o WorkerOptions) subscriptions() (subscriptions.Config, error) {
	box, err := secrets.NewBox(o.SecretKey)
	if err != nil {
		return subscriptions.Config{}, err
	}
	return subscriptions.Config{
		Secrets: box, Allow: LoopbackPrefixes, UnguardedClaim: o.UnguardedClaim,
		PollEvery: time.Duration(cmp.Or(o.DeliveryPollMS, 5) * float64(time.Millisecond)),
	}, nil
}
