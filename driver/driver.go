// Package driver is offcc's compiler driver. It reads a clang command line
// into Options, asks clang for the jobs of an offload build, turns them into
// a typed plan (actions.Graph) with the builder of the offload kind, and
// runs the plan with one executor, printing it instead for -###,
// -ccc-print-bindings and --print-job-graph. Command lines without
// offloading, and those no builder can plan, go to clang unchanged.
package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/internal/term"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/toolchain"
)

// Invocation is one run of the driver: how it was called and where it
// reads and writes.
type Invocation struct {
	// Argv0 is the name offcc was called by; clang runs under the same name,
	// so "offcc++" compiles C++ like clang++.
	Argv0 string
	// Args are the arguments after argv[0].
	Args []string
	// Env is the environment (os.Environ()).
	Env []string
	// Stdin is read when the build compiles standard input ("-").
	Stdin io.Reader
	// Stdout and Stderr receive output and diagnostics.
	Stdout, Stderr io.Writer
	// Self is the path of the offcc executable, printed for in-process steps.
	Self string
	// Exec replaces the process with clang when offcc has nothing to add
	// (syscall.Exec); nil runs clang as a child and returns its status.
	Exec func(path string, argv, env []string) error
	// Services open the shared cache, the build farm and the progress
	// line when a build needs them; nil does without all three.
	Services *Services

	// ensureTemp makes the build's temporary directory if it is not made
	// yet (see tempDir); nil when there is none to make.
	ensureTemp func() error
}

func (inv *Invocation) getenv(key string) string {
	for i := len(inv.Env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(inv.Env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// prog is the name used in offcc's own diagnostics.
func (inv *Invocation) prog() string {
	if inv.Argv0 == "" {
		return "offcc"
	}
	return filepath.Base(inv.Argv0)
}

func (inv *Invocation) errorf(format string, args ...any) int {
	fmt.Fprintf(inv.Stderr, "%s: error: %s\n", inv.prog(), fmt.Sprintf(format, args...))
	return 1
}

// Main runs the driver and returns the exit status.
func Main(ctx context.Context, inv *Invocation) int {
	opts, err := Parse(inv.Args)
	if err != nil {
		return inv.errorf("%v", err)
	}
	if opts.Help {
		fmt.Fprint(inv.Stdout, helpText(inv.prog()))
		return 0
	}
	if base := inv.baseDir(); base != "" {
		if cwd, err := os.Getwd(); err == nil {
			opts.rebase(base, filepath.Clean(cwd))
		}
	}
	warning, err := checkSYCLBIN(opts)
	if err != nil {
		return inv.errorf("%v", err)
	}
	if warning != "" {
		inv.warnf("%s", warning)
	}
	llvm, err := toolchain.Find(opts.LLVMDir, inv.getenv)
	if err != nil {
		return inv.errorf("%v", err)
	}
	if opts, err = inv.forRelease(opts, llvm.Profile); err != nil {
		return inv.errorf("%v", err)
	}
	if err := checkSYCLBINRelease(opts, llvm.Profile); err != nil {
		return inv.errorf("%v", err)
	}
	c, err := inv.openCache(opts)
	if err != nil {
		return inv.errorf("%v", err)
	}
	kind := opts.OffloadKind()
	if kind == actions.None && plansPlainCompile(opts, c) {
		// A compile without offloading: planned (clang's cc1 job) so
		// that the build cache can serve it.
		return inv.offload(ctx, llvm, opts, kind, c)
	}
	if kind == actions.None || opts.PrintPhases || opts.PreprocessOnly || builders[kind] == nil {
		// Nothing to plan: clang's own driver does exactly what offcc would.
		if opts.PrintJobGraph != "" {
			// A dry run runs nothing: the graph is that one action.
			return inv.printUnplanned(llvm, opts, kind)
		}
		if inv.compileCommandsFile(opts) != "" {
			inv.recordWithoutPlan(ctx, llvm.Clang(), opts, c)
		}
		return inv.runClang(ctx, llvm.Clang(), opts)
	}
	return inv.offload(ctx, llvm, opts, kind, c)
}

// forRelease returns opts as the clang of release reads the command line:
// opts itself when it was parsed with that release's option tables, else
// the command line parsed again with them (Main parses it first with the
// newest release's, to find the LLVM offcc drives), rebased and checked
// as Main does.
func (inv *Invocation) forRelease(opts *Options, release *toolchain.Profile) (*Options, error) {
	if opts.tables().Major == release.Major {
		return opts, nil
	}
	tables, err := options.ForRelease(release.Major)
	if err != nil {
		return nil, err
	}
	again, err := ParseRelease(inv.Args, tables)
	if err != nil {
		return nil, err
	}
	if base := inv.baseDir(); base != "" {
		if cwd, err := os.Getwd(); err == nil {
			again.rebase(base, filepath.Clean(cwd))
		}
	}
	// (Its warning, if any, was said after the first parse.)
	if _, err := checkSYCLBIN(again); err != nil {
		return nil, err
	}
	return again, nil
}

// printUnplanned prints, for --print-job-graph, the graph of a command
// line offcc hands to clang whole: clang's driver as its one action, with
// the reason.
func (inv *Invocation) printUnplanned(llvm *toolchain.LLVM, opts *Options, kind actions.OffloadKind) int {
	a := inv.clangAction(llvm.Clang(), opts, kind)
	switch {
	case opts.PreprocessOnly:
		a.FallbackReason = "offcc plans no preprocessing (-E)"
	case opts.PrintPhases:
		a.FallbackReason = "-ccc-print-phases is clang's to print"
	case kind == actions.None:
		a.FallbackReason = "no offloading and no compile to cache"
	default:
		a.FallbackReason = "offcc plans no " + kind.String() + " builds"
	}
	plan := &Plan{Graph: &actions.Graph{}}
	plan.Graph.MustAdd(a)
	return inv.print(plan, opts, nil)
}

// runClang hands the command line to clang under offcc's name.
func (inv *Invocation) runClang(ctx context.Context, clang string, opts *Options) int {
	args := opts.ClangArgs
	argv := append([]string{inv.prog()}, args...)
	// A command line too long for execve (offcc expanded @files) goes to
	// clang in a response file, so clang runs as a child that outlives it.
	if inv.Exec != nil && actions.FitsCommandLine(argv, inv.Env, 0) {
		err := inv.Exec(clang, argv, inv.Env)
		return inv.errorf("cannot run %s: %v", clang, err)
	}
	g := &actions.Graph{}
	g.MustAdd(inv.clangAction(clang, opts, actions.None))
	tempDir, err := os.MkdirTemp(inv.tempRoot(), "offcc-")
	if err != nil {
		return inv.errorf("cannot create temporary directory: %v", err)
	}
	defer os.RemoveAll(tempDir)
	shopt := actions.ShellOptions{Stdout: inv.Stdout, Stderr: inv.Stderr, TempDir: tempDir}
	if inv.Stdin != nil {
		shopt.Stdin = func() ([]byte, error) { return io.ReadAll(inv.Stdin) }
	}
	err = actions.Execute(ctx, g, actions.NewShell(shopt), actions.Options{Jobs: 1})
	var ee *actions.ExitError
	if errors.As(err, &ee) && ee.CommandFailed() {
		return ee.Code
	}
	if err != nil {
		return inv.errorf("%v", err)
	}
	return 0
}

// clangAction is the whole command line run by clang's driver under
// offcc's name, as one action.
func (inv *Invocation) clangAction(clang string, opts *Options, kind actions.OffloadKind) *actions.Action {
	a := &actions.Action{
		Kind: actions.Fallback, Offload: kind, Tool: "clang", Argv0: inv.prog(),
		Command: append([]string{clang}, opts.ClangArgs...), Cost: 1,
	}
	if slices.Contains(opts.Inputs, "-") {
		a.Inputs = []*actions.Artifact{{Path: "-"}}
	}
	return a
}

// cuidOf returns the function that gives a CUDA or HIP source the compile
// unit ID clang's build of the user's command line uses (see clangCUID).
// clang hashes the arguments its driver sees: those of its configuration
// files first (the "Configuration file:" lines of its -### header, in
// that order), then "--driver-mode=g++" when called as a "++" name, then
// the command line less its --config options. It returns nil when a
// configuration file uses what offcc does not read (@files, <CFGDIR>,
// $-prefixed tail options, continued lines) or cannot be read.
func (inv *Invocation) cuidOf(opts *Options, header []string) func(string) (string, bool) {
	var args []*options.Arg
	for _, h := range header {
		path, ok := strings.CutPrefix(h, "Configuration file: ")
		if !ok {
			continue
		}
		cfg, ok := configFileArgs(opts.tables(), path)
		if !ok {
			return nil
		}
		args = append(args, cfg...)
	}
	if strings.HasSuffix(inv.prog(), "++") {
		mode, _ := opts.tables().ClangDriver().Parse([]string{"--driver-mode=g++"})
		args = append(args, mode...)
	}
	for _, a := range opts.Args {
		if a.Option.ID != "config" {
			args = append(args, a)
		}
	}
	major := opts.tables().Major
	return func(input string) (string, bool) { return cuidOfRelease(major, input, args) }
}

// configFileArgs reads a clang configuration file's arguments (with the
// option tables of its release): lines
// starting with # are comments, the rest is split as a response file
// (llvm::cl::tokenizeConfigFile). ok is false for a file offcc cannot
// read as clang does.
func configFileArgs(tables *options.Tables, path string) (args []*options.Arg, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var kept []string
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "#"):
			continue
		case strings.HasSuffix(t, "\\"), strings.Contains(t, "<CFGDIR>"):
			return nil, false
		}
		kept = append(kept, line)
	}
	words := actions.SplitResponseFile(strings.Join(kept, "\n"))
	for _, w := range words {
		if strings.HasPrefix(w, "@") || strings.HasPrefix(w, "$") {
			return nil, false
		}
	}
	args, err = tables.ClangDriver().Parse(words)
	return args, err == nil
}

// withColor returns args with -fcolor-diagnostics in front when offcc's
// stderr is a terminal clang would colour: clang decides that from its own
// stderr, which for offcc's "clang -###" and for collected compile output
// is a pipe. A colour option of the user's comes later and wins.
func (inv *Invocation) withColor(args []string) []string {
	f, ok := inv.Stderr.(*os.File)
	if !ok || !term.IsTerminal(f) || !term.HasColors(inv.getenv) {
		return args
	}
	return append([]string{"-fcolor-diagnostics"}, args...)
}

// tempRoot is the directory temporary files go in: $TMPDIR, else /tmp.
func (inv *Invocation) tempRoot() string {
	if d := inv.getenv("TMPDIR"); d != "" {
		return filepath.Clean(d)
	}
	return filepath.Clean(os.TempDir())
}

// cacheProbe asks the build cache, before the plan's temporaries are
// renamed for printing, what it holds for each action of g.
func cacheProbe(session *cache.Session, g *actions.Graph) actions.Probe {
	type probed struct{ key, status string }
	results := map[*actions.Action]probed{}
	for _, a := range g.Actions {
		k, st := session.Probe(a)
		results[a] = probed{k, st}
	}
	return func(a *actions.Action) (string, string) { r := results[a]; return r.key, r.status }
}

// plansPlainCompile reports whether a command line without offloading is
// a compile (-c or -S) that the build cache c (nil when off) serves, or
// whose graph --print-job-graph asks for; others go to clang unchanged.
func plansPlainCompile(opts *Options, c *cache.Cache) bool {
	if !opts.CompileOnly || opts.PrintPhases || opts.PreprocessOnly || opts.HashHashHash || opts.PrintBindings || opts.Help {
		return false
	}
	return opts.PrintJobGraph != "" || c != nil
}

// openCache opens the build cache the environment selects, with the shared
// cache behind it when OFFCC_REMOTE_CACHE names one (Services.SharedCache
// connects it); nil when it is off (OFFCC_CACHE=0 or --no-cache). A bad
// setting is an error, except those of the shared cache, which
// SharedCache turns into a warning: the build goes on with the local
// cache only.
func (inv *Invocation) openCache(opts *Options) (*cache.Cache, error) {
	cfg, err := cache.ConfigFromEnv(inv.getenv)
	if err != nil || opts.NoCache {
		return nil, err
	}
	c := cache.Open(cfg)
	if c == nil || cfg.RemoteURL == "" {
		return c, nil
	}
	if inv.Services != nil && inv.Services.SharedCache != nil {
		inv.Services.SharedCache(inv.serviceEnv(), c, cfg)
	}
	return c, nil
}

// remoteExecURL returns the build farm's server that --remote-exec or
// OFFCC_REMOTE_EXEC names, or "" for none (--no-remote-exec).
func (inv *Invocation) remoteExecURL(opts *Options) string {
	url := opts.RemoteExec
	if url == "" && !opts.NoRemoteExec {
		url = inv.getenv("OFFCC_REMOTE_EXEC")
	}
	return url
}

// newSession starts this build's use of the cache c.
func (inv *Invocation) newSession(c *cache.Cache, tempDir string, opts *Options) *cache.Session {
	cwd, _ := os.Getwd()
	so := cache.SessionOptions{
		TempDir: tempDir, PrepareTempDir: inv.ensureTemp, Self: inv.Self, Env: inv.Env,
		Label:   cwd + "\x00" + strings.Join(opts.Inputs, "\x00"),
		Warn:    func(msg string) { inv.warnf("%s", msg) },
		Options: opts.tables(),
	}
	if c.Debug {
		so.Explain = inv.Stderr
	}
	return c.NewSession(so)
}

// warnf prints one of offcc's warnings.
func (inv *Invocation) warnf(format string, args ...any) {
	fmt.Fprintf(inv.Stderr, "%s: warning: %s\n", inv.prog(), fmt.Sprintf(format, args...))
}

// printHeader prints clang's header lines: all of them under -v (version
// and installation detection), otherwise only its driver warnings.
func printHeader(w io.Writer, header []string, verbose bool) {
	for _, h := range header {
		if verbose || strings.Contains(h, ": warning: ") {
			fmt.Fprintln(w, h)
		}
	}
}

// print writes the plan for -###, -ccc-print-bindings or
// --print-job-graph.
func (inv *Invocation) print(plan *Plan, opts *Options, probe actions.Probe) int {
	switch {
	case opts.PrintJobGraph != "":
		var err error
		if opts.PrintJobGraph == "dot" {
			err = actions.WriteDot(inv.Stdout, plan.Graph)
		} else {
			err = actions.WriteJSON(inv.Stdout, plan.Graph, probe)
		}
		if err != nil {
			return inv.errorf("%v", err)
		}
	case opts.PrintBindings:
		printHeader(inv.Stderr, plan.Header, false)
		actions.PrintBindings(inv.Stderr, plan.Graph)
	default:
		printHeader(inv.Stderr, plan.Header, true)
		sh := actions.NewShell(actions.ShellOptions{Stdout: inv.Stdout, Stderr: inv.Stderr, DryRun: true})
		if err := actions.Execute(context.Background(), plan.Graph, sh, actions.Options{}); err != nil {
			return inv.errorf("%v", err)
		}
	}
	return 0
}

// rebaseTemps renames the private temporary directory to dir in every
// command and file name of the graph, for printing.
func rebaseTemps(g *actions.Graph, private, dir string) {
	from, to := private+string(filepath.Separator), dir+string(filepath.Separator)
	seen := map[*actions.Artifact]bool{}
	for _, a := range g.Actions {
		for i, arg := range a.Command {
			a.Command[i] = strings.ReplaceAll(arg, from, to)
		}
		for _, fs := range [][]*actions.Artifact{a.Inputs, a.Reads, a.Outputs} {
			for _, f := range fs {
				if !seen[f] {
					seen[f] = true
					f.Path = strings.Replace(f.Path, from, to, 1)
				}
			}
		}
	}
}

// report turns Execute's result into an exit status, printing offcc's line
// for failures whose tool did not explain itself: compiles print their own
// diagnostics; a failed link gets clang's "linker command failed" line.
func (inv *Invocation) report(err error) int {
	if err == nil {
		return 0
	}
	var ee *actions.ExitError
	if !errors.As(err, &ee) {
		return inv.errorf("%v", err)
	}
	if ee.Action == nil {
		inv.errorf("build interrupted")
		if ee.Code > 1 {
			return ee.Code
		}
		return 130
	}
	// As clang's driver: a clang compile that exits 1 has said why; any
	// other failure gets a line naming the tool; a crash exits 1.
	if !ee.CommandFailed() || ee.Code != 1 || !ee.Action.Kind.IsClangCompile() && ee.Action.Kind != actions.Fallback {
		inv.errorf("%v", ee)
	}
	if ee.CommandFailed() && ee.Crashed() {
		return 1
	}
	return ee.Code
}

// concurrency decides how many jobs may run at once: -j/--offload-jobs=N,
// else make's jobserver when MAKEFLAGS has one, else the CPU count.
func (inv *Invocation) concurrency(opts *Options) (int, *actions.Jobserver, error) {
	if opts.Jobs > 0 {
		return opts.Jobs, nil, nil
	}
	js, err := actions.JobserverFromEnv(inv.getenv("MAKEFLAGS"))
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: warning: cannot use make's jobserver: %v\n", inv.prog(), err)
		js = nil
	}
	if js != nil {
		// The jobserver bounds concurrency; make -jN hands out N-1 tokens.
		return 64, js, nil
	}
	if why := actions.JobserverUnavailable(inv.getenv("MAKEFLAGS")); why != "" && (opts.Verbose || opts.UseJobserver) {
		fmt.Fprintf(inv.Stderr, "%s: note: %s; running up to %d jobs (the CPU count)\n", inv.prog(), why, defaultJobs())
	} else if opts.UseJobserver {
		fmt.Fprintf(inv.Stderr, "%s: warning: --offload-jobs=jobserver: no jobserver in MAKEFLAGS; using %d jobs\n", inv.prog(), defaultJobs())
	}
	return defaultJobs(), nil, nil
}

// ExecClang is the default Invocation.Exec: it replaces the process.
func ExecClang(path string, argv, env []string) error { return syscall.Exec(path, argv, env) }

// tempDir is a build's private temporary directory: made at once, or
// named at once and made on first use (ensure), so that a build whose
// every job is a cache hit creates and removes no directory.
type tempDir struct {
	path string
	once sync.Once
	err  error
	made atomic.Bool
}

// newTempDir returns a new temporary directory under root, made now if
// now is set.
func newTempDir(root string, now bool) (*tempDir, error) {
	if now {
		p, err := os.MkdirTemp(root, "offcc-")
		if err != nil {
			return nil, fmt.Errorf("cannot create temporary directory: %v", err)
		}
		t := &tempDir{path: p}
		t.once.Do(func() {})
		t.made.Store(true)
		return t, nil
	}
	// A name no other process picks (its 64 random bits): it cannot be
	// changed once the plan names it, so Mkdir's refusal of an existing
	// directory is an error, not a retry.
	return &tempDir{path: filepath.Join(root, "offcc-"+strconv.FormatUint(rand.Uint64(), 36))}, nil
}

// ensure makes the directory (mode 0700) unless it is made.
func (t *tempDir) ensure() error {
	t.once.Do(func() {
		if err := os.Mkdir(t.path, 0o700); err != nil {
			t.err = fmt.Errorf("cannot create temporary directory: %v", err)
			return
		}
		t.made.Store(true)
	})
	return t.err
}

// remove removes the directory and everything in it, if it was made.
func (t *tempDir) remove() {
	if t.made.Load() {
		os.RemoveAll(t.path)
	}
}

// processCPU returns the user and system time offcc's process has used
// (all its threads) and that of the children it has waited for, as
// getrusage(2) reports them; zero where it cannot tell.
func processCPU() (self, children time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		children = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return self, children
}
