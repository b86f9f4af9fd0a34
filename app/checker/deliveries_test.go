package checker

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// receiverLog is a loopback receiver of several subscriptions (one path
// each) that logs every request and notes any that arrives while another
// of its subscription, or of its delivery, is still being answered.
type receiverLog struct {
	mu       sync.Mutex
	inFlight map[string]int // by path, and by path and webhook-id
	got      map[string]int // requests by path and webhook-id
	overlaps []string
}

func newReceiverLog() *receiverLog {
	return &receiverLog{inFlight: map[string]int{}, got: map[string]int{}}
}

func (r *receiverLog) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	sub, delivery := req.URL.Path, req.URL.Path+" "+req.Header.Get("webhook-id")
	r.mu.Lock()
	r.inFlight[sub]++
	r.inFlight[delivery]++
	if r.inFlight[delivery] > 1 {
		r.overlaps = append(r.overlaps, "delivery "+delivery+" sent twice at once")
	} else if r.inFlight[sub] > 1 {
		r.overlaps = append(r.overlaps, fmt.Sprintf("subscription %s had %d requests in flight", sub, r.inFlight[sub]))
	}
	r.got[delivery]++
	r.mu.Unlock()
	time.Sleep(3 * time.Millisecond) // the receiver's work: it widens the window a second sender would hit, and waits for nothing
	r.mu.Lock()
	r.inFlight[sub]--
	r.inFlight[delivery]--
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiverLog) snapshot() (map[string]int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := make(map[string]int, len(r.got))
	for k, v := range r.got {
		got[k] = v
	}
	return got, slices.Clone(r.overlaps)
}

// checkDeliveries stores bursts of system events in the outbox while
// three worker processes dispatch them and deliver them to four
// subscriptions of a loopback receiver, then returns what broke the
// delivery claim's promises, read from the database and the receiver's
// log: an event not delivered to a subscription it matches (lost), a
// delivery sent more than once or two at once of one subscription
// (claimed by two processes), a delivery whose log has other than one
// attempt, a delivery no event called for, an event left in the outbox.
func checkDeliveries(t *testing.T, unguarded bool) []string {
	t.Helper()
	ctx := context.Background()
	pool, url := testdb.SchemaURL(t)
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	key := strings.Repeat("k", 32)
	box, err := secrets.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	svc := subscriptions.New(subscriptions.Config{Pool: pool, Secrets: box, Allow: LoopbackPrefixes})
	log := newReceiverLog()
	rcv := httptest.NewServer(log)
	t.Cleanup(rcv.Close)

	const runFailed, stepFailed = "ductor.run.failed", "ductor.step.failed"
	subEvents := [][]string{{runFailed}, {"*"}, {stepFailed}, {runFailed, stepFailed}}
	subs := make([]store.Subscription, len(subEvents))
	for i, events := range subEvents {
		c, err := svc.Create(ctx, tenant.ID, subscriptions.Input{URL: fmt.Sprintf("%s/s%d", rcv.URL, i), Events: events})
		if err != nil {
			t.Fatal(err)
		}
		subs[i] = c.Subscription
	}
	for range 3 {
		StartWorker(t, url, WorkerOptions{SecretKey: key, UnguardedClaim: unguarded})
	}

	// Six bursts of twelve events, each burst in one transaction, as a
	// tick that reports several transitions stores them.
	type event struct {
		id   uuid.UUID
		name string
	}
	var events []event
	for burst := range 6 {
		err := s.InTx(ctx, func(tx *store.Store) error {
			for i := range 12 {
				e := event{id: uuid.New(), name: runFailed}
				if i%3 == 0 {
					e.name = stepFailed
				}
				if _, err := tx.SystemEventAdd(ctx, tenant.ID, e.id, e.name, map[string]any{"burst": burst, "i": i}); err != nil {
					return err
				}
				events = append(events, e)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	type pair struct {
		sub   store.Subscription
		path  string
		event event
	}
	var want []pair
	for _, e := range events {
		for i, sub := range subs {
			if slices.Contains(subEvents[i], "*") || slices.Contains(subEvents[i], e.name) {
				want = append(want, pair{sub: sub, path: fmt.Sprintf("/s%d", i), event: e})
			}
		}
	}

	count := func(q string) int {
		var n int
		if err := pool.QueryRow(ctx, q, tenant.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	done := testwait.Until(ctx, 60*time.Second, func() bool {
		return count(`SELECT count(*) FROM system_event_outbox WHERE tenant_id = $1`) == 0 &&
			count(`SELECT count(*) FROM subscription_delivery WHERE tenant_id = $1 AND status <> 'delivered'`) == 0 &&
			count(`SELECT count(*) FROM subscription_delivery WHERE tenant_id = $1`) >= len(want)
	})
	var broken []string
	if !done {
		broken = append(broken, "not every delivery was delivered within 60 s")
	}
	if n := count(`SELECT count(*) FROM system_event_outbox WHERE tenant_id = $1`); n != 0 {
		broken = append(broken, fmt.Sprintf("%d events left in the outbox", n))
	}
	if n := count(`SELECT count(*) FROM subscription_delivery WHERE tenant_id = $1`); n != len(want) {
		broken = append(broken, fmt.Sprintf("%d deliveries, want %d (one per event and subscription it matches)", n, len(want)))
	}
	got, overlaps := log.snapshot()
	broken = append(broken, overlaps...)
	for _, p := range want {
		id := uuid.NewSHA1(p.sub.ID, p.event.id[:])
		var status string
		var attempts, logged int
		err := pool.QueryRow(ctx, `SELECT d.status, d.attempts, (SELECT count(*) FROM subscription_attempt a WHERE a.tenant_id = d.tenant_id AND a.delivery_id = d.id)
			FROM subscription_delivery d WHERE d.tenant_id = $1 AND d.id = $2`, tenant.ID, id).Scan(&status, &attempts, &logged)
		switch {
		case err != nil:
			broken = append(broken, fmt.Sprintf("lost: %s %s for %s: %v", p.event.name, p.event.id, p.path, err))
			continue
		case status != "delivered":
			broken = append(broken, fmt.Sprintf("lost: delivery %s is %s", id, status))
		case attempts != 1 || logged != 1:
			broken = append(broken, fmt.Sprintf("delivery %s claimed %d times, %d attempts logged, want 1 and 1", id, attempts, logged))
		}
		switch n := got[p.path+" "+p.event.id.String()]; {
		case n == 0:
			broken = append(broken, fmt.Sprintf("lost: %s never reached %s", p.event.id, p.path))
		case n > 1:
			broken = append(broken, fmt.Sprintf("%s reached %s %d times", p.event.id, p.path, n))
		}
	}
	return broken
}

// Three processes deliver the outbox's events: each exactly once to
// each subscription it matches, none lost, none claimed by two
// processes, never two at once to one subscription.
func TestDeliveryChecker(t *testing.T) {
	t.Parallel()
	if broken := checkDeliveries(t, false); len(broken) > 0 {
		t.Errorf("%d violations, the first: %s", len(broken), strings.Join(broken[:min(len(broken), 300)], "\n"))
	}
}

// With the claim's lock and guards skipped (the fault switch), the same
// checker finds deliveries claimed by two processes.
func TestDeliveryCheckerFindsAnUnguardedClaim(t *testing.T) {
	t.Parallel()
	broken := checkDeliveries(t, true)
	if len(broken) == 0 {
		t.Fatal("the checker found nothing with the claim unguarded")
	}
	t.Logf("%d violations found with the claim unguarded, e.g. %s", len(broken), broken[0])
}
