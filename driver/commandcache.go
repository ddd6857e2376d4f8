package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/config"
)

// commandKey returns where the build cache keeps the whole result of this
// compile (cache.CommandKey), and false when it keeps none: only a compile
// (-c or -S) of one input, run with the plan cache on, whose run does
// nothing but write its outputs (no -v header, job trace, trace lines or
// compile commands to write, no -fsyclbin) has one. clang is the clang
// executable, clangArgs the command line it plans. The plan cache's query
// made for it is returned too, for clangJobs.
func (inv *Invocation) commandKey(clang string, opts *Options, clangArgs []string, plans *planCache, start time.Time) (cache.CommandKey, *planQuery, bool) {
	if plans == nil || !opts.CompileOnly || opts.PreprocessOnly || opts.Verbose || opts.SaveTemps ||
		len(opts.Inputs) != 1 || opts.SYCLBIN != "" || clangArgs == nil ||
		inv.jobTraceFile(opts) != "" || inv.compileCommandsFile(opts) != "" {
		return cache.CommandKey{}, nil, false
	}
	if on, _ := config.ParseBool(inv.getenv("OFFCC_TRACE")); on {
		return cache.CommandKey{}, nil, false
	}
	cwd, err := os.Getwd()
	if err != nil {
		return cache.CommandKey{}, nil, false
	}
	base := inv.getenv("OFFCC_BASE_DIR")
	q, ok := plans.query(clang, inv.prog(), hashHashHashArgs(inv.withColor(clangArgs)), inv.Env, cwd, base)
	if !ok {
		return cache.CommandKey{}, nil, false
	}
	key := cache.CommandKey{Exact: q.exact, Moved: q.moved, Places: []string{cwd}, Start: start, Args: clangArgs,
		Options: fmt.Sprintf("clang-kernel-names=%v", opts.ClangKernelNames)}
	if base != "" {
		key.Places = append(key.Places, base)
	}
	for _, a := range opts.Args {
		if a.Option.ID == "o" {
			key.Output = a.Value()
		}
	}
	if key.Output != "" {
		key.Places = append(key.Places, key.Output)
		if abs, err := filepath.Abs(key.Output); err == nil {
			key.Places = append(key.Places, abs)
		}
	}
	return key, q, true
}
