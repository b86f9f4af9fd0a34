package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/puddle/v2"

	"github.com/ductor/ductor/app/store"
)

// A cancelling tick gives each cancelled attempt its result
// (store.AttemptCancel), so that no worker starts it from then on and its
// row is closed whatever becomes of its worker, and, in the same
// transaction, notifies cancelChannel with the attempt: every steps
// process listens (stepCancels) and ends the context of that attempt
// alone if it runs it. River's own cancel cannot do that for a step that
// shares its River job with others (a step batch: it would end the whole
// job, every step of the batch with it), and for a step with a job of its
// own it comes through River's notifications, later than this one. A step
// worker registers its attempts and waits until the listener listens
// before it records their start, so that a cancel committed after a start
// always reaches the attempt: if the cancel committed first, the start
// finds the attempt with its result and refuses it; if after, its
// notification comes to a listener that already listens. Notifications
// sent while the listener reconnects are lost, so on reconnecting it ends
// the attempts it runs that have a result meanwhile.

// cancelChannel is the notification channel of cancelled attempts; the
// payload is a cancelNote.
const cancelChannel = "ductor_step_cancels"

// cancelNote names a cancelled attempt.
type cancelNote struct {
	TenantID   uuid.UUID `json:"t"`
	RunID      uuid.UUID `json:"r"`
	Node       string    `json:"n"`
	Generation int       `json:"g"`
	Attempt    int       `json:"a"`
}

func (n cancelNote) key() store.AttemptKey {
	return store.AttemptKey{Run: store.RunKey{TenantID: n.TenantID, ID: n.RunID}, Node: n.Node, Generation: n.Generation, Attempt: n.Attempt}
}

// notifyCancel tells the steps processes, once tx commits, that the
// attempt is cancelled.
func notifyCancel(ctx context.Context, tx pgx.Tx, k store.AttemptKey) error {
	raw, err := json.Marshal(cancelNote{TenantID: k.Run.TenantID, RunID: k.Run.ID, Node: k.Node, Generation: k.Generation, Attempt: k.Attempt})
	if err != nil {
		return fmt.Errorf("encode cancel: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, cancelChannel, string(raw)); err != nil {
		return fmt.Errorf("notify cancel: %w", err)
	}
	return nil
}

// errAttemptCancelled is the cause that ends a cancelled attempt's
// context.
var errAttemptCancelled = errors.New("the step was cancelled")

// listenWait bounds how long a batch waits for the listener before it is
// offered again.
const listenWait = 10 * time.Second

// stepCancels are the attempts this process runs, by attempt, and
// the listener that ends them when they are cancelled. The listener starts
// with the first step and runs until Close.
type stepCancels struct {
	c         *deps
	mu        sync.Mutex
	running   map[store.AttemptKey]map[*context.CancelCauseFunc]struct{}
	listening chan struct{} // closed while the listener listens
	started   bool
	stop      context.CancelFunc
	stopped   chan struct{}
}

func newStepCancels(c *deps) *stepCancels {
	return &stepCancels{c: c, running: map[store.AttemptKey]map[*context.CancelCauseFunc]struct{}{}, listening: make(chan struct{})}
}

// watch registers attempts, each with a context derived from ctx that
// ends when the attempt is cancelled, and waits until the listener
// listens. Each attempt's release func unregisters it.
func (s *stepCancels) watch(ctx context.Context, keys []store.AttemptKey) ([]context.Context, []func(), error) {
	s.mu.Lock()
	s.startLocked()
	ctxs, releases := s.registerLocked(ctx, keys)
	ready := s.listening
	s.mu.Unlock()
	t := time.NewTimer(listenWait)
	defer t.Stop()
	select {
	case <-ready:
		return ctxs, releases, nil
	case <-ctx.Done():
	case <-t.C:
	}
	for _, release := range releases {
		release()
	}
	return nil, nil, errors.New("not listening for cancelled steps")
}

// listeningNow tells whether the listener listens at this moment (and
// starts it if nothing did yet). A local step is run only then: its
// transaction cannot wait for the listener.
func (s *stepCancels) listeningNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startLocked()
	select {
	case <-s.listening:
		return true
	default:
		return false
	}
}

// watchNow is watch without the wait, for attempts whose start is not
// committed yet: a cancel can only follow the commit, and a listener that
// reconnects meanwhile ends the registered attempts that have a result.
func (s *stepCancels) watchNow(ctx context.Context, keys []store.AttemptKey) ([]context.Context, []func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startLocked()
	return s.registerLocked(ctx, keys)
}

// startLocked starts the listener the first time; s.mu is held.
func (s *stepCancels) startLocked() {
	if !s.started {
		s.started = true
		run, stop := context.WithCancel(context.Background())
		s.stop, s.stopped = stop, make(chan struct{})
		go s.run(run)
	}
}

// registerLocked registers attempts; s.mu is held.
func (s *stepCancels) registerLocked(ctx context.Context, keys []store.AttemptKey) ([]context.Context, []func()) {
	ctxs, releases := make([]context.Context, len(keys)), make([]func(), len(keys))
	for i, k := range keys {
		mctx, cancel := context.WithCancelCause(ctx)
		f := &cancel
		if s.running[k] == nil {
			s.running[k] = map[*context.CancelCauseFunc]struct{}{}
		}
		s.running[k][f] = struct{}{}
		ctxs[i] = mctx
		releases[i] = func() {
			s.mu.Lock()
			delete(s.running[k], f)
			if len(s.running[k]) == 0 {
				delete(s.running, k)
			}
			s.mu.Unlock()
			cancel(nil)
		}
	}
	return ctxs, releases
}

// cancel ends the context of every registered run of the attempts.
func (s *stepCancels) cancel(keys ...store.AttemptKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		for f := range s.running[k] {
			(*f)(errAttemptCancelled)
		}
	}
}

func (s *stepCancels) registered() []store.AttemptKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]store.AttemptKey, 0, len(s.running))
	for k := range s.running {
		keys = append(keys, k)
	}
	return keys
}

// close stops the listener.
func (s *stepCancels) close() {
	s.mu.Lock()
	stop, stopped := s.stop, s.stopped
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
}

// run listens until ctx ends or the pool is closed, reconnecting after a
// failure.
func (s *stepCancels) run(ctx context.Context) {
	defer close(s.stopped)
	for {
		err := s.listen(ctx)
		s.mu.Lock()
		select {
		case <-s.listening:
			s.listening = make(chan struct{})
		default:
		}
		s.mu.Unlock()
		if ctx.Err() != nil || errors.Is(err, puddle.ErrClosedPool) {
			return
		}
		s.c.log.WarnContext(ctx, "cancelled step notifications", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (s *stepCancels) listen(ctx context.Context) error {
	conn, err := s.c.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire listener: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+cancelChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer func() {
		// A connection interrupted mid-wait is closed by pgx; a healthy one
		// goes back to the pool without the subscription.
		if !conn.Conn().IsClosed() {
			_, _ = conn.Exec(context.WithoutCancel(ctx), "UNLISTEN "+cancelChannel)
		}
	}()
	s.mu.Lock()
	close(s.listening)
	s.mu.Unlock()
	// Attempts cancelled while no listener listened have their result.
	if keys := s.registered(); len(keys) > 0 {
		done, err := store.New(s.c.pool).AttemptsFinishedAmong(ctx, keys)
		if err != nil {
			return err
		}
		s.cancel(done...)
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		var note cancelNote
		if json.Unmarshal([]byte(n.Payload), &note) == nil {
			s.cancel(note.key())
		}
	}
}
