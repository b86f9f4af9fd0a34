package server

import (
	"net/http"
	"sync"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/webhook"
)

// A delivery's failures are counted against its client address and, once
// the webhook is known, the webhook: a client failing at one webhook
// spends no other's budget, and a delivery that verifies is served
// whatever others failed. The checks before the lookup refuse only what
// cannot succeed or cannot be told from a flood without a lookup: a
// delivery to a webhook this process has not found yet, from an address
// that has spent its budget of unknown webhooks, and a delivery to a
// known webhook that is unsigned under every scheme or says its body is
// too large, once that budget is spent.

func unknownHookBudget(addr string) string { return "unknown " + addr }

func hookBudget(addr string, tenant uuid.UUID, id string) string {
	return "hook " + addr + " " + tenant.String() + " " + id
}

// precheck refuses, before any lookup, a delivery whose failure budget
// is spent and that could not succeed or is not known to be addressed
// to a webhook.
func (h hooks) precheck(c echo.Context, addr, slug, id string) error {
	tenant, ok := h.known.get(slug, id)
	if !ok {
		return h.failures.check(c, unknownHookBudget(addr))
	}
	if hopeless(c.Request()) {
		return h.failures.check(c, hookBudget(addr, tenant, id))
	}
	return nil
}

// hopeless reports a delivery that fails whatever its webhook's scheme.
func hopeless(r *http.Request) bool {
	unsigned := !webhook.Signed(webhook.SchemeStandard, r.Header) && !webhook.Signed(webhook.SchemeGitHub, r.Header)
	return unsigned || r.ContentLength > MaxBodyBytes
}

// maxKnownHooks bounds the webhooks remembered as found; past it all are
// forgotten and found again.
const maxKnownHooks = 10_000

// knownHooks remembers the webhooks this process has found, by the path
// they are delivered to, with their tenant. Only a lookup adds one, so a
// flood of made-up paths adds nothing, and a lookup that finds none
// forgets it.
type knownHooks struct {
	mu    sync.Mutex
	hooks map[[2]string]uuid.UUID
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
