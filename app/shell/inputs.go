package shell

import (
	"container/list"
	"sync"

	"github.com/google/uuid"
)

// inputCache keeps decoded run inputs, which never change, so a tick of a
// run with a large input (a 10,000-item fan-out list) does not decode it
// again. Values are shared: the engine only reads them.
type inputCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // most recently used first
	byID  map[uuid.UUID]*list.Element
}

type cachedInput struct {
	id    uuid.UUID
	value any
}

func newInputCache(max int) *inputCache {
	return &inputCache{max: max, order: list.New(), byID: map[uuid.UUID]*list.Element{}}
}

// lookup returns the run's cached input.
func (c *inputCache) lookup(id uuid.UUID) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[id]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(cachedInput).value, true
}

// put remembers a run's input, evicting the least recently used.
func (c *inputCache) put(id uuid.UUID, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byID[id]; ok {
		return
	}
	c.byID[id] = c.order.PushFront(cachedInput{id: id, value: v})
	if c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byID, oldest.Value.(cachedInput).id)
	}
}
