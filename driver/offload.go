package driver

import (
	"slices"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/toolchain"
)

// offloadBuild is one offload build while offcc plans it and runs it:
// what the two share, as cmd/go's Builder holds what building its action
// graph and running it share. It owns the build's private temporary
// directory and the build cache's session that a whole compile is looked
// up in; close releases both.
type offloadBuild struct {
	inv  *Invocation
	opts *Options
	kind actions.OffloadKind
	// clang is the clang executable.
	clang string
	// cache is the build cache, nil when it is off; plans is the plan
	// cache, nil when it is off or the build is a dry run.
	cache *cache.Cache
	plans *planCache
	// dryRun is set for -###, -ccc-print-bindings and --print-job-graph:
	// the plan is printed, not run.
	dryRun bool
	// start is when the build began (cache.CommandKey.Start).
	start time.Time
	// root is where temporary files go (tempRoot); temp is the build's
	// private directory in it.
	root string
	temp *tempDir
	// clangArgs is the command line whose jobs clang is asked for (nil:
	// none, an -fsyclbin build of no source), syclbin the -fsyclbin build
	// it belongs to.
	clangArgs []string
	syclbin   *syclbinBuild
	// command is where the build cache keeps the compile's whole result
	// (commandKey), nil when it keeps none; query is the plan cache's key
	// of the command, made with it (nil: not made).
	command *cache.CommandKey
	query   *planQuery
	// session is the build cache's session opened to look command up,
	// which the build then runs with; nil when none is open yet.
	session *cache.Session
}

// newOffloadBuild starts an offload build of opts (kind) with clang from
// llvm and the build cache c (nil when off): it names, or makes, the
// build's private temporary directory and the command line clang plans.
func (inv *Invocation) newOffloadBuild(llvm *toolchain.LLVM, opts *Options, kind actions.OffloadKind, c *cache.Cache) (*offloadBuild, error) {
	b := &offloadBuild{
		inv: inv, opts: opts, kind: kind, clang: llvm.Clang(), cache: c, start: time.Now(),
		dryRun: opts.HashHashHash || opts.PrintBindings || opts.PrintJobGraph != "",
		root:   inv.tempRoot(),
	}
	if !b.dryRun {
		b.plans = newPlanCache(c, inv.getenv)
	}
	// Every temporary of this build lives in one private directory,
	// removed whatever happens. clang needs it to exist even for -###.
	// A build that the plan cache and the build cache serve whole writes
	// nothing there: with both caches on (and no build farm), it is made
	// when something is first written in it.
	remote := inv.remoteExecURL(opts) != ""
	temp, err := newTempDir(b.root, b.dryRun || b.plans == nil || remote)
	if err != nil {
		return nil, err
	}
	b.temp = temp
	inv.ensureTemp = temp.ensure
	b.clangArgs = opts.ClangArgs
	if opts.SYCLBIN != "" {
		b.syclbin = newSYCLBINBuild(opts)
		b.clangArgs = b.syclbin.clangArgs
	}
	if kind == actions.HIP && opts.lastFlag("fgpu_rdc", "fno_gpu_rdc") {
		// The old driver's -fgpu-rdc link assembles a file its driver
		// writes; offcc has clang print it, to write it itself.
		b.clangArgs = append(slices.Clip(b.clangArgs), hipDumpScript)
	}
	return b, nil
}

// restoreCommand answers the compile from the build cache when the cache
// holds its whole result, before anything is planned, and reports
// whether it did. The session it opens for the lookup is the one the
// build then runs with, which stores the whole result when it succeeds.
func (b *offloadBuild) restoreCommand() bool {
	key, query, whole := b.inv.commandKey(b.clang, b.opts, b.clangArgs, b.plans, b.start)
	b.query = query
	if !whole || b.syclbin != nil {
		return false
	}
	b.command = &key
	b.session = b.inv.newSession(b.cache, b.temp.path, b.opts)
	return b.session.RestoreCommand(key)
}

// close closes the session restoreCommand opened and removes the private
// temporary directory.
func (b *offloadBuild) close() {
	if b.session != nil {
		b.session.Close()
	}
	b.temp.remove()
}
