package shell

import "sync"

// grouper runs write over the requests that gather while earlier groups
// are out, the way River's completer batches completions: a request that
// finds a flusher free goes at once (an idle system pays no wait), and
// under load the requests that queue meanwhile leave together, at the
// cost of one statement for the group. write must answer every request of
// its group.
type grouper[R any] struct {
	write    func([]R)
	limit    int // most requests in one group
	flushers int // most groups out at once

	mu      sync.Mutex
	pending []R
	running int
}

// submit queues r for a group; the caller waits for its answer.
func (g *grouper[R]) submit(r R) {
	g.mu.Lock()
	g.pending = append(g.pending, r)
	start := g.running < g.flushers
	if start {
		g.running++
	}
	g.mu.Unlock()
	if start {
		go g.flush()
	}
}

func (g *grouper[R]) flush() {
	for {
		g.mu.Lock()
		n := min(len(g.pending), g.limit)
		if n == 0 {
			g.running--
			g.mu.Unlock()
			return
		}
		group := make([]R, n)
		copy(group, g.pending)
		g.pending = g.pending[n:]
		g.mu.Unlock()
		g.write(group)
	}
}
