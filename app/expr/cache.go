package expr

import (
	"container/list"
	"sync"
)

// Cache keeps compiled programs by (source, kind) in a bounded LRU, so an
// expression is compiled once per process and reused on every tick. It is
// safe for concurrent use. Failed compilations are not cached.
type Cache struct {
	env  *Env
	size int

	mu    sync.Mutex
	order *list.List // front = most recently used; values are *cacheEntry
	items map[cacheKey]*list.Element
}

type cacheKey struct {
	src  string
	kind Kind
}

type cacheEntry struct {
	key cacheKey
	prg *Program
}

// NewCache returns a cache of at most size programs (at least one).
func NewCache(env *Env, size int) *Cache {
	return &Cache{
		env:   env,
		size:  max(size, 1),
		order: list.New(),
		items: make(map[cacheKey]*list.Element),
	}
}

// Get returns the compiled program for src, compiling it on a miss.
func (c *Cache) Get(src string, kind Kind) (*Program, error) {
	key := cacheKey{src: src, kind: kind}
	if p := c.lookup(key); p != nil {
		return p, nil
	}
	p, err := c.env.Compile(src, kind)
	if err != nil {
		return nil, err
	}
	return c.store(key, p), nil
}

// Len is the number of cached programs.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *Cache) lookup(key cacheKey) *Program {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).prg
}

// store adds p unless a concurrent Get stored the same key first, in which
// case the stored program wins so every caller shares one.
func (c *Cache) store(key cacheKey, p *Program) *Program {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*cacheEntry).prg
	}
	c.items[key] = c.order.PushFront(&cacheEntry{key: key, prg: p})
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
	return p
}
