package wftest

import (
	"slices"
	"time"

	"github.com/ductor/ductor/app/engine"
)

// item is something due at a virtual instant: an input ready to go (a
// step result, a fired timer, a child's report), or a delivery from the
// test, converted when it is taken.
type item struct {
	at  time.Time
	seq int
	// key lets a command withdraw the item (a timer id, an attempt).
	key      string
	input    engine.Input
	delivery *Delivery
}

// agenda is the virtual clock's queue, ordered by (at, seq).
type agenda struct {
	items []item
	seq   int
}

func (a *agenda) add(at time.Time, key string, in engine.Input, d *Delivery) {
	a.seq++
	a.items = append(a.items, item{at: at, seq: a.seq, key: key, input: in, delivery: d})
}

// remove withdraws the items with key.
func (a *agenda) remove(key string) {
	a.items = slices.DeleteFunc(a.items, func(it item) bool { return it.key == key })
}

// next is the instant of the earliest item.
func (a *agenda) next() (time.Time, bool) {
	if len(a.items) == 0 {
		return time.Time{}, false
	}
	return a.items[a.first()].at, true
}

// pop takes the earliest item.
func (a *agenda) pop() item {
	i := a.first()
	it := a.items[i]
	a.items = slices.Delete(a.items, i, i+1)
	return it
}

func (a *agenda) first() int {
	best := 0
	for i, it := range a.items {
		b := a.items[best]
		if it.at.Before(b.at) || (it.at.Equal(b.at) && it.seq < b.seq) {
			best = i
		}
	}
	return best
}
