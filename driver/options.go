package driver

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/offcc/offcc/actions"
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
	// NoCache is --no-cache: neither read nor write the build cache.
	NoCache bool
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

// optKind says how an option takes its value.
type optKind int

const (
	flag        optKind = iota // -c
	joined                     // -fopenmp-targets=x
	separate                   // -o x
	joinedOrSep                // -Idir or -I dir
)

// optSpec is one row of the option table: its spelling, how it takes a value
// and what it does to Options. keep says whether clang sees it.
type optSpec struct {
	name  string
	kind  optKind
	keep  bool
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

func offloadTargets(o *Options, _ string) error { o.OffloadTargets = true; return nil }

// optionTable lists, longest spelling first within a prefix, the options offcc
// looks at. Options that take a separate value are listed so their value is
// never mistaken for an option or an input.
var optionTable = []optSpec{
	{"--llvm-dir=", joined, false, func(o *Options, v string) error { o.LLVMDir = v; return nil }},
	{"--offload-jobs=", joined, false, parseJobs},
	{"-j", joinedOrSep, false, parseJobs},
	{"-###", flag, true, set(func(o *Options) { o.HashHashHash = true })},
	{"-ccc-print-phases", flag, true, set(func(o *Options) { o.PrintPhases = true })},
	{"-ccc-print-bindings", flag, true, set(func(o *Options) { o.PrintBindings = true })},
	{"-v", flag, true, set(func(o *Options) { o.Verbose = true })},
	{"--help", flag, true, set(func(o *Options) { o.Help = true })},
	{"-help", flag, true, set(func(o *Options) { o.Help = true })},
	{"-save-temps=", joined, true, set(func(o *Options) { o.SaveTemps = true })},
	{"-save-temps", flag, true, set(func(o *Options) { o.SaveTemps = true })},
	{"--save-temps", flag, true, set(func(o *Options) { o.SaveTemps = true })},
	{"-E", flag, true, set(func(o *Options) { o.PreprocessOnly = true })},
	{"-M", flag, true, set(func(o *Options) { o.PreprocessOnly = true })},
	{"-MM", flag, true, set(func(o *Options) { o.PreprocessOnly = true })},
	{"-fopenmp-targets=", joined, true, offloadTargets},
	{"--offload-targets=", joined, true, offloadTargets},
	{"--offload-arch=", joined, true, offloadTargets},
	{"--offload=", joined, true, offloadTargets},
	{"--offload-link", flag, true, offloadTargets},
	{"-fopenmp-simd", flag, true, nil},
	{"-fopenmp=", joined, true, func(o *Options, v string) error { o.OpenMP = v != "" && v != "libgomp"; return nil }},
	{"-fopenmp", flag, true, set(func(o *Options) { o.OpenMP = true })},
	{"-fno-openmp", flag, true, set(func(o *Options) { o.OpenMP = false })},
	{"--print-job-graph=", joined, false, func(o *Options, v string) error {
		if v != "json" && v != "dot" {
			return fmt.Errorf("invalid value '%s' in '--print-job-graph=%s': expected 'json' or 'dot'", v, v)
		}
		o.PrintJobGraph = v
		return nil
	}},
	{"-c", flag, true, set(func(o *Options) { o.CompileOnly = true })},
	{"-S", flag, true, set(func(o *Options) { o.CompileOnly = true })},
	{"--no-cache", flag, false, set(func(o *Options) { o.NoCache = true })},
	{"--remote-exec=", joined, false, func(o *Options, v string) error {
		if v == "" {
			return fmt.Errorf("--remote-exec= needs a redis:// URL")
		}
		o.RemoteExec, o.NoRemoteExec = v, false
		return nil
	}},
	{"--no-remote-exec", flag, false, set(func(o *Options) { o.RemoteExec, o.NoRemoteExec = "", true })},
	{"--job-trace=", joined, false, func(o *Options, v string) error {
		if v == "" {
			return fmt.Errorf("--job-trace= needs a file name")
		}
		o.JobTrace = v
		return nil
	}},
	{"--print-compile-commands=", joined, false, func(o *Options, v string) error {
		if v == "" {
			return fmt.Errorf("--print-compile-commands= needs a file name")
		}
		o.CompileCommands = v
		return nil
	}},
	{"-fsycl", flag, true, set(func(o *Options) { o.Language = actions.SYCL })},
	{"-fsyclbin=", joined, false, func(o *Options, v string) error {
		switch v {
		case "input", "object", "executable":
		default:
			return fmt.Errorf("invalid value '%s' in '-fsyclbin=%s': expected input, object or executable", v, v)
		}
		o.Language, o.SYCLBIN, o.SYCLBINArg = actions.SYCL, v, "-fsyclbin="+v
		return nil
	}},
	{"-fsyclbin", flag, false, set(func(o *Options) { o.Language, o.SYCLBIN, o.SYCLBINArg = actions.SYCL, "executable", "-fsyclbin" })},
	{"--syclbin-version=", joined, false, func(o *Options, v string) error {
		if v != "1" && v != "2" {
			return fmt.Errorf("invalid value '%s' in '--syclbin-version=%s': expected 1 or 2", v, v)
		}
		o.SYCLBINVersion = int(v[0] - '0')
		return nil
	}},
	// --offload-rdc is offcc's alias of -fgpu-rdc (clang 22 lacks it).
	{"--offload-rdc", flag, false, func(o *Options, _ string) error {
		o.ClangArgs = append(o.ClangArgs, "-fgpu-rdc")
		return nil
	}},
	{"--cuda-gpu-arch=", joined, true, set(func(o *Options) { o.Language = actions.CUDA })},
	{"--offload-new-driver", flag, true, set(func(o *Options) { o.NewDriver = true })},
	{"--no-offload-new-driver", flag, true, set(func(o *Options) { o.NewDriver = false })},
	{"--hip-link", flag, true, set(func(o *Options) { o.HIPLink = true })},
	{"-x", joinedOrSep, true, func(o *Options, v string) error {
		if k := languageKind(v); k != actions.None {
			o.Language = k
		}
		return nil
	}},
	// Options whose value is a separate argument.
	{"-o", joinedOrSep, true, nil},
	{"-MF", joinedOrSep, true, nil},
	{"-MT", joinedOrSep, true, nil},
	{"-MQ", joinedOrSep, true, nil},
	{"-MJ", joinedOrSep, true, nil},
	{"-I", joinedOrSep, true, nil},
	{"-D", joinedOrSep, true, nil},
	{"-U", joinedOrSep, true, nil},
	{"-L", joinedOrSep, true, nil},
	{"-l", joinedOrSep, true, nil},
	{"-F", joinedOrSep, true, nil},
	{"-T", joinedOrSep, true, nil},
	{"-u", joinedOrSep, true, nil},
	{"-z", joinedOrSep, true, nil},
	{"-e", joinedOrSep, true, nil},
	{"-Xclang", separate, true, nil},
	{"-Xlinker", separate, true, nil},
	{"-Xassembler", separate, true, nil},
	{"-Xpreprocessor", separate, true, nil},
	{"-Xarch_host", separate, true, nil},
	{"-Xarch_device", separate, true, nil},
	{"-Xoffload-linker", separate, true, nil},
	{"-Xopenmp-target", separate, true, nil}, // also -Xopenmp-target=<triple> <arg>, below
	{"-Xcuda-ptxas", separate, true, nil},
	{"-Xcuda-fatbinary", separate, true, nil},
	{"-mllvm", separate, true, nil},
	{"-target", separate, true, nil},
	{"-include", separate, true, nil},
	{"-imacros", separate, true, nil},
	{"-isystem", separate, true, nil},
	{"-iquote", separate, true, nil},
	{"-idirafter", separate, true, nil},
	{"-isysroot", separate, true, nil},
	{"-iprefix", separate, true, nil},
	{"-iwithprefix", separate, true, nil},
	{"-iwithprefixbefore", separate, true, nil},
	{"-include-pch", separate, true, nil},
	{"-ivfsoverlay", separate, true, nil},
	{"-arch", separate, true, nil},
	{"--param", separate, true, nil},
	{"-dependency-file", separate, true, nil},
	{"-serialize-diagnostics", separate, true, nil},
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

// Parse reads a command line (without argv[0]), expanding @response files.
func Parse(args []string) (*Options, error) {
	expanded, err := expandResponseFiles(args, 0)
	if err != nil {
		return nil, err
	}
	o := &Options{}
	for i := 0; i < len(expanded); i++ {
		a := expanded[i]
		if strings.HasPrefix(a, "-Xopenmp-target=") {
			o.ClangArgs = append(o.ClangArgs, a)
			if i+1 < len(expanded) {
				i++
				o.ClangArgs = append(o.ClangArgs, expanded[i])
			}
			continue
		}
		spec, value, consumed, ok := match(a, expanded[i+1:])
		if !ok {
			if a == "-" || !strings.HasPrefix(a, "-") {
				o.Inputs = append(o.Inputs, a)
				o.InputArgs = append(o.InputArgs, len(o.ClangArgs))
				switch ext := strings.ToLower(fileExt(a)); ext {
				case "cu":
					o.Language = actions.CUDA
				case "hip":
					o.Language = actions.HIP
				}
			}
			o.ClangArgs = append(o.ClangArgs, a)
			continue
		}
		if spec.kind == separate || (spec.kind == joinedOrSep && consumed) {
			if i+1 >= len(expanded) {
				return nil, fmt.Errorf("argument to '%s' is missing (expected 1 value)", a)
			}
		}
		if spec.apply != nil {
			if err := spec.apply(o, value); err != nil {
				return nil, err
			}
		}
		if spec.keep {
			o.ClangArgs = append(o.ClangArgs, a)
			if consumed {
				o.ClangArgs = append(o.ClangArgs, expanded[i+1])
			}
		}
		if consumed {
			i++
		}
	}
	if o.Help {
		o.PreprocessOnly = false
	}
	return o, nil
}

// match finds the table row for a. consumed reports that the value is the
// next argument.
func match(a string, rest []string) (spec *optSpec, value string, consumed, ok bool) {
	for i := range optionTable {
		s := &optionTable[i]
		switch s.kind {
		case flag:
			if a == s.name {
				return s, "", false, true
			}
		case joined:
			if strings.HasPrefix(a, s.name) {
				return s, a[len(s.name):], false, true
			}
		case separate:
			if a == s.name {
				if len(rest) > 0 {
					return s, rest[0], true, true
				}
				return s, "", true, true
			}
		case joinedOrSep:
			if a == s.name {
				if len(rest) > 0 {
					return s, rest[0], true, true
				}
				return s, "", true, true
			}
			if strings.HasPrefix(a, s.name) {
				if s.name == "-j" && !isDigits(a[2:]) && a[2:] != "jobserver" {
					continue // some other option that starts with -j
				}
				return s, a[len(s.name):], false, true
			}
		}
	}
	return nil, "", false, false
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
