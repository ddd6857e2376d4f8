package driver

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/editdist"
	"github.com/offcc/offcc/internal/memsched"
	"github.com/offcc/offcc/options"
)

// Options is what offcc itself needs to know about a command line. Every
// argument offcc does not own is kept, in order, in ClangArgs.
type Options struct {
	// ClangArgs are the arguments passed on to clang (offcc's own removed).
	ClangArgs []string
	// Inputs are the input files the command line names, in order.
	Inputs []string
	// LLVMDir is --llvm-dir=DIR.
	LLVMDir string
	// Jobs is -j N or --offload-jobs=N; 0 means the default.
	Jobs int
	// UseJobserver is set by --offload-jobs=jobserver.
	UseJobserver bool
	// HashHashHash is -###: print the jobs, run nothing.
	HashHashHash bool
	// PrintPhases is -ccc-print-phases.
	PrintPhases bool
	// PrintBindings is -ccc-print-bindings.
	PrintBindings bool
	// Verbose is -v.
	Verbose bool
	// SaveTemps is -save-temps[=cwd|obj].
	SaveTemps bool
	// Help is --help / -help.
	Help bool
	// OpenMP is set when -fopenmp (or -fopenmp=libomp) is in effect.
	OpenMP bool
	// OffloadTargets is set when any option selects offload devices.
	OffloadTargets bool
	// Language is the offload language named by -x or an input's
	// extension (CUDA or HIP), or SYCL for -fsycl; None otherwise.
	Language actions.OffloadKind
	// PreprocessOnly is -E (or -M/-MM without -MD): output goes to stdout
	// in clang's order, so clang runs it.
	PreprocessOnly bool
	// PrintJobGraph is --print-job-graph=json|dot: print the plan, run
	// nothing.
	PrintJobGraph string
	// JobTrace is --job-trace=FILE: write a Chrome trace of the jobs run.
	JobTrace string
	// OffloadMem is --offload-mem=SIZE|off as given ("" without it): the
	// memory device jobs may use at once, or off for no memory
	// scheduling (see memsched.ParseLimit).
	OffloadMem string
	// NoCache is --no-cache: neither read nor write the build cache.
	NoCache bool
	// ClangKernelNames is --no-offload-stable-names: OpenMP kernels are
	// named as clang names them, after the source files' device and
	// inode numbers, not after their paths (see stableNames).
	ClangKernelNames bool
	// RemoteExec is --remote-exec=URL: send device jobs to the build
	// farm on that Redis server ("" falls back to $OFFCC_REMOTE_EXEC;
	// --no-remote-exec sets NoRemoteExec).
	RemoteExec   string
	NoRemoteExec bool
	// CompileOnly is -c or -S: compile, do not link.
	CompileOnly bool
	// CompileCommands is --print-compile-commands=FILE: add this
	// command's compiles, device compiles included, to a JSON compilation
	// database.
	CompileCommands string
	// InputArgs are the indexes in ClangArgs of the input files, in order.
	InputArgs []int
	// SYCLBIN is the state -fsyclbin[=STATE] asks for ("input", "object"
	// or "executable"; bare -fsyclbin means executable), "" without it;
	// SYCLBINArg is the option as spelled, for messages.
	SYCLBIN, SYCLBINArg string
	// SYCLBINVersion is --syclbin-version=N (0 when not given).
	SYCLBINVersion int
	// Args are ClangArgs parsed with clang's option table (Tables), in
	// order; an Arg's Index is its place in ClangArgs.
	Args []*options.Arg
	// Tables are the option tables of the LLVM release the command line
	// was parsed for (see ParseRelease): that of the clang offcc drives,
	// once it is found.
	Tables *options.Tables
	// NewDriver is --offload-new-driver (the last of it and
	// --no-offload-new-driver); HIPLink is --hip-link. With offload
	// targets, either makes a command line without sources a HIP or CUDA
	// link.
	NewDriver, HIPLink bool
}

// OffloadKind returns the offload model the command line compiles or links
// for: CUDA, HIP or SYCL by language, OpenMP when -fopenmp comes with
// offload targets, HIP for a link with offload targets and
// --offload-new-driver or --hip-link, else None.
func (o *Options) OffloadKind() actions.OffloadKind {
	switch {
	case o.Language != actions.None:
		return o.Language
	case o.OpenMP && o.OffloadTargets:
		return actions.OpenMP
	case (o.NewDriver || o.HIPLink) && o.OffloadTargets:
		// A link of HIP (or CUDA) objects: clang runs its link stage.
		return actions.HIP
	}
	return actions.None
}

// offccOption is one of offcc's own options: its spelling, whether it is
// a flag (exact), takes a joined value (a prefix) or, for -j, a joined or
// separate number, and what it does to Options. None of them reaches
// clang; clang's options are parsed with clang's own table
// (options.ClangDriver).
type offccOption struct {
	name  string
	kind  options.Kind // Flag, Joined or JoinedOrSeparate
	apply func(o *Options, value string) error
}

func set(f func(o *Options)) func(*Options, string) error {
	return func(o *Options, _ string) error { f(o); return nil }
}

func parseJobs(o *Options, v string) error {
	if v == "jobserver" {
		o.UseJobserver = true
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("invalid number of parallel jobs '%s': expected a positive integer or 'jobserver'", v)
	}
	o.Jobs = n
	return nil
}

// offccOptions are offcc's own options. clang 22 has no option spelled
// like any of them but --offload-jobs=, which offcc takes over: clang's
// (the threads of its device offloading steps) says the same thing, and
// offcc runs those steps as jobs of its own (TestOffccOptionsAreNotClangs
// checks).
var offccOptions = []offccOption{
	{"--llvm-dir=", options.Joined, func(o *Options, v string) error { o.LLVMDir = v; return nil }},
	{"--offload-jobs=", options.Joined, parseJobs},
	{"-j", options.JoinedOrSeparate, parseJobs},
	{"--print-job-graph=", options.Joined, func(o *Options, v string) error {
		if v != "json" && v != "dot" {
			return fmt.Errorf("invalid value '%s' in '--print-job-graph=%s': expected 'json' or 'dot'", v, v)
		}
		o.PrintJobGraph = v
		return nil
	}},
	{"--offload-mem=", options.Joined, func(o *Options, v string) error {
		if _, _, err := memsched.ParseLimit(v); err != nil || v == "" {
			return fmt.Errorf("invalid value '%s' in '--offload-mem=%s': expected a size such as 600M, or 'off'", v, v)
		}
		o.OffloadMem = v
		return nil
	}},
	{"--no-cache", options.Flag, set(func(o *Options) { o.NoCache = true })},
	{"--no-offload-stable-names", options.Flag, set(func(o *Options) { o.ClangKernelNames = true })},
	{"--offload-stable-names", options.Flag, set(func(o *Options) { o.ClangKernelNames = false })},
	{"--remote-exec=", options.Joined, func(o *Options, v string) error {
		if v == "" {
			return fmt.Errorf("--remote-exec= needs a redis:// URL")
		}
		o.RemoteExec, o.NoRemoteExec = v, false
		return nil
	}},
	{"--no-remote-exec", options.Flag, set(func(o *Options) { o.RemoteExec, o.NoRemoteExec = "", true })},
	{"--job-trace=", options.Joined, func(o *Options, v string) error {
		if v == "" {
			return fmt.Errorf("--job-trace= needs a file name")
		}
		o.JobTrace = v
		return nil
	}},
	{"--print-compile-commands=", options.Joined, func(o *Options, v string) error {
		if v == "" {
			return fmt.Errorf("--print-compile-commands= needs a file name")
		}
		o.CompileCommands = v
		return nil
	}},
	{"-fsyclbin=", options.Joined, func(o *Options, v string) error {
		switch v {
		case "input", "object", "executable":
		default:
			return fmt.Errorf("invalid value '%s' in '-fsyclbin=%s': expected input, object or executable", v, v)
		}
		o.Language, o.SYCLBIN, o.SYCLBINArg = actions.SYCL, v, "-fsyclbin="+v
		return nil
	}},
	{"-fsyclbin", options.Flag, set(func(o *Options) { o.Language, o.SYCLBIN, o.SYCLBINArg = actions.SYCL, "executable", "-fsyclbin" })},
	{"--syclbin-version=", options.Joined, func(o *Options, v string) error {
		if v != "1" && v != "2" {
			return fmt.Errorf("invalid value '%s' in '--syclbin-version=%s': expected 1 or 2", v, v)
		}
		o.SYCLBINVersion = int(v[0] - '0')
		return nil
	}},
	// --offload-rdc is offcc's alias of -fgpu-rdc (clang 22 lacks it).
	{"--offload-rdc", options.Flag, nil},
}

// matchOffcc returns offcc's option that args[i] spells, its value and
// the number of words it takes; ok is false for any other argument.
func matchOffcc(args []string, i int) (opt *offccOption, value string, words int, ok bool) {
	a := args[i]
	for k := range offccOptions {
		o := &offccOptions[k]
		switch o.kind {
		case options.Flag:
			if a == o.name {
				return o, "", 1, true
			}
		case options.Joined:
			if v, found := strings.CutPrefix(a, o.name); found {
				return o, v, 1, true
			}
		case options.JoinedOrSeparate: // -j N, -jN
			if a == o.name {
				if i+1 < len(args) {
					return o, args[i+1], 2, true
				}
				return o, "", 1, true
			}
			if v, found := strings.CutPrefix(a, o.name); found && (isDigits(v) || v == "jobserver") {
				return o, v, 1, true
			}
		}
	}
	return nil, "", 0, false
}

// offccNearMiss returns clang's diagnostic for an argument that no option
// of clang's matches but that misspells one of offcc's: one of its
// options that take a value, without the value ("argument to '--job-trace'
// is missing (expected 1 value)"), or an option one edit away ("unknown
// argument '--no-cachee'; did you mean '--no-cache'?"). It returns nil for
// any other argument, which clang then reports.
func offccNearMiss(arg string) error {
	for _, o := range offccOptions {
		if o.kind == options.Joined && arg == strings.TrimSuffix(o.name, "=") {
			return fmt.Errorf("argument to '%s' is missing (expected 1 value)", arg)
		}
	}
	if near := nearestOffcc(arg); near != "" {
		return fmt.Errorf("unknown argument '%s'; did you mean '%s'?", arg, near)
	}
	return nil
}

// nearestOffcc returns offcc's option one edit from arg, with arg's value
// for an option that takes one joined, as clang's OptTable::findNearest
// suggests: options shorter than 4 characters (-j) are not suggested, and
// for an option ending in "=" only the part of arg up to its first "="
// is compared. It returns "" when no option is that near.
func nearestOffcc(arg string) string {
	best, bestDist := "", 2
	for _, o := range offccOptions {
		if len(strings.TrimLeft(o.name, "-")) < 4 {
			continue
		}
		lhs, rhs := arg, ""
		if strings.HasSuffix(o.name, "=") {
			if i := strings.IndexByte(arg, '='); i >= 0 {
				lhs, rhs = arg[:i+1], arg[i+1:]
			}
		}
		if d := editdist.Distance(lhs, o.name, bestDist); d < bestDist {
			best, bestDist = o.name+rhs, d
		}
	}
	return best
}

// languageKind returns the offload model of a -x language: CUDA or HIP.
func languageKind(lang string) actions.OffloadKind {
	switch lang {
	case "cuda", "cuda-cpp-output", "cu":
		return actions.CUDA
	case "hip", "hip-cpp-output":
		return actions.HIP
	}
	return actions.None
}

// extensionKind returns the offload model clang gives an input by its
// extension (types::lookupTypeForExtension): CUDA for .cu, HIP for .hip.
func extensionKind(path string) actions.OffloadKind {
	switch strings.ToLower(fileExt(path)) {
	case "cu":
		return actions.CUDA
	case "hip":
		return actions.HIP
	}
	return actions.None
}

// Parse reads a command line (without argv[0]), expanding @response files,
// with the option tables of the newest LLVM release offcc knows (see
// ParseRelease).
func Parse(args []string) (*Options, error) {
	return ParseRelease(args, newestTables())
}

// newestTables returns the option tables of the newest LLVM release
// offcc has tables of (those of options.ClangDriver).
func newestTables() *options.Tables {
	r := options.Releases()
	t, err := options.ForRelease(r[len(r)-1])
	if err != nil {
		panic(err)
	}
	return t
}

// tables returns the option tables the command line was parsed with: the
// newest release's for Options not made by Parse or ParseRelease.
func (o *Options) tables() *options.Tables { return orNewest(o.Tables) }

// orNewest returns t, or the newest release's tables when t is nil.
func orNewest(t *options.Tables) *options.Tables {
	if t == nil {
		return newestTables()
	}
	return t
}

// ParseRelease reads a command line (without argv[0]), expanding
// @response files, as the clang of the release of tables reads it.
// offcc's own options are taken out; everything else is parsed once with
// that clang's option table, and the arguments offcc acts on are read by
// the option they are, whatever their spelling or alias.
func ParseRelease(args []string, tables *options.Tables) (*Options, error) {
	expanded, err := expandResponseFiles(args, 0)
	if err != nil {
		return nil, err
	}
	o := &Options{Tables: tables}
	table := tables.ClangDriver()
	lang := "" // the last -x: it applies to the inputs after it
	for i := 0; i < len(expanded); {
		if spec, value, words, ok := matchOffcc(expanded, i); ok {
			if words == 1 && spec.kind == options.JoinedOrSeparate && expanded[i] == spec.name {
				return nil, fmt.Errorf("argument to '%s' is missing (expected 1 value)", spec.name)
			}
			if spec.name == "--offload-rdc" {
				o.appendClang(table, []string{"-fgpu-rdc"})
			} else if err := spec.apply(o, value); err != nil {
				return nil, err
			}
			i += words
			continue
		}
		a, err := table.ParseOne(expanded, i)
		if err != nil {
			return nil, err
		}
		if a.IsUnknown() {
			if err := offccNearMiss(a.Spelling); err != nil {
				return nil, err
			}
		}
		words := a.Words(expanded)
		i += a.Count
		if a.IsInput() {
			o.Inputs = append(o.Inputs, a.Value())
			o.InputArgs = append(o.InputArgs, len(o.ClangArgs))
			kind := extensionKind(a.Value())
			if lang != "" && lang != "none" {
				kind = languageKind(lang)
			}
			if kind != actions.None {
				o.Language = kind
			}
		}
		o.apply(a, &lang)
		o.appendArg(a, words)
	}
	if o.Help {
		o.PreprocessOnly = false
	}
	return o, nil
}

// lastFlag reports whether the last of the flags on and off (by option ID)
// on the command line is on, as clang's ArgList::hasFlag.
func (o *Options) lastFlag(on, off string) bool {
	for i := len(o.Args) - 1; i >= 0; i-- {
		switch o.Args[i].Option.ID {
		case on:
			return true
		case off:
			return false
		}
	}
	return false
}

// appendClang adds arguments of offcc's making to the clang command line.
func (o *Options) appendClang(table *options.Table, words []string) {
	parsed, _ := table.Parse(words)
	for _, a := range parsed {
		o.appendArg(a, a.Words(words))
	}
}

// appendArg adds a parsed argument, the words it took, to the clang
// command line; its Index becomes its place in ClangArgs.
func (o *Options) appendArg(a *options.Arg, words []string) {
	a.Index = len(o.ClangArgs)
	if a.Alias != nil {
		a.Alias.Index = a.Index
	}
	o.ClangArgs = append(o.ClangArgs, words...)
	o.Args = append(o.Args, a)
}

// apply records what a clang argument means to offcc; lang is the last -x.
func (o *Options) apply(a *options.Arg, lang *string) {
	opt := a.Option
	switch opt.ID {
	case "_HASH_HASH_HASH":
		o.HashHashHash = true
	case "ccc_print_phases":
		o.PrintPhases = true
	case "ccc_print_bindings":
		o.PrintBindings = true
	case "v":
		o.Verbose = true
	case "help":
		o.Help = true
	case "save_temps_EQ":
		o.SaveTemps = true
	case "E", "M", "MM":
		o.PreprocessOnly = true
	case "fopenmp_targets_EQ", "offload_targets_EQ", "offload_EQ", "offload_link":
		// (--offload= is an option of its own before LLVM 20.)
		o.OffloadTargets = true
	case "offload_arch_EQ":
		o.OffloadTargets = true
		if a.Alias != nil && a.Alias.Option.ID == "cuda_gpu_arch_EQ" {
			o.Language = actions.CUDA
		}
	case "fopenmp_EQ":
		v := a.Value()
		o.OpenMP = v != "" && v != "libgomp"
	case "fopenmp":
		o.OpenMP = true
	case "fno_openmp":
		o.OpenMP = false
	case "c", "S":
		o.CompileOnly = true
	case "fsycl":
		o.Language = actions.SYCL
	case "offload_new_driver":
		o.NewDriver = true
	case "no_offload_new_driver":
		o.NewDriver = false
	case "hip_link":
		o.HIPLink = true
	case "x":
		*lang = a.Value()
	}
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func fileExt(p string) string {
	if i := strings.LastIndexByte(p, '.'); i >= 0 && !strings.ContainsRune(p[i:], '/') {
		return p[i+1:]
	}
	return ""
}

// expandResponseFiles replaces each @file argument by the arguments in the
// file, split as clang splits them on Linux (actions.SplitResponseFile).
// Nested @files are named relative to the working directory, as in clang.
func expandResponseFiles(args []string, depth int) ([]string, error) {
	if depth > 20 {
		return nil, fmt.Errorf("response files nested too deeply")
	}
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "@") || len(a) == 1 {
			out = append(out, a)
			continue
		}
		data, err := os.ReadFile(a[1:])
		if err != nil {
			// clang keeps an unreadable @arg as a plain argument.
			out = append(out, a)
			continue
		}
		words := actions.SplitResponseFile(string(data))
		inner, err := expandResponseFiles(words, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, inner...)
	}
	return out, nil
}

// defaultJobs is the concurrency used when neither -j nor a jobserver says.
func defaultJobs() int { return runtime.NumCPU() }
