package steps

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrDuplicateHandler is returned by [Registry.Register] for a name that
// is already taken.
var ErrDuplicateHandler = errors.New("handler already registered")

// Handler runs one attempt of a task step. It should honour ctx: the
// attempt's deadline and cancellation arrive through it. The value it
// returns must be JSON-marshalable; an error fails the attempt (see
// [Fail] and [Permanent] for codes and retryability).
type Handler func(ctx context.Context, call Call) (any, error)

// Call is what a handler is told about the attempt it runs.
type Call struct {
	TenantID string
	RunID    string
	Node     string
	Attempt  int
	// IdempotencyKey names the logical operation: the same for every
	// automatic retry of the node. Use it to deduplicate side effects.
	IdempotencyKey string
	// Input is the step's evaluated input (its input_expr, or the run's
	// input), as JSON-decoded values.
	Input any
}

// Registry maps handler names to the Go handlers of this process. It is
// safe for concurrent use; handlers are usually registered at start-up.
type Registry struct {
	mu       sync.RWMutex
	handlers map[string]Handler
}

// NewRegistry returns a registry holding the built-in handlers
// (builtin.noop, builtin.echo, builtin.sleep and builtin.fail).
func NewRegistry() *Registry {
	r := &Registry{handlers: make(map[string]Handler)}
	for name, h := range builtins() {
		r.handlers[name] = h
	}
	return r
}

// Register adds a handler under name. A name already registered, an
// empty name or a nil handler is an error.
func (r *Registry) Register(name string, h Handler) error {
	if name == "" || h == nil {
		return fmt.Errorf("register handler %q: name and handler are required", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.handlers[name]; ok {
		return fmt.Errorf("register handler %q: %w", name, ErrDuplicateHandler)
	}
	r.handlers[name] = h
	return nil
}

// Lookup returns the handler registered under name. ok is false when this
// process has none, so a caller can route the task elsewhere (a tenant's
// bridge-SDK worker) before executing it here.
func (r *Registry) Lookup(name string) (h Handler, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h, ok = r.handlers[name]
	return h, ok
}
