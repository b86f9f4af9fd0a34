package api_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ductor/ductor/app/engine"
)

// The per-run signal bound holds under concurrency: 32 senders racing
// past it get exactly the bound accepted.
func TestSignalBoundIsAtomic(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: sig
steps:
  - { ref: a, type: signal, with: { name: a } }
`)
	id := b.startRun(t, "sig")
	b.waitWaiting(t, id, "a")
	const senders, each = 32, 33 // 1,056 signals for a bound of 1,000
	var accepted, refused atomic.Int64
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				body := fmt.Sprintf(`{"request_id": "s%d-%d", "name": "other"}`, s, i)
				switch code, out := b.call(t, "POST", "/api/v1/runs/"+id+"/signals", b.keyA, body); code {
				case 202:
					accepted.Add(1)
				case 429:
					refused.Add(1)
				default:
					t.Errorf("signal: %d %v", code, out)
				}
			}
		})
	}
	wg.Wait()
	if accepted.Load() != engine.DefaultMaxBufferedSignals || refused.Load() != senders*each-engine.DefaultMaxBufferedSignals {
		t.Fatalf("accepted %d and refused %d signals, want exactly %d accepted", accepted.Load(), refused.Load(), engine.DefaultMaxBufferedSignals)
	}
}
