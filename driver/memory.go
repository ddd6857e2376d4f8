package driver

import (
	"fmt"
	"os"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/internal/membudget"
	"github.com/offcc/offcc/internal/memsched"
)

// memory returns the governor that admits this build's jobs by memory
// (--offload-mem, else OFFCC_OFFLOAD_MEM / offload_mem) and the function
// that ends it, or nil when memory scheduling is off or no budget can be
// found. c, when not nil, keeps the peaks learned.
func (inv *Invocation) memory(opts *Options, c *cache.Cache, tempDir string) (*memsched.Governor, func(), error) {
	explicit, named, off, err := inv.memoryLimit(opts)
	if err != nil || off {
		return nil, nil, err
	}
	budget, err := membudget.Discover(explicit, membudget.System())
	if err != nil {
		if opts.Verbose {
			fmt.Fprintf(inv.Stderr, "%s: note: jobs admitted by cores alone: %v\n", inv.prog(), err)
		}
		return nil, nil, nil
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
	}, nil
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
