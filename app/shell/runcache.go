package shell

import (
	"container/list"
	"context"
	"sync"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// runCache keeps, for the runs this process ticked last, their state and
// step nodes as its commit left them, keyed by the record version that
// commit wrote: a tick of such a run reads only what may have changed
// beside them (its row's columns, its inputs) and takes the rest from
// here (store.RunTickLoadCached). Every write of a run's state or step
// nodes moves its version, so an entry whose version is no longer the
// run's is never used: another process ticked the run since. The engine
// leaves the state it decides on untouched, so entries are shared, never
// copied. Least recently used entries go first.
type runCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // most recently used first
	byKey map[store.RunKey]*list.Element
}

type cachedRun struct {
	key     store.RunKey
	version int64
	state   engine.Run
	nodes   []*engine.Node
}

func newRunCache(max int) *runCache {
	return &runCache{max: max, order: list.New(), byKey: map[store.RunKey]*list.Element{}}
}

// versions lists the cached record versions of keys.
func (c *runCache) versions(keys []store.RunKey) map[store.RunKey]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[store.RunKey]int64{}
	for _, k := range keys {
		if e, ok := c.byKey[k]; ok {
			out[k] = e.Value.(*cachedRun).version
		}
	}
	return out
}

// lookup returns the entry of k at version, if there is one.
func (c *runCache) lookup(k store.RunKey, version int64) (*cachedRun, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok || e.Value.(*cachedRun).version != version {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cachedRun), true
}

// committed remembers what ticks wrote once their transaction committed;
// a run that ended is forgotten.
func (c *runCache) committed(ticks []*runTick) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range ticks {
		if e, ok := c.byKey[t.key]; ok {
			c.order.Remove(e)
			delete(c.byKey, t.key)
		}
		if t.state.Run.Status.Terminal() {
			continue
		}
		r := &cachedRun{key: t.key, version: t.load.Run.RecordVersion + 1, state: t.state.Run}
		for _, n := range t.state.Nodes {
			if n.Child == nil {
				r.nodes = append(r.nodes, n)
			}
		}
		c.byKey[t.key] = c.order.PushFront(r)
		if c.order.Len() > c.max {
			oldest := c.order.Back()
			c.order.Remove(oldest)
			delete(c.byKey, oldest.Value.(*cachedRun).key)
		}
	}
}

// A transaction that ticks runs and commits on its own (a group tick, a
// tick job) collects the ticks it persisted in its context, to hand to
// the cache once it has committed.
type persistedKey struct{}

type persisted struct{ ticks []*runTick }

func collectPersisted(ctx context.Context) (context.Context, *persisted) {
	p := &persisted{}
	return context.WithValue(ctx, persistedKey{}, p), p
}

func notePersisted(ctx context.Context, ticks []*runTick) {
	if p, ok := ctx.Value(persistedKey{}).(*persisted); ok {
		p.ticks = append(p.ticks, ticks...)
	}
}
