package driver

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/internal/membudget"
	"github.com/offcc/offcc/internal/memsched"
)

// memory returns what admits this build's jobs by memory (--offload-mem,
// else OFFCC_OFFLOAD_MEM / offload_mem) and the function that ends it, or
// nil when memory scheduling is off. The governor behind it is opened when
// a job first asks (a build the caches serve whole reads no cgroup file
// and touches no ledger); c, when not nil, keeps the peaks learned.
func (inv *Invocation) memory(opts *Options, c *cache.Cache, tempDir string) (*lazyGovernor, func(), error) {
	explicit, named, off, err := inv.memoryLimit(opts)
	if err != nil || off {
		return nil, nil, err
	}
	l := &lazyGovernor{open: func() (*memsched.Governor, func()) {
		return inv.openGovernor(opts, c, tempDir, explicit, named)
	}}
	return l, l.close, nil
}

// openGovernor finds the memory budget, opens the ledger it shares with
// other offcc processes and returns the governor with the function that
// closes both; nil when no budget can be found.
func (inv *Invocation) openGovernor(opts *Options, c *cache.Cache, tempDir string, explicit int64, named string) (*memsched.Governor, func()) {
	budget, err := membudget.Discover(explicit, membudget.System())
	if err != nil {
		if opts.Verbose {
			fmt.Fprintf(inv.Stderr, "%s: note: jobs admitted by cores alone: %v\n", inv.prog(), err)
		}
		return nil, nil
	}
	source := budget.Source
	if source == "--offload-mem" {
		source = named
	}
	cwd, _ := os.Getwd()
	cfg := memsched.Config{
		Limit: budget.Bytes, Source: source, Budget: budget, PeakOf: membudget.PeakOf,
		WorkDir: cwd, TempDir: tempDir,
	}
	if c != nil {
		cfg.Peaks = c
	}
	var ledger *membudget.Ledger
	if dir := membudget.LedgerDir(inv.cacheDir(c)); dir != "" {
		// Without the file, the budget is this build's alone.
		if l, err := membudget.OpenLedger(dir); err == nil {
			ledger, cfg.Ledger = l, l
		}
	}
	gov := memsched.New(cfg)
	if opts.Verbose {
		fmt.Fprintf(inv.Stderr, "%s: note: %s\n", inv.prog(), gov.Note())
	}
	return gov, func() {
		gov.Close()
		if ledger != nil {
			ledger.Close()
		}
	}
}

// lazyGovernor is the build's actions.Memory (and the farm client's
// peaks): the governor open calls for on first use, or, where it finds no
// budget, admission by cores alone.
type lazyGovernor struct {
	open func() (*memsched.Governor, func())

	once    sync.Once
	gov     *memsched.Governor
	closeFn func()
}

func (l *lazyGovernor) get() *memsched.Governor {
	l.once.Do(func() { l.gov, l.closeFn = l.open() })
	return l.gov
}

// Reserve implements actions.Memory.
func (l *lazyGovernor) Reserve(a *actions.Action, running int) (actions.Reservation, bool) {
	g := l.get()
	if g == nil {
		return nil, true
	}
	return g.Reserve(a, running)
}

// Wake implements actions.Memory.
func (l *lazyGovernor) Wake() <-chan struct{} {
	if g := l.get(); g != nil {
		return g.Wake()
	}
	return nil
}

// Expect returns a's expected peak, for the build farm (0: none known).
func (l *lazyGovernor) Expect(a *actions.Action) int64 {
	if g := l.get(); g != nil {
		return g.Expect(a)
	}
	return 0
}

// Learn records the peak a reached on a farm worker.
func (l *lazyGovernor) Learn(a *actions.Action, peak int64) {
	if g := l.get(); g != nil {
		g.Learn(a, peak)
	}
}

// ExpectTime returns how long a is expected to run, for the build farm's
// deadlines (0: not known).
func (l *lazyGovernor) ExpectTime(a *actions.Action) time.Duration {
	if g := l.get(); g != nil {
		return g.ExpectTime(a)
	}
	return 0
}

// LearnTime records how long a ran on a farm worker.
func (l *lazyGovernor) LearnTime(a *actions.Action, d time.Duration) {
	if g := l.get(); g != nil {
		g.LearnTime(a, d)
	}
}

// close closes the governor if it was opened.
func (l *lazyGovernor) close() {
	l.once.Do(func() {}) // none opens after this
	if l.closeFn != nil {
		l.closeFn()
	}
}

// memoryLimit returns the explicit memory limit (0: none), the option or
// setting that gives it, and whether memory scheduling is off: from
// --offload-mem=, else OFFCC_OFFLOAD_MEM (offload_mem in the
// configuration file).
func (inv *Invocation) memoryLimit(opts *Options) (explicit int64, named string, off bool, err error) {
	v, named := opts.OffloadMem, "--offload-mem"
	if v == "" {
		v, named = inv.getenv("OFFCC_OFFLOAD_MEM"), "OFFCC_OFFLOAD_MEM"
	}
	if v == "" {
		return 0, "", false, nil
	}
	explicit, off, err = memsched.ParseLimit(v)
	if err != nil {
		return 0, "", false, fmt.Errorf("%s=%s: %v", named, v, err)
	}
	return explicit, named, off, nil
}

// cacheDir returns the build cache's directory, where the memory ledger
// lies when /dev/shm cannot hold it; "" when there is none.
func (inv *Invocation) cacheDir(c *cache.Cache) string {
	if c != nil {
		return c.Dir
	}
	if cfg, err := cache.ConfigFromEnv(inv.getenv); err == nil {
		return cfg.Dir
	}
	return ""
}
