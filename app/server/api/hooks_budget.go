package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/webhook"
)

// A delivery's failures are counted against its client address and, once
// the webhook is known, the webhook: a client failing at one webhook
// spends no other's budget, and a delivery that verifies is served
// whatever others failed. The checks before the lookup refuse only what
// cannot succeed: a delivery to a path where no webhook exists, from an
// address that has spent its budget of unknown webhooks, and a delivery
// to a known webhook that is unsigned under every scheme or says its body
// is too large, once that budget is spent. Which webhooks exist is read
// again, all at once, when an address out of budget names a path not
// known, at most every knownRefreshEvery: a webhook made since may be
// refused for that long.

func unknownHookBudget(addr string) string { return "unknown " + addr }

func hookBudget(addr string, tenant uuid.UUID, id string) string {
	return "hook " + addr + " " + tenant.String() + " " + id
}

// precheck refuses, before any lookup, a delivery whose failure budget
// is spent and that could not succeed.
func (h Hooks) precheck(c echo.Context, addr, slug, id string) error {
	tenant, ok := h.known.get(slug, id)
	if !ok {
		unknown := unknownHookBudget(addr)
		if !h.failures.Spent(unknown) {
			return nil
		}
		if tenant, ok = h.known.reread(c.Request().Context(), h.store, slug, id); !ok {
			return h.failures.Check(c, unknown)
		}
	}
	if hopeless(c.Request()) {
		err := h.failures.Check(c, hookBudget(addr, tenant, id))
		if err != nil {
			h.recorder.count(hookKey{tenant, id}, time.Now()) // reported with the webhook's next refused event
		}
		return err
	}
	return nil
}

// hopeless reports a delivery that fails whatever its webhook's scheme.
func hopeless(r *http.Request) bool {
	unsigned := !webhook.Signed(webhook.SchemeStandard, r.Header) && !webhook.Signed(webhook.SchemeGitHub, r.Header)
	return unsigned || r.ContentLength > httpx.MaxBodyBytes
}

const (
	// maxKnownHooks bounds the webhooks remembered; past it all are
	// forgotten and read again.
	maxKnownHooks = 100_000
	// knownRefreshEvery is how often, at most, the webhooks are read
	// again.
	knownRefreshEvery = 5 * time.Second
)

// knownHooks remembers the webhooks that exist, by the path they are
// delivered to, with their tenant: those this process has found, and
// all of them as read last. Only the database adds one, so a flood of
// made-up paths adds nothing, and a lookup that finds none forgets it.
type knownHooks struct {
	mu    sync.Mutex
	hooks map[[2]string]uuid.UUID
	read  time.Time // when all were read last

	reading sync.Mutex // one reads them at a time
}

// reread reads every webhook again unless that was done less than
// knownRefreshEvery ago, and then says whether the path is one. An error
// reading is no webhook: the lookup it would spare would fail as well.
func (k *knownHooks) reread(ctx context.Context, s *store.Store, slug, id string) (uuid.UUID, bool) {
	k.reading.Lock()
	defer k.reading.Unlock()
	k.mu.Lock()
	fresh := time.Since(k.read) < knownRefreshEvery
	k.mu.Unlock()
	if !fresh {
		if paths, err := s.WebhookPathList(ctx, maxKnownHooks); err == nil {
			k.replace(paths)
		}
	}
	return k.get(slug, id)
}

func (k *knownHooks) replace(paths []store.WebhookPath) {
	m := make(map[[2]string]uuid.UUID, len(paths))
	for _, p := range paths {
		m[[2]string{p.Slug, p.ID}] = p.TenantID
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.hooks, k.read = m, time.Now()
}

func newKnownHooks() *knownHooks { return &knownHooks{hooks: map[[2]string]uuid.UUID{}} }

func (k *knownHooks) get(slug, id string) (uuid.UUID, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t, ok := k.hooks[[2]string{slug, id}]
	return t, ok
}

func (k *knownHooks) add(slug, id string, tenant uuid.UUID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.hooks) >= maxKnownHooks {
		clear(k.hooks)
	}
	k.hooks[[2]string{slug, id}] = tenant
}

func (k *knownHooks) forget(slug, id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.hooks, [2]string{slug, id})
}
