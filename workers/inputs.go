package workers

import (
	"container/list"
	"sync"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/store"
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

// get returns the run's decoded input, decoding raw on a miss.
func (c *inputCache) get(id uuid.UUID, raw []byte) (any, error) {
	c.mu.Lock()
	if e, ok := c.byID[id]; ok {
		c.order.MoveToFront(e)
		v := e.Value.(cachedInput).value
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	v, err := store.DecodeInput(raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byID[id]; !ok {
		c.byID[id] = c.order.PushFront(cachedInput{id: id, value: v})
		if c.order.Len() > c.max {
			oldest := c.order.Back()
			c.order.Remove(oldest)
			delete(c.byID, oldest.Value.(cachedInput).id)
		}
	}
	return v, nil
}
