package farm

import (
	"sync"

	"github.com/offcc/offcc/internal/membudget"
)

// memoryGate admits a worker's jobs by the memory they are expected to
// take: a job starts only while the expected peaks of the running jobs
// and its own stay within the budget, and always when nothing runs (a
// job larger than the budget runs alone). It is safe for concurrent use.
type memoryGate struct {
	budget int64 // 0: no limit

	mu       sync.Mutex
	reserved int64
	running  int
	freed    chan struct{} // closed, and made again, at each release
}

func newMemoryGate(budget int64) *memoryGate {
	return &memoryGate{budget: max(budget, 0), freed: make(chan struct{})}
}

// reserve reserves peak bytes when they fit, and reports whether they
// did; when they do not, the channel it returns is closed at the next
// release (taken under the same lock: no release is missed).
func (g *memoryGate) reserve(peak int64) (bool, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.budget > 0 && g.running > 0 && g.reserved+peak > g.budget {
		return false, g.freed
	}
	g.reserved += peak
	g.running++
	return true, nil
}

// release returns what reserve reserved.
func (g *memoryGate) release(peak int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reserved -= peak
	g.running--
	close(g.freed)
	g.freed = make(chan struct{})
}

// load returns the bytes reserved.
func (g *memoryGate) load() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reserved
}

// discoverMemory returns the memory a worker's jobs may use together and
// where that comes from (internal/membudget: the worker's cgroup limit
// less others' use, or MemAvailable), or 0 where neither can be read (then
// jobs are taken by slots alone).
func discoverMemory() (int64, string) {
	b, err := membudget.Discover(0, membudget.System())
	if err != nil {
		return 0, ""
	}
	return b.Bytes, b.Source
}
