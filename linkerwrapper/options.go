package linkerwrapper

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/offcc/offcc/target"
	"github.com/offcc/offcc/toolchain"
)

// optID names one clang-linker-wrapper option (LinkerWrapperOpts.td).
type optID int

const (
	optUnknown optID = iota
	optHostTriple
	optTriple
	optArch
	optLinkerPath
	optOutput
	optDeviceLinker
	optDeviceCompiler
	optCompilerArg
	optLinkerArg
	optMllvm
	optOffloadOpt
	optShouldExtract
	optDryRun
	optVerbose
	optSaveTemps
	optWrapperJobs
	optEmbedBitcode
	optPrintWrapped
	optRelocatable
	optLibraryPath
	optLibrary
	optLibraryAsPath // --library[=]: LLVM 22 defines it as an alias of the library path
	optRpath
	optWholeArchive
	optNoWholeArchive
	optSysroot
	optCudaPath
	optOverrideImage
	optEmitFatbinOnly
	optCompress       // --compress: compressed HIP fat binaries
	optSYCLBIN        // --syclbin=STATE: offcc's SYCLBIN mode
	optSYCLBINVersion // --syclbin-version=N
	optIgnored        // accepted wrapper options offcc has no use for
	optOptLevel       // --opt-level=O<n> (LLVM 19): -O<n> of every device link
	optDeviceDebug    // --device-debug (LLVM 19): -g in every device link
	optForeign        // LLVM 19's options whose effect offcc's link stage does not have
	optDashDash
)

// optForm is how an option takes its value.
type optForm int

const (
	formFlag      optForm = iota // exact match, no value
	formJoined                   // value follows the name in the same argument ("--x=v")
	formSeparate                 // value is the next argument ("-x v")
	formJoinedSep                // either ("-Lv" or "-L v")
)

// optSpec is one row of the option table.
type optSpec struct {
	name string
	form optForm
	id   optID
	// wrapperOnly options are not forwarded to the host linker.
	wrapperOnly bool
}

// optTable mirrors clang-linker-wrapper's option table (LLVM 22). Options not
// listed are host linker arguments, passed through unchanged and in order.
// optTable19 is LLVM 19's (tableFor).
var optTable = []optSpec{
	{"--host-triple=", formJoined, optHostTriple, true},
	{"--triple=", formJoined, optTriple, true},
	{"--arch=", formJoined, optArch, true},
	{"--linker-path=", formJoined, optLinkerPath, true},
	{"-o", formJoinedSep, optOutput, false},
	{"--output=", formJoined, optOutput, false},
	{"--output", formSeparate, optOutput, false},
	{"--device-linker=", formJoined, optDeviceLinker, true},
	{"--device-compiler=", formJoined, optDeviceCompiler, true},
	{"--compiler-arg=", formJoined, optCompilerArg, true},
	{"--linker-arg=", formJoined, optLinkerArg, true},
	{"-mllvm", formSeparate, optMllvm, true},
	{"--offload-opt=", formJoined, optOffloadOpt, true},
	{"--should-extract=", formJoined, optShouldExtract, true},
	{"--dry-run", formFlag, optDryRun, true},
	{"--wrapper-verbose", formFlag, optVerbose, true},
	{"--save-temps", formFlag, optSaveTemps, true},
	{"--wrapper-jobs=", formJoined, optWrapperJobs, true},
	{"--embed-bitcode", formFlag, optEmbedBitcode, true},
	{"--print-wrapped-module", formFlag, optPrintWrapped, true},
	{"-r", formFlag, optRelocatable, false},
	{"--relocatable", formFlag, optRelocatable, false},
	{"-L", formJoinedSep, optLibraryPath, false},
	{"--library-path=", formJoined, optLibraryPath, false},
	{"--library-path", formSeparate, optLibraryPath, false},
	{"-l", formJoinedSep, optLibrary, false},
	{"--library=", formJoined, optLibraryAsPath, false},
	{"--library", formSeparate, optLibraryAsPath, false},
	{"-rpath", formSeparate, optRpath, false},
	{"--whole-archive", formFlag, optWholeArchive, false},
	{"--no-whole-archive", formFlag, optNoWholeArchive, false},
	{"--sysroot=", formJoined, optSysroot, false},
	{"--cuda-path=", formJoined, optCudaPath, true},
	{"--override-image=", formJoined, optOverrideImage, true},
	{"--emit-fatbin-only", formFlag, optEmitFatbinOnly, true},
	{"--syclbin=", formJoined, optSYCLBIN, true},
	{"--syclbin-version=", formJoined, optSYCLBINVersion, true},
	{"--compress", formFlag, optCompress, true},
	{"--compression-level=", formJoined, optIgnored, true},
	{"--whole-program", formFlag, optIgnored, true},
	{"--wrapper-time-trace=", formJoined, optIgnored, true},
	{"--wrapper-time-trace-granularity=", formJoined, optIgnored, true},
	{"--", formFlag, optDashDash, true},
}

// only22 are the options of LLVM 22's clang-linker-wrapper that LLVM 19's
// lacks (offcc's own --syclbin= ones, which need 22, among them).
var only22 = map[string]bool{
	"--compiler-arg=": true, "--device-compiler=": true, "--emit-fatbin-only": true, "--should-extract=": true,
	"--syclbin=": true, "--syclbin-version=": true,
}

// optTable19 is LLVM 19's clang-linker-wrapper option table (its
// --help-hidden): LLVM 22's without only22, with 19's own options.
var optTable19 = func() []optSpec {
	var t []optSpec
	for _, s := range optTable {
		if !only22[s.name] {
			t = append(t, s)
		}
	}
	return append(t,
		optSpec{"--opt-level=", formJoined, optOptLevel, true},
		optSpec{"--device-debug", formFlag, optDeviceDebug, true},
		optSpec{"--ptxas-arg=", formJoined, optForeign, true},
		optSpec{"--bitcode-library=", formJoined, optForeign, true},
		optSpec{"--builtin-bitcode=", formJoined, optForeign, true},
		optSpec{"--clang-backend", formFlag, optForeign, true},
		optSpec{"--pass-remarks=", formJoined, optForeign, true},
		optSpec{"--pass-remarks-missed=", formJoined, optForeign, true},
		optSpec{"--pass-remarks-analysis=", formJoined, optForeign, true},
	)
}()

// tableFor returns the option table of a release's clang-linker-wrapper.
func tableFor(form toolchain.WrapperForm) []optSpec {
	if form == toolchain.Wrapper19 {
		return optTable19
	}
	return optTable
}

// matchOption finds the longest entry of table matching arg. It returns
// the spec, the joined value (if any) and whether the value is in the next
// argument.
func matchOption(table []optSpec, arg string) (spec *optSpec, value string, needNext bool) {
	best := -1
	for i := range table {
		s := &table[i]
		ok := false
		switch s.form {
		case formFlag, formSeparate:
			ok = arg == s.name
		case formJoined:
			ok = strings.HasPrefix(arg, s.name)
		case formJoinedSep:
			ok = strings.HasPrefix(arg, s.name)
		}
		if ok && (best < 0 || len(s.name) > len(table[best].name)) {
			best = i
		}
	}
	if best < 0 {
		return nil, "", false
	}
	s := &table[best]
	switch s.form {
	case formSeparate:
		return s, "", true
	case formJoined:
		return s, arg[len(s.name):], false
	case formJoinedSep:
		if arg == s.name {
			return s, "", true
		}
		return s, arg[len(s.name):], false
	}
	return s, "", false
}

// itemKind classifies the link-order items that matter for input scanning and
// for the libraries a CPU device link copies from the host link.
type itemKind int

const (
	itemInput itemKind = iota
	itemLibrary
	itemLibraryPath
	itemRpath
	itemWholeArchive
	itemNoWholeArchive
	// itemOptionValue is the value of a host linker option LLVM's
	// wrapper does not know ("-dynamic-linker /lib64/ld-linux-x86-64.so.2",
	// "-m elf_x86_64"): the wrapper takes it for an input file, so a
	// shared object or archive there joins a CPU device link's libraries
	// (and is scanned for images). It is not an input of the host link.
	itemOptionValue
)

// item is one link-order element of the host command line.
type item struct {
	kind  itemKind
	value string
}

// tripleValue is a --device-linker / --device-compiler value, optionally
// restricted to one triple.
type tripleValue struct{ triple, value string }

// options is the parsed clang-linker-wrapper command line.
type options struct {
	hostTriple, linkerPath string
	output                 string
	deviceLinker           []tripleValue
	deviceCompiler         []tripleValue
	compilerArgs           []string
	linkerArgs             []string
	mllvm                  []string
	pluginOpts             []string // -mllvm and --offload-opt values in command-line order
	shouldExtract          map[string]bool
	dryRun, verbose        bool
	saveTemps              bool
	embedBitcode           bool
	printWrapped           bool
	relocatable            bool
	emitFatbinOnly         bool
	// syclbin is the state of the .syclbin file to write instead of a
	// program (--syclbin=input|object|executable); syclbinVersion is its
	// encoding (0: version 1).
	syclbin        string
	syclbinVersion int
	// compress (--compress) asks for a compressed HIP fat binary.
	compress      bool
	overrideImage bool
	// optLevel is --opt-level's value (LLVM 19; "": O2) and deviceDebug
	// --device-debug's; foreign names the options given that offcc's
	// link stage has no effect of (LLVM 19's --ptxas-arg= and others).
	optLevel          string
	deviceDebug       bool
	foreign           []string
	wrapperJobs       int // 0: not given
	wrapperJobserver  bool
	cudaPath, sysroot string

	// hostArgs is the host linker command line without the linker itself;
	// outIndex is the index of the output file name in it (-1 when there is
	// no -o), after which the wrapper object is inserted.
	hostArgs []string
	outIndex int
	// items lists inputs, libraries, search paths and archive markers in
	// link order.
	items []item
}

// parseArgs parses the command line of a release's clang-linker-wrapper.
func parseArgs(form toolchain.WrapperForm, args []string) (*options, error) {
	o := &options{shouldExtract: map[string]bool{}, outIndex: -1}
	table := tableFor(form)
	afterDashDash := false
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if afterDashDash {
			o.passThrough(args, &i)
			continue
		}
		spec, val, needNext := matchOption(table, arg)
		if spec == nil {
			if strings.HasPrefix(arg, "--wrapper-") || strings.HasPrefix(arg, "-wrapper-") {
				return nil, fmt.Errorf("unknown argument: '%s'", arg)
			}
			o.hostArgs = append(o.hostArgs, arg)
			if ldSeparateValue[arg] && i+1 < len(args) {
				// The value is the option's, not an input file of the
				// host link; LLVM's wrapper takes it for one, though.
				i++
				o.hostArgs = append(o.hostArgs, args[i])
				o.items = append(o.items, item{itemOptionValue, args[i]})
				continue
			}
			if arg == "-" || !strings.HasPrefix(arg, "-") {
				o.items = append(o.items, item{itemInput, arg})
			}
			continue
		}
		if needNext {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("argument to '%s' is missing (expected 1 value)", arg)
			}
			i++
			val = args[i]
		}
		switch spec.id {
		case optHostTriple:
			o.hostTriple = val
		case optLinkerPath:
			o.linkerPath = val
		case optOutput:
			o.output = val
			o.hostArgs = append(o.hostArgs, "-o", val)
			o.outIndex = len(o.hostArgs) - 1
		case optDeviceLinker:
			o.deviceLinker = append(o.deviceLinker, splitTripleValue(val))
		case optDeviceCompiler:
			o.deviceCompiler = append(o.deviceCompiler, splitTripleValue(val))
		case optCompilerArg:
			o.compilerArgs = append(o.compilerArgs, val)
		case optLinkerArg:
			o.linkerArgs = append(o.linkerArgs, val)
		case optMllvm:
			o.mllvm = append(o.mllvm, val)
			o.pluginOpts = append(o.pluginOpts, val)
		case optOffloadOpt:
			o.pluginOpts = append(o.pluginOpts, val)
		case optShouldExtract:
			o.shouldExtract[val] = true
		case optDryRun:
			o.dryRun = true
		case optVerbose:
			o.verbose = true
		case optSaveTemps:
			o.saveTemps = true
		case optWrapperJobs:
			if val == "jobserver" {
				o.wrapperJobserver = true
				break
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("--wrapper-jobs=%s: expected a positive integer or 'jobserver', got '%s'", val, val)
			}
			o.wrapperJobs = n
		case optEmbedBitcode:
			o.embedBitcode = true
		case optPrintWrapped:
			o.printWrapped = true
		case optRelocatable:
			o.relocatable = true
			o.hostArgs = append(o.hostArgs, "--relocatable")
		case optLibraryPath, optLibraryAsPath:
			o.hostArgs = append(o.hostArgs, "-L", val)
			o.items = append(o.items, item{itemLibraryPath, val})
		case optLibrary:
			o.hostArgs = append(o.hostArgs, "-l", val)
			o.items = append(o.items, item{itemLibrary, val})
		case optRpath:
			o.hostArgs = append(o.hostArgs, "-rpath", val)
			o.items = append(o.items, item{itemRpath, val})
		case optWholeArchive:
			o.hostArgs = append(o.hostArgs, arg)
			o.items = append(o.items, item{itemWholeArchive, ""})
		case optNoWholeArchive:
			o.hostArgs = append(o.hostArgs, arg)
			o.items = append(o.items, item{itemNoWholeArchive, ""})
		case optSysroot:
			o.sysroot = val
			o.hostArgs = append(o.hostArgs, arg)
		case optCudaPath:
			o.cudaPath = val
		case optOverrideImage:
			o.overrideImage = true
		case optEmitFatbinOnly:
			o.emitFatbinOnly = true
		case optCompress:
			o.compress = true
		case optSYCLBIN:
			switch val {
			case "input", "object", "executable":
				o.syclbin = val
			default:
				return nil, fmt.Errorf("invalid value '%s' in '--syclbin=': expected input, object or executable", val)
			}
		case optSYCLBINVersion:
			if val != "1" && val != "2" {
				return nil, fmt.Errorf("invalid value '%s' in '--syclbin-version=': expected 1 or 2", val)
			}
			o.syclbinVersion = int(val[0] - '0')
		case optOptLevel:
			o.optLevel = val
		case optDeviceDebug:
			o.deviceDebug = true
		case optForeign:
			o.foreign = append(o.foreign, spec.name)
		case optDashDash:
			afterDashDash = true
		case optTriple, optArch, optIgnored:
		}
	}
	if o.hostTriple == "" {
		o.hostTriple = target.DefaultHostTriple()
	}
	return o, nil
}

// passThrough handles one argument after "--": it goes to the host linker
// verbatim, and -l/-L/inputs still take part in input scanning.
func (o *options) passThrough(args []string, i *int) {
	arg := args[*i]
	o.hostArgs = append(o.hostArgs, arg)
	switch {
	case arg == "-l" || arg == "-L":
		if *i+1 < len(args) {
			*i++
			o.hostArgs = append(o.hostArgs, args[*i])
			k := itemLibrary
			if arg == "-L" {
				k = itemLibraryPath
			}
			o.items = append(o.items, item{k, args[*i]})
		}
	case strings.HasPrefix(arg, "-l"):
		o.items = append(o.items, item{itemLibrary, arg[2:]})
	case strings.HasPrefix(arg, "-L"):
		o.items = append(o.items, item{itemLibraryPath, arg[2:]})
	case arg == "--whole-archive":
		o.items = append(o.items, item{itemWholeArchive, ""})
	case arg == "--no-whole-archive":
		o.items = append(o.items, item{itemNoWholeArchive, ""})
	case ldSeparateValue[arg]:
		if *i+1 < len(args) {
			*i++
			o.hostArgs = append(o.hostArgs, args[*i])
			o.items = append(o.items, item{itemOptionValue, args[*i]})
		}
	case !strings.HasPrefix(arg, "-"):
		o.items = append(o.items, item{itemInput, arg})
	}
}

// ldSeparateValue lists the GNU ld options (as clang's driver writes them)
// whose value is the next argument, so that the value is not taken for an
// input file: "-m elf_x86_64", "-dynamic-linker /lib64/ld-linux-x86-64.so.2".
var ldSeparateValue = map[string]bool{
	"-m": true, "-dynamic-linker": true, "--dynamic-linker": true, "-z": true,
	"-soname": true, "-h": true, "-T": true, "-e": true, "--entry": true,
	"-u": true, "--undefined": true, "-y": true, "--trace-symbol": true,
	"-Map": true, "--version-script": true, "--dynamic-list": true,
	"-plugin": true, "-plugin-opt": true, "-R": true, "--just-symbols": true,
	"-Y": true, "-a": true, "-A": true, "--architecture": true, "-b": true,
	"--format": true, "-c": true, "--mri-script": true, "-f": true, "--auxiliary": true,
	"-F": true, "--filter": true, "-G": true, "--gpsize": true, "--exclude-libs": true,
	"--defsym": true, "-Ttext": true, "-Tdata": true, "-Tbss": true, "--section-start": true,
	"--image-base": true, "--sort-section": true, "--wrap": true,
}

// splitTripleValue splits "[triple=]value". A prefix that looks like an
// option (starts with '-') is part of the value, not a triple.
func splitTripleValue(v string) tripleValue {
	if t, rest, ok := strings.Cut(v, "="); ok && t != "" && !strings.HasPrefix(t, "-") {
		return tripleValue{t, rest}
	}
	return tripleValue{"", v}
}
