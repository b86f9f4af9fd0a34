package bench

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memorySampler records this process's peak memory while it runs: the Go
// heap in use, sampled, and the kernel's resident high-water mark (VmHWM),
// reset at the start where the kernel allows it.
type memorySampler struct {
	stop     chan struct{}
	done     sync.WaitGroup
	peakHeap uint64
}

func sampleMemory() *memorySampler {
	// Writing 5 to clear_refs resets VmHWM to the current RSS (Linux ≥ 4.0).
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	m := &memorySampler{stop: make(chan struct{})}
	m.done.Go(m.loop)
	return m
}

func (m *memorySampler) loop() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	var ms runtime.MemStats
	for {
		runtime.ReadMemStats(&ms)
		m.peakHeap = max(m.peakHeap, ms.HeapInuse)
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
	}
}

// finish stops sampling and returns the peaks in MiB: heap in use and
// resident set (0 when /proc is not there).
func (m *memorySampler) finish() (heapMiB, rssMiB float64) {
	close(m.stop)
	m.done.Wait()
	return float64(m.peakHeap) / (1 << 20), float64(vmHWM()) / (1 << 20)
}

// vmHWM reads the resident high-water mark of this process in bytes.
func vmHWM() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
