package farm

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/offcc/offcc/options"
)

// Job is one action sent to a worker: the record of its job entry, whose
// blobs are the files it reads.
type Job struct {
	Version int    `json:"v"`
	ID      string `json:"id"`
	// Toolchain is the identity of the toolchain the job's tool belongs
	// to, which names its stream: the LLVM installation's for clang and
	// lld, the CUDA toolkit's for ptxas, fatbinary and nvlink.
	Toolchain string `json:"toolchain"`
	// Tool is "clang" (argv[1] "-cc1"), "lld", or a CUDA tool ("ptxas",
	// "fatbinary", "nvlink"); ToolID its identity.
	Tool   string   `json:"tool"`
	ToolID string   `json:"tool_id"`
	Args   []string `json:"args"` // argv[1:] as the client runs it
	// Dir is the client's working directory: clang resolves relative
	// paths against it (-working-directory) inside the overlay.
	Dir string `json:"dir"`
	// Files are the files the tool reads, each a blob of the entry.
	Files []File `json:"files"`
	// Outputs are the output paths as Args name them; the result's
	// blob "o<i>" is Outputs[i].
	Outputs []string `json:"outputs"`
	// Kind and Client describe the job for status.
	Kind   string `json:"kind"`
	Client string `json:"client"`
	// Peak is the peak resident memory, in bytes, the client expects
	// the job to reach (its learned peak), 0 when unknown: a worker
	// takes the job only while it fits beside those it runs. Records
	// without it are version 1 all the same.
	Peak int64 `json:"peak,omitempty"`
	// Expires is when the job may no longer run, in Unix milliseconds:
	// a worker refuses a job past it, or further ahead than it accepts
	// (maxJobLife), and runs a job ID at most once before it, so that a
	// signed job put back on the stream is not run again.
	Expires int64 `json:"expires"`
}

// JobVersion is the version of the job records clients write and
// workers read: 2 added Expires.
const JobVersion = 2

// File is one input of a job.
type File struct {
	// Path is the file's absolute, clean path on the client.
	Path string `json:"path"`
	// Arg, when set, is how Args names it (lld and CUDA tool jobs: the
	// argument, or fatbinary's image file=, the worker replaces with its
	// copy).
	Arg string `json:"arg,omitempty"`
	// Blob names the entry's blob with the bytes.
	Blob string `json:"blob"`
	Mode uint32 `json:"mode"`
}

// Result is the record of a job's result entry.
type Result struct {
	Worker string `json:"worker"`
	// Job, Toolchain and JobSum say which job this answers: its ID, the
	// toolchain it ran with, and the digest of its entry as the worker
	// read it (see jobSum). The client believes a result only for the
	// job it sent, signed by a worker it trusts.
	Job       string `json:"job"`
	Toolchain string `json:"toolchain"`
	JobSum    string `json:"job_sum"`
	// Client is the name of the key that signed the job.
	Client string `json:"client,omitempty"`
	// Refused, when set, says why the worker did not run the job.
	Refused string `json:"refused,omitempty"`
	Code    int    `json:"code"`
	Stdout  []byte `json:"stdout,omitempty"`
	Stderr  []byte `json:"stderr,omitempty"`
	RunMS   int64  `json:"run_ms"`
	// FetchMS is the time the worker took to fetch the inputs; WorkMS
	// the time from its claim to its result (fetch and run included).
	FetchMS int64 `json:"fetch_ms"`
	WorkMS  int64 `json:"work_ms"`
	// PeakRSS is the peak resident memory the run reached, in bytes (0:
	// not measured), for the client to learn the job's peak from.
	PeakRSS int64 `json:"peak_rss,omitempty"`
}

func decodeJob(data []byte) (*Job, error) {
	var j Job
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("job record does not decode: %v", err)
	}
	if j.Version != JobVersion {
		return nil, fmt.Errorf("job version %d (this worker speaks %d)", j.Version, JobVersion)
	}
	return &j, nil
}

// outputIDs are the options, by tool, whose value an output of a job is:
// the only options that write files a job may have.
var outputIDs = map[string]map[string]bool{
	"clang": {"o": true, "dependency_file": true},
	"lld":   {"o": true},
}

// lldAllowed are the lld options a worker runs, by ID: those of the
// device links clang's and offcc's drivers make (AMDGPU's "-m
// elf64_amdgpu --no-undefined -shared -plugin-opt=... -o OUT IN...", which
// the worker runs as ld.lld) and a few that change no file lld reads or
// writes. Anything else runs on the client. Values are names (no '/');
// inputs are the job's files. -flavor is not one of them: see
// lldDriverMode.
var lldAllowed = map[string]bool{
	"m": true, "o": true, "INPUT": true,
	"no_undefined": true, "shared": true, "Bshareable": true, "pie": true, "no_pie": true,
	"whole_archive": true, "no_whole_archive": true, "as_needed": true, "no_as_needed": true,
	"plugin_opt": true, "plugin_opt_eq": true, "plugin_opt_eq_minus": true, "mllvm": true,
	"plugin_opt_mcpu_eq": true, "lto_O": true, "lto_CGO": true, "lto_partitions": true,
	"thinlto_jobs_eq": true, "threads": true, "gc_sections": true, "no_gc_sections": true,
	"strip_all": true, "strip_debug": true, "build_id": true, "build_id_flag": true,
	"eh_frame_hdr": true, "no_eh_frame_hdr": true, "color_diagnostics": true,
	"no_color_diagnostics": true, "error_limit": true, "fatal_warnings": true,
	"no_fatal_warnings": true, "Bsymbolic": true, "Bdynamic": true, "Bstatic": true,
	"z": true, "hash_style": true, "discard_all": true, "discard_locals": true,
}

// lldEmulations are the values -m may have in an lld job: the ELF
// emulations of device links. clang's AMDGPU toolchain passes "-m
// elf64_amdgpu" (HIP and OpenMP device links of the old offload driver);
// an x86_64 host-device link (OpenMP -fopenmp-targets=x86_64-pc-linux-gnu,
// linked with lld) has "-m elf_x86_64". The device links of the new
// driver pass no -m (lld takes the emulation from the first input);
// NVPTX and SPIR-V devices are not linked with lld.
var lldEmulations = map[string]bool{"elf64_amdgpu": true, "elf_x86_64": true}

// lldDriverMode returns why lld, run as ld.lld with the arguments argv,
// might run another driver than its ELF driver, or "". lld (LLVM 22,
// lld/tools/lld/lld.cpp) picks its driver before any option is parsed:
// "-flavor F" as the first argument selects the ELF (gnu, ld, ld.lld),
// COFF (link), Mach-O (darwin, ld64, ld64.lld) or WebAssembly (wasm,
// ld-wasm) driver whatever argv[0] says; and in the ELF flavour the
// first word "-m" followed by a PE emulation (i386pe, i386pep, thumb2pe,
// arm64pe, arm64ecpe, arm64xpe, mipspe; matched word by word, whatever
// option the words belong to) selects the MinGW driver. (Joined
// spellings, -mi386pep or -m=i386pep, do not: the ELF driver reads them
// as unknown emulations.) So a worker refuses -flavor wherever it
// stands, in any spelling, and every word "-m" not followed by an
// emulation of lldEmulations; check allows -m in other spellings only
// with such an emulation too.
func lldDriverMode(argv []string) string {
	for i, a := range argv {
		if strings.HasPrefix(a, "-") && strings.HasPrefix(strings.TrimLeft(a, "-"), "flavor") {
			return fmt.Sprintf("option %s is not run on workers (lld runs only as ld.lld, its ELF driver)", a)
		}
		if a == "-m" && i+1 < len(argv) && !lldEmulations[argv[i+1]] {
			return fmt.Sprintf("option -m %s is not run on workers (%s)", argv[i+1], emulationWhy(argv[i+1]))
		}
	}
	return ""
}

// peEmulations are the -m values with which lld runs its MinGW driver
// (isPETargetName in lld/tools/lld/lld.cpp).
var peEmulations = map[string]bool{
	"i386pe": true, "i386pep": true, "thumb2pe": true, "arm64pe": true,
	"arm64ecpe": true, "arm64xpe": true, "mipspe": true,
}

// emulationWhy says why lld's -m v is refused.
func emulationWhy(v string) string {
	if peEmulations[v] {
		return fmt.Sprintf("%s is a PE emulation: -m %s switches lld to its MinGW driver", v, v)
	}
	return "not an emulation of the device links: elf64_amdgpu, elf_x86_64"
}

// llvmValues are the shapes of value an LLVM option may be given on a
// worker, as a set: none of them names a file.
type llvmValues uint8

const (
	// llvmNone: -name, no value.
	llvmNone llvmValues = 1 << iota
	// llvmBool: -name=true, false, 1 or 0.
	llvmBool
	// llvmNumber: -name=N, N decimal digits.
	llvmNumber
	// llvmWord: -name=W, W of letters, digits and "+,_-." that does
	// not start with '.' (no '/', no '@', no '=').
	llvmWord
)

// llvmTools are the tools that take an LLVM option on a worker, as a set.
type llvmTools uint8

const (
	// llvmCC1: clang -cc1 -mllvm X.
	llvmCC1 llvmTools = 1 << iota
	// llvmLLD: ld.lld -mllvm X, -plugin-opt=-X and -plugin-opt -X.
	llvmLLD
)

// llvmOption is an LLVM option of llvmAllowed: the values it may take, the
// tools it may be passed to, and why it is allowed.
type llvmOption struct {
	values llvmValues
	tools  llvmTools
	from   string
}

// llvmAllowed are the LLVM options (-mllvm X in clang -cc1 and lld, and
// lld's -plugin-opt=-X and -plugin-opt -X) a worker passes on, by name
// (what comes before '=', without its leading dashes): each with the
// shapes of value it may take, none of which names a file: the options
// clang 22's drivers pass to device compiles and links, and a few target
// tuning knobs. Each is checked to open no file: TestLLVMOptionsOpenNoFile
// runs the real clang -cc1 (for amdgcn, nvptx64, spirv64 and x86_64) and
// the real ld.lld (AMDGPU and x86_64 LTO links, as -plugin-opt=-X and
// -mllvm X) with it, with each shape of value, in an empty directory that
// is also the run's TMPDIR, and finds nothing there afterwards but the
// output; where strace is installed, it also finds that the run names no
// file that the same run without the option does not.
// TestLLVMOptionsOfClang checks that clang's own options are all here.
// Every other LLVM option runs on the client: LLVM has options that load
// code (-load, -load-pass-plugin, -x86-lvi-load-opt-plugin), that write
// files (-info-output-file=, -stats-file=, -amdgpu-module-splitting-
// print-partition-summaries=, -amdgpu-module-splitting-print-module-dotcfg=)
// or that write a file per function (-x86-lvi-load-dot-only), and value
// shapes alone do not tell them apart.
var llvmAllowed = map[string]llvmOption{
	// What clang 22's drivers pass to device compiles and links (clang
	// -### of HIP, CUDA, OpenMP offload and SYCL builds).
	"amdgpu-internalize-symbols": {llvmNone | llvmBool, llvmCC1 | llvmLLD,
		"clang: HIP device compiles (-mllvm) and AMDGPU device links of the old offload driver (-plugin-opt=-)"},
	"amdhsa-code-object-version": {llvmNumber, llvmCC1 | llvmLLD,
		"clang: AMDGPU device compiles with -mcode-object-version=N"},
	"enable-memcpyopt-without-libcalls": {llvmNone | llvmBool, llvmCC1,
		"clang: CUDA and OpenMP NVPTX device compiles"},
	"nvptx-short-ptr": {llvmNone | llvmBool, llvmCC1,
		"clang: NVPTX device compiles with -fcuda-short-ptr"},
	"vectorize-loops": {llvmNone | llvmBool, llvmCC1 | llvmLLD,
		"clang: SPIR-V device compiles of HIP (--offload=spirv64), =false"},
	"vectorize-slp": {llvmNone | llvmBool, llvmCC1 | llvmLLD,
		"clang: SPIR-V device compiles of HIP (--offload=spirv64), =false"},
	"mattr": {llvmWord, llvmLLD,
		"clang: AMDGPU device links with target features (gfx90a:xnack+, -mwavefrontsize64, -mno-tgsplit): -plugin-opt=-mattr=+xnack,-tgsplit"},

	// Tuning knobs users pass (-mllvm, -Xoffload-linker -mllvm=, -Xarch_device
	// -mllvm).
	"amdgpu-early-inline-all":               {llvmNone | llvmBool, llvmCC1 | llvmLLD, "tuning: inline every AMDGPU function (older clangs passed =true)"},
	"amdgpu-function-calls":                 {llvmNone | llvmBool, llvmCC1 | llvmLLD, "tuning: AMDGPU function calls (older clangs passed =false)"},
	"amdgpu-kernarg-preload-count":          {llvmNumber, llvmCC1 | llvmLLD, "tuning: AMDGPU kernel arguments preloaded into SGPRs"},
	"amdgpu-promote-alloca-to-vector-limit": {llvmNumber, llvmCC1 | llvmLLD, "tuning: AMDGPU alloca promotion"},
	"amdgpu-unroll-threshold-private":       {llvmNumber, llvmCC1 | llvmLLD, "tuning: AMDGPU unrolling"},
	"inline-threshold":                      {llvmNumber, llvmCC1 | llvmLLD, "tuning: inliner"},
	"inlinehint-threshold":                  {llvmNumber, llvmCC1 | llvmLLD, "tuning: inliner"},
	"unroll-threshold":                      {llvmNumber, llvmCC1 | llvmLLD, "tuning: loop unrolling"},
	"nvptx-sched4reg":                       {llvmNone | llvmBool, llvmCC1, "tuning: NVPTX scheduling for register pressure"},
	"nvptx-prec-divf32":                     {llvmNumber, llvmCC1, "tuning: NVPTX f32 division precision (0-3)"},
	"nvptx-prec-sqrtf32":                    {llvmNone | llvmBool, llvmCC1, "tuning: NVPTX f32 square root precision"},
}

// llvmOptionRefused returns why the LLVM option v (with its leading
// dashes, and a value after '=' if any) is not passed on to tool, or "".
func llvmOptionRefused(v string, tool llvmTools) string {
	name, value, hasValue := strings.Cut(v, "=")
	dashes := len(name) - len(strings.TrimLeft(name, "-"))
	name = name[dashes:]
	o, ok := llvmAllowed[name]
	switch {
	case dashes != 1 && dashes != 2:
		return fmt.Sprintf("%s is not an LLVM option", v)
	case !ok:
		return "an LLVM option outside the allow-list"
	case o.tools&tool == 0:
		return fmt.Sprintf("an LLVM option outside the allow-list: %s is not passed to this tool", name)
	case !hasValue && o.values&llvmNone != 0,
		hasValue && o.values&llvmBool != 0 && (value == "true" || value == "false" || value == "1" || value == "0"),
		hasValue && o.values&llvmNumber != 0 && isNumber(value),
		hasValue && o.values&llvmWord != 0 && isWord(value):
		return ""
	}
	return fmt.Sprintf("an LLVM option outside the allow-list: %s takes %s", name, o.values)
}

// isNumber reports whether s is 1 to 9 decimal digits.
func isNumber(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isWord reports whether s is a word of llvmWord: letters, digits and
// "+,_-.", not starting with '.'.
func isWord(s string) bool {
	if s == "" || s[0] == '.' {
		return false
	}
	for _, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.ContainsRune("+,_-.", c):
		default:
			return false
		}
	}
	return true
}

func (v llvmValues) String() string {
	var s []string
	for _, x := range []struct {
		v    llvmValues
		name string
	}{{llvmNone, "no value"}, {llvmBool, "=true or =false"}, {llvmNumber, "=NUMBER"}, {llvmWord, "=WORD"}} {
		if v&x.v != 0 {
			s = append(s, x.name)
		}
	}
	return strings.Join(s, " or ")
}

// pathLike reports whether an option's value could name a file: it has a
// slash or starts with '.' or '~'.
func pathLike(v string) bool {
	return strings.ContainsRune(v, '/') || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~")
}

// climbs reports whether path p has a ".." component.
func climbs(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// denied returns why a worker never runs a command line with the argument
// a, wherever a stands in it, or "": a response file, which the tool
// reads before anything else from the worker's own files (offcc writes
// them at run time only). What else a worker refuses depends on the
// whole command line, parsed with its tool's option table: see check.
func denied(a string) string {
	if strings.HasPrefix(a, "@") {
		return fmt.Sprintf("response file %s is not run on workers", a)
	}
	return ""
}

// mustShip reports whether the values of an argument of o name files the
// job reads, which must be files it ships: inputs and files read.
func mustShip(o *options.Option) bool {
	return o.Value == options.ReadFile || o.Kind == options.Input
}

// pathOf returns the absolute path the clang -cc1 argument a names by
// itself, if any, read with cc1, the option table of the job's clang: a
// as an input, or the value joined to an option whose values must be
// shipped (see mustShip). The value of a separate option is an argument
// of its own.
func pathOf(cc1 *options.Table, a string) (string, bool) {
	arg, err := cc1.ParseOne([]string{a}, 0)
	if err != nil || arg.IsUnknown() || !mustShip(arg.Option) {
		return "", false
	}
	for _, v := range arg.Values {
		if filepath.IsAbs(v) {
			return v, true
		}
	}
	return "", false
}

// plan is a checked job's command line, parsed: check's verdict and what
// the worker runs, rewritten from the parse (never word by word, so no
// value can be taken for an option the worker rewrites).
type plan struct {
	tool string
	argv []string
	args []*options.Arg
	// outputAt are the indexes in args of the job's output options.
	outputAt map[int]bool
	// edits, for a CUDA tool (which has no option table), are the words
	// of argv the worker rewrites, by index (see checkCUDA).
	edits map[int]cudaEdit
}

// command returns the arguments the worker runs: argv with each output
// option's value replaced by out[value] and, for lld, each input by
// in[value] (the worker's copies).
func (p *plan) command(out, in map[string]string) []string {
	cmd := make([]string, 0, len(p.argv)+4)
	if p.edits != nil {
		for i, w := range p.argv {
			e, ok := p.edits[i]
			switch {
			case !ok:
				cmd = append(cmd, w)
			case e.output:
				cmd = append(cmd, out[e.value])
			default:
				cmd = append(cmd, e.prefix+in[e.value]+e.suffix)
			}
		}
		return cmd
	}
	if p.tool == "clang" {
		cmd = append(cmd, "-cc1")
	}
	for i, a := range p.args {
		words := a.Words(p.argv)
		switch {
		case p.outputAt[i]:
			cmd = append(cmd, words[0], out[a.Value()])
		case p.tool == "lld" && a.IsInput():
			cmd = append(cmd, in[a.Value()])
		default:
			cmd = append(cmd, words...)
		}
	}
	return cmd
}

// check returns the plan of j, or why a worker must not run it, reading
// its command line with tables, the option tables of the LLVM release
// whose clang and lld run it (the client's and the worker's, whose
// toolchain identities are the job's).
//
// The command line is parsed once with its tool's option table (the
// release's clang -cc1 or ld.lld), and every argument must be allowed, by
// what the option model says of it (for that release: an option the
// release's table does not know is refused as unknown):
//
//   - clang -cc1: a flag; a name, macro or search directory (read only
//     through the VFS overlay, which shows nothing but the shipped
//     files); a file read or an input that the job ships; an
//     unclassified value that names no file (no '/', no leading '.'),
//     or is a shipped file; -mllvm with an option of llvmAllowed, with a
//     value of a shape it allows. Never an option the model marks
//     NoRemote, a file or directory written other than the job's
//     outputs, a plugin or program, or an option that takes the rest of
//     the line.
//   - lld, which the worker runs as ld.lld: its ELF driver only, so no
//     -flavor anywhere and -m only with an emulation of lldEmulations
//     (see lldDriverMode); the options of lldAllowed only, names without
//     '/', -plugin-opt values read as lld reads them (LLVM options as
//     for -mllvm), inputs the job ships, by the name the job gives them,
//     that do not climb out of the directory.
//   - ptxas, fatbinary and nvlink, which have no option table: word by
//     word, the options of cudaAllowed only (see checkCUDA), inputs the
//     job ships (fatbinary's in --image3= and --image= specs, parsed),
//     and one output option naming an output of the job.
//
// Outputs are separate -o PATH (and cc1's -dependency-file PATH) naming
// outputs of the job; the worker rewrites them from the parse. As the
// line is parsed before the worker appends its own -ivfsoverlay and
// -working-directory, an option at its end that lacks its value is
// refused (a MissingValueError) rather than left to swallow them.
func check(j *Job, tables *options.Tables) (*plan, string) {
	var table *options.Table
	argv := j.Args
	switch j.Tool {
	case "clang":
		if len(j.Args) == 0 || j.Args[0] != "-cc1" {
			return nil, "clang runs only as clang -cc1"
		}
		table, argv = tables.ClangCC1(), j.Args[1:]
	case "lld":
		table = tables.LLD()
	default:
		if !isCUDATool(j.Tool) {
			return nil, fmt.Sprintf("tool %q is not one a worker runs (%s)", j.Tool, strings.Join(Tools, ", "))
		}
	}
	if !filepath.IsAbs(j.Dir) || filepath.Clean(j.Dir) != j.Dir {
		return nil, fmt.Sprintf("working directory %q is not an absolute clean path", j.Dir)
	}
	c := &checker{j: j, table: table, files: map[string]bool{}, outputs: map[string]bool{}}
	for _, f := range j.Files {
		if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path {
			return nil, fmt.Sprintf("file %q is not an absolute clean path", f.Path)
		}
		c.files[f.Path] = true
		if f.Arg != "" {
			if climbs(f.Arg) {
				return nil, fmt.Sprintf("argument %s leaves the job's directory", f.Arg)
			}
			c.files[f.Arg] = true
		}
	}
	for _, o := range j.Outputs {
		if o == "" || climbs(o) {
			return nil, fmt.Sprintf("output %q is not a path in the job's directory", o)
		}
		if c.outputs[o] {
			return nil, fmt.Sprintf("output %q is listed twice", o)
		}
		c.outputs[o] = true
	}
	// Word by word, wherever the word stands: response files are expanded
	// before any option is parsed, and lld picks its driver from words.
	for _, a := range argv {
		if why := denied(a); why != "" {
			return nil, why
		}
	}
	if j.Tool == "lld" {
		if why := lldDriverMode(argv); why != "" {
			return nil, why
		}
	}
	if table == nil {
		return checkCUDA(j, c)
	}
	args, err := table.Parse(argv)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", table.Tool, err)
	}
	p := &plan{tool: j.Tool, argv: argv, args: args, outputAt: map[int]bool{}}
	for i, a := range args {
		out, why := c.arg(a, argv, true)
		if why != "" {
			return nil, why
		}
		if out {
			p.outputAt[i] = true
		}
	}
	return p, ""
}

// checker is check's state for one job.
type checker struct {
	j       *Job
	table   *options.Table
	files   map[string]bool // shipped files, by path and by argument
	outputs map[string]bool // the job's outputs
}

// shipped reports whether the value v of a file read names a file the
// job ships: by absolute path, by lld's argument, or relative to the
// job's directory (where clang resolves it).
func (c *checker) shipped(v string) bool {
	if c.files[v] {
		return true
	}
	if c.j.Tool == "clang" && !filepath.IsAbs(v) && !climbs(v) {
		return c.files[filepath.Join(c.j.Dir, v)]
	}
	return false
}

// forcedIncludes are the IDs of the options whose value clang looks up
// as it looks up an #include "NAME": relative to the working directory,
// then through the search directories (clang's OpenMP device compiles
// have -include __clang_openmp_device_functions.h, CUDA's
// __clang_cuda_runtime_wrapper.h).
var forcedIncludes = map[string]bool{"include": true, "imacros": true}

// searched reports whether v, the value of the clang option o, is a
// forced include the worker's clang finds among the job's files through
// the search directories: a relative name that does not climb, which a
// shipped file's path ends with. clang opens it through the VFS overlay,
// which shows nothing but the shipped files.
func (c *checker) searched(o *options.Option, v string) bool {
	if c.j.Tool != "clang" || !forcedIncludes[o.ID] || v == "" || filepath.IsAbs(v) || climbs(v) ||
		filepath.Clean(v) != v || strings.HasPrefix(v, "./") {
		return false
	}
	for p := range c.files {
		if strings.HasSuffix(p, "/"+v) && filepath.IsAbs(p) {
			return true
		}
	}
	return false
}

// arg returns why the parsed argument a of argv is refused, or "", and
// whether it is an output option the worker rewrites. top is false for
// an argument that stands in another's value (lld's -plugin-opt X, read
// as --plugin-opt=X), which the worker never rewrites.
func (c *checker) arg(a *options.Arg, argv []string, top bool) (output bool, why string) {
	o := a.Option
	words := a.Words(argv)
	text := strings.Join(words, " ")
	switch {
	case a.IsUnknown():
		return false, fmt.Sprintf("%s has no option %s", c.table.Tool, a.Value())
	case o.Kind == options.RemainingArgs || o.Kind == options.RemainingArgsJoined:
		return false, fmt.Sprintf("option %s takes every argument after it (the worker's among them)", a.Spelling)
	case outputIDs[c.j.Tool][o.ID]:
		// An output joined to its option (-o/path, -ofile) or spelled
		// otherwise (--output=) is refused: one spelling, rewritten.
		if !top || a.Alias != nil || a.Count != 2 || (words[0] != "-o" && words[0] != "-dependency-file") {
			return false, fmt.Sprintf("option %s is not run on workers (outputs go as -o PATH)", text)
		}
		if !c.outputs[a.Value()] {
			return false, fmt.Sprintf("%s names no output of the job", words[0])
		}
		return true, ""
	case o.NoRemote != "":
		return false, fmt.Sprintf("option %s is not run on workers (%s)", text, o.NoRemote)
	case c.j.Tool == "lld" && !lldAllowed[o.ID]:
		return false, fmt.Sprintf("option %s is not run on workers (not one of the device links' options)", text)
	case c.j.Tool == "lld" && o.ID == "m" && !lldEmulations[a.Value()]:
		return false, fmt.Sprintf("option %s is not run on workers (%s)", text, emulationWhy(a.Value()))
	}
	switch o.Value {
	case options.WriteFile, options.WriteDir, options.Plugin, options.Program:
		// The option model gives these a NoRemote reason; an option it
		// left without one still writes outside the job or runs code.
		return false, fmt.Sprintf("option %s is not run on workers (its value is a %s)", text, o.Value)
	case options.Forward:
		return false, c.forward(a, text)
	case options.Name, options.Macro:
		if c.j.Tool == "lld" && pathLike(a.Value()) {
			return false, fmt.Sprintf("option %s is not run on workers (a name with a path)", text)
		}
		return false, ""
	case options.SearchDir:
		return false, "" // looked in through the overlay only (clang)
	}
	if mustShip(o) {
		for _, v := range a.Values {
			if climbs(v) && c.j.Tool == "lld" {
				return false, fmt.Sprintf("argument %s leaves the job's directory", v)
			}
			if !c.shipped(v) && !c.searched(o, v) {
				return false, fmt.Sprintf("%s names a file the job does not ship", text)
			}
		}
		return false, ""
	}
	// A value the model has not classified: a file only if shipped.
	for _, v := range a.Values {
		if pathLike(v) && !c.shipped(v) {
			if filepath.IsAbs(v) {
				return false, fmt.Sprintf("%s names a file the job does not ship", text)
			}
			return false, fmt.Sprintf("option %s is not run on workers (a value with a path)", text)
		}
	}
	return false, ""
}

// forward checks an argument whose value is for another layer: -mllvm X
// (clang and lld) and lld's -plugin-opt forms.
func (c *checker) forward(a *options.Arg, text string) string {
	switch {
	case isID(a, "mllvm"), isID(a, "plugin_opt_eq_minus"):
		v := a.Value()
		tool := llvmCC1
		if c.j.Tool == "lld" {
			tool = llvmLLD
		}
		if a.Option.ID == "plugin_opt_eq_minus" {
			v = "-" + v
		}
		if why := llvmOptionRefused(v, tool); why != "" {
			if strings.Contains(v, "load") || strings.Contains(v, "plugin") {
				return fmt.Sprintf("argument %s may load code (%s)", text, why)
			}
			return fmt.Sprintf("argument %s is not run on workers (%s)", text, why)
		}
		return ""
	case c.j.Tool == "lld" && (isID(a, "plugin_opt") || isID(a, "plugin_opt_eq")):
		// lld reads -plugin-opt X and --plugin-opt=X alike: as
		// --plugin-opt=X, parsed again.
		line := []string{"--plugin-opt=" + a.Value()}
		inner, err := c.table.ParseOne(line, 0)
		if err != nil {
			return fmt.Sprintf("%s: %v", c.table.Tool, err)
		}
		if inner.Option.ID == "plugin_opt_eq" {
			// No plugin option of lld's: ld.lld reports it as an
			// unknown plugin option (or ignores GCC's lto-wrapper
			// path); LLVM options go as -plugin-opt=-X.
			return fmt.Sprintf("argument %s is not run on workers (lld has no plugin option %s)", text, inner.Value())
		}
		if _, why := c.arg(inner, line, false); why != "" {
			return fmt.Sprintf("%s (lld reads %s as %s)", why, text, line[0])
		}
		return ""
	}
	return fmt.Sprintf("argument %s is not run on workers (arguments for another tool)", text)
}

// isID reports whether a is the option id (or an alias of it).
func isID(a *options.Arg, id string) bool { return a.Option.ID == id }

// jobLife is how long a client's job may run from when it is sent (its
// records in Redis expire after as long), and maxJobLife the furthest
// ahead a worker accepts a job's expiry (jobLife and some clock skew).
const (
	jobLife    = time.Hour
	maxJobLife = jobLife + 5*time.Minute
)
