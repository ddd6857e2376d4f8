package driver

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/toolchain"
)

// offload plans and runs (or prints) an offload build, in the order of
// cmd/go, which builds its action graph before it runs any of it: it
// plans the build (plan), hands a command line it is not sure it plans
// right to clang (handToClang), prints a dry run's plan (printDryRun), or
// runs the plan (execute) in an execution environment built for it in
// one place (newExecEnv).
func (inv *Invocation) offload(ctx context.Context, llvm *toolchain.LLVM, opts *Options, kind actions.OffloadKind, c *cache.Cache) int {
	b, err := inv.newOffloadBuild(llvm, opts, kind, c)
	if err != nil {
		return inv.errorf("%v", err)
	}
	defer b.close()
	// A compile the cache holds whole is answered before it is planned.
	// Of a release offcc plans only in part, the cache holds a compile
	// whole only after offcc planned it and its jobs fit the release
	// (releaseJobsFit): a command line clang ran whole stores nothing.
	if b.restoreCommand() {
		return 0
	}
	plan, fb, err := b.plan(ctx)
	switch {
	case err != nil:
		return b.planFailed(ctx, err)
	case fb != nil:
		return b.handToClang(ctx, fb)
	case b.dryRun:
		return b.printDryRun(plan)
	}
	printHeader(inv.Stderr, plan.Header, opts.Verbose)
	if opts.Verbose {
		inv.profileNote(llvm.Profile, llvm.Bin)
	}
	env, err := b.newExecEnv(plan)
	if err != nil {
		return inv.errorf("%v", err)
	}
	defer env.close()
	return inv.execute(ctx, plan, env)
}

// profileNote says, under -v, which LLVM release's profile offcc uses.
func (inv *Invocation) profileNote(release *toolchain.Profile, bin string) {
	fmt.Fprintf(inv.Stderr, "%s: note: LLVM %d profile (%s)\n", inv.prog(), release.Major, bin)
}

// offloadBuild is one offload build while offcc plans it and runs it:
// what the two share, as cmd/go's Builder holds what building its action
// graph and running it share. It owns the build's private temporary
// directory and the build cache's session that a whole compile is looked
// up in; close releases both.
type offloadBuild struct {
	inv  *Invocation
	opts *Options
	kind actions.OffloadKind
	// clang is the clang executable; release is the profile of its LLVM
	// release.
	clang   string
	release *toolchain.Profile
	// llvmBin is the LLVM's bin directory, named under -v.
	llvmBin string
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
	// none, an -fsyclbin build of no source); syclbin is the -fsyclbin
	// build it belongs to (nil: none).
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
		inv: inv, opts: opts, kind: kind, clang: llvm.Clang(), release: llvm.Profile, llvmBin: llvm.Bin, cache: c, start: time.Now(),
		dryRun: opts.HashHashHash || opts.PrintBindings || opts.PrintJobGraph != "",
		root:   inv.tempRoot(),
	}
	if !b.dryRun {
		// A release offcc plans only in part has its cached plans checked
		// as fresh ones are (releaseJobsFit); its CUDA and HIP shapes read
		// theirs fresh (Shape.ChecksCUID).
		if b.plans = newPlanCache(c, inv.getenv); b.plans != nil {
			b.plans.tables = opts.tables()
		}
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

// plan asks clang's driver for the build's jobs and binds them into
// offcc's plan. It returns the plan, or, for a command line whose plan
// offcc is not sure of, the fallback that hands it to clang's driver
// whole; where offcc's own outputs must describe such a command line
// (describesFallback), the plan is that one action. A failure of clang's
// driver is a *ClangError (see planFailed). Planning runs nothing of the
// build, but it records the compile commands (--print-compile-commands)
// of the jobs clang printed, and a run checks here that the plan's tools
// are there.
func (b *offloadBuild) plan(ctx context.Context) (*Plan, *fallback, error) {
	// A release offcc does not plan whole: only the shapes its profile
	// lists, checked strictly; anything else its clang runs whole and
	// gives its own bytes.
	var shape toolchain.Shape
	if !b.release.Plans {
		var why string
		if shape, why = releaseShape(b.release, b.kind, b.opts); why != "" {
			if !b.dryRun && b.inv.compileCommandsFile(b.opts) != "" {
				b.inv.recordWithoutPlan(ctx, b.clang, b.opts, b.cache)
			}
			return b.wholeRelease(why)
		}
	}
	var header []string
	var jobs []*clangJob
	if b.clangArgs != nil {
		plans := b.plans
		if shape.ChecksCUID() {
			// releaseJobsFit checks the compile unit ID clang prints
			// against offcc's model for this source: a cached plan,
			// templated from another source of the same flags, holds
			// that source's, so the plan is read fresh.
			plans = nil
		}
		var err error
		header, jobs, err = clangJobs(ctx, b.inv, b.clang, b.inv.withColor(b.clangArgs), b.temp.path, plans, b.query)
		if err != nil {
			return nil, nil, err
		}
	}
	if !b.dryRun {
		b.inv.recordCompileCommands(b.opts, jobs)
	}
	if shape != "" {
		if why := releaseJobsFit(b.release, shape, b.opts, jobs, b.printedCUID(header)); why != "" {
			return b.wholeRelease(why)
		}
	}
	plan, err := b.bind(header, jobs)
	var ue *UnrecognizedError
	switch {
	case errors.As(err, &ue) && b.syclbin != nil:
		// clang cannot run -fsyclbin: there is nothing to fall back to.
		return nil, nil, fmt.Errorf("cannot plan -fsyclbin: %v", ue)
	case errors.As(err, &ue):
		return b.unplanned(ue)
	case err != nil:
		return nil, nil, err
	}
	plan.Header = header
	if !b.dryRun {
		// A missing vendor tool fails now, in one line, not after the
		// compiles that come before it.
		if err := checkTools(plan.Graph, exec.LookPath); err != nil {
			return nil, nil, err
		}
	}
	return plan, nil, nil
}

// bind turns clang's jobs into the build's plan with the builder of its
// offload kind (or -fsyclbin's), and gives OpenMP kernels stable names.
// A job the builder cannot plan with certainty is an
// *UnrecognizedError.
func (b *offloadBuild) bind(header []string, jobs []*clangJob) (*Plan, error) {
	inv, opts := b.inv, b.opts
	env := &planEnv{tempDir: b.temp.path, self: inv.Self, steps: &steps{clang: b.clang, release: b.release}, userInputs: map[string]bool{}, tables: opts.tables()}
	for _, in := range opts.Inputs {
		env.userInputs[in] = true
	}
	if opts.LLVMDir != "" {
		env.linkPrefix = []string{"--llvm-dir=" + opts.LLVMDir}
	}
	env.cuid = inv.cuidOf(opts, header)
	var plan *Plan
	var err error
	if b.syclbin != nil {
		plan, err = b.syclbin.plan(env, jobs)
	} else {
		plan, err = newPlanner(env, b.kind).build(jobs)
	}
	if err == nil && b.kind == actions.OpenMP {
		inv.stabilize(plan, opts, b.release, b.temp.path)
	}
	return plan, err
}

// printedCUID returns offcc's model of the compile unit IDs clang gives
// sources for the command line clang printed its jobs for (the build's,
// maybe with -fcolor-diagnostics in front, see withColor, and -###), or
// nil when it cannot be parsed: the IDs clang printed must be the
// model's for offcc to trust the model with the user's command line.
func (b *offloadBuild) printedCUID(header []string) func(string) (string, bool) {
	parsed, err := b.opts.tables().ClangDriver().Parse(hashHashHashArgs(b.inv.withColor(b.clangArgs)))
	if err != nil {
		return nil
	}
	printed := *b.opts
	printed.Args = parsed
	return b.inv.cuidOf(&printed, header)
}

// wholeRelease is unplanned for a command line of a release offcc does
// not plan whole (why says why its clang runs it whole), saying under -v
// which profile is in use and, for OpenMP, that kernels keep clang's
// names where the release cannot have stable ones.
func (b *offloadBuild) wholeRelease(why string) (*Plan, *fallback, error) {
	if b.opts.Verbose {
		b.inv.profileNote(b.release, b.llvmBin)
		if b.kind == actions.OpenMP && !b.release.StableNames && !b.opts.ClangKernelNames {
			b.inv.inodeNamesNote(b.release)
		}
	}
	return b.unplanned(&UnrecognizedError{Reason: why})
}

// unplanned returns the fallback of a command line whose plan offcc is
// not sure of (ue says why), or, where offcc's own outputs must describe
// it (describesFallback), the plan of that one action.
func (b *offloadBuild) unplanned(ue *UnrecognizedError) (*Plan, *fallback, error) {
	fb := b.fallBack(ue)
	if !b.describesFallback() {
		return nil, fb, nil
	}
	// offcc's own outputs (the graph, the trace) describe a plan of one
	// action: clang's driver with the whole command line.
	plan := &Plan{Graph: &actions.Graph{}, ReadsStdin: slices.Contains(b.opts.Inputs, "-")}
	plan.Graph.MustAdd(fb.action)
	return plan, nil, nil
}

// fallback is a command line that offcc hands to clang's driver whole,
// because it is not sure of its plan.
type fallback struct {
	// action is clang's driver with the whole command line; its
	// FallbackReason says why offcc does not plan it.
	action *actions.Action
}

// fallBack returns the fallback of a command line whose plan offcc is not
// sure of (ue says why), saying so under -v.
func (b *offloadBuild) fallBack(ue *UnrecognizedError) *fallback {
	// Fail closed: a plan offcc is not sure of is clang's to run.
	if b.opts.Verbose {
		fmt.Fprintf(b.inv.Stderr, "%s: note: handing the command line to clang: %v\n", b.inv.prog(), ue)
	}
	a := b.inv.clangAction(b.clang, b.opts, b.kind)
	a.FallbackReason = ue.Reason
	return &fallback{action: a}
}

// describesFallback reports whether offcc's own outputs must describe a
// command line it hands to clang, which then runs as a plan of one
// action: the job graph (--print-job-graph), or the job trace of a build
// that is no -### or -ccc-print-bindings (those print clang's own).
func (b *offloadBuild) describesFallback() bool {
	traced := b.inv.jobTraceFile(b.opts) != ""
	return b.opts.PrintJobGraph != "" || traced && !b.opts.HashHashHash && !b.opts.PrintBindings
}

// handToClang runs the command line with clang's driver, as fb says, and
// returns its exit status (or does not return: see runClang).
func (b *offloadBuild) handToClang(ctx context.Context, fb *fallback) int {
	if b.cache != nil && !b.dryRun {
		// Counted, with its reason, in offcc cache stats.
		s := b.inv.newSession(b.cache, b.temp.path, b.opts)
		s.CountUncacheable(fb.action)
		s.Close()
	}
	b.temp.remove() // Exec does not return
	return b.inv.runClang(ctx, b.clang, b.opts)
}

// printDryRun prints the plan of a dry run (-###, -ccc-print-bindings,
// --print-job-graph), with what the build cache holds for each action
// in the JSON graph.
func (b *offloadBuild) printDryRun(plan *Plan) int {
	var probe actions.Probe
	if b.opts.PrintJobGraph == "json" && b.cache != nil {
		probe = cacheProbe(b.inv.newSession(b.cache, b.temp.path, b.opts), plan.Graph)
	}
	// The printed commands name temporaries in TMPDIR, as clang's do.
	rebaseTemps(plan.Graph, b.temp.path, b.root)
	return b.inv.print(plan, b.opts, probe)
}

// planFailed prints why a build could not be planned and returns the exit
// status. A failure of clang's driver (*ClangError) in a build is handed
// to clang itself: its driver stops at the same diagnostics before it runs
// any job, and prints them as it prints them for the user's command (with
// "no input files" after the inputs it could not find, which its -###
// leaves out). A dry run prints its -### diagnostics and status, as
// clang's -### does; the rest get offcc's error line.
func (b *offloadBuild) planFailed(ctx context.Context, err error) int {
	var ce *ClangError
	if !errors.As(err, &ce) {
		return b.inv.errorf("%v", err)
	}
	if !b.dryRun && b.syclbin == nil {
		b.temp.remove() // Exec does not return
		return b.inv.runClang(ctx, b.clang, b.opts)
	}
	if ce.Messages != "" {
		fmt.Fprintln(b.inv.Stderr, ce.Messages)
	}
	return ce.Code
}
