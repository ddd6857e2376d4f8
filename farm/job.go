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
	Version   int    `json:"v"`
	ID        string `json:"id"`
	Toolchain string `json:"toolchain"`
	// Tool is "clang" (argv[1] "-cc1") or "lld"; ToolID its identity.
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
	// Arg, when set, is how Args names it (lld jobs: the argument the
	// worker replaces with its copy).
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
// device links clang's and offcc's drivers make (AMDGPU's "-flavor gnu -m
// elf64_amdgpu --no-undefined -shared -plugin-opt=... -o OUT IN...") and
// a few that change no file lld reads or writes. Anything else runs on
// the client. Values are names (no '/'); inputs are the job's files.
var lldAllowed = map[string]bool{
	"flavor": true, "m": true, "o": true, "INPUT": true,
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

// llvmAllowed are the prefixes of the LLVM options (-mllvm X, lld's
// -plugin-opt=-X) a worker passes on: target tuning, which reads and
// writes no file. LLVM has options that load plugins (-load,
// -load-pass-plugin) or write files (-info-output-file=, -stats-file=),
// so the others run on the client.
var llvmAllowed = []string{
	"amdgpu-", "nvptx-", "spirv-", "x86-", "inline-threshold", "inlinehint-threshold",
	"unroll-", "vectorize-", "slp-", "enable-misched", "misched",
	// clang's OpenMP device compiles for nvptx64 pass it.
	"enable-memcpyopt-without-libcalls",
}

// llvmOptionAllowed reports whether the LLVM option v (with its leading
// dashes, and a value after '=' if any) is one a worker passes on.
func llvmOptionAllowed(v string) bool {
	name := strings.TrimLeft(v, "-")
	if name == v || strings.ContainsAny(v, "/\\") {
		return false
	}
	for _, p := range llvmAllowed {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
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
// itself, if any: a as an input, or the value joined to an option whose
// values must be shipped (see mustShip). The value of a separate option
// is an argument of its own.
func pathOf(a string) (string, bool) {
	arg, err := options.ClangCC1().ParseOne([]string{a}, 0)
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
}

// command returns the arguments the worker runs: argv with each output
// option's value replaced by out[value] and, for lld, each input by
// in[value] (the worker's copies).
func (p *plan) command(out, in map[string]string) []string {
	cmd := make([]string, 0, len(p.argv)+4)
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

// check returns the plan of j, or why a worker must not run it.
//
// The command line is parsed once with its tool's option table (clang
// -cc1's, or ld.lld's), and every argument must be allowed, by what the
// option model says of it:
//
//   - clang -cc1: a flag; a name, macro or search directory (read only
//     through the VFS overlay, which shows nothing but the shipped
//     files); a file read or an input that the job ships; an
//     unclassified value that names no file (no '/', no leading '.'),
//     or is a shipped file; -mllvm with an option of llvmAllowed. Never
//     an option the model marks NoRemote, a file or directory written
//     other than the job's outputs, a plugin or program, or an option
//     that takes the rest of the line.
//   - lld: the options of lldAllowed only, names without '/', -plugin-opt
//     values read as lld reads them, inputs the job ships, by the name
//     the job gives them, that do not climb out of the directory.
//
// Outputs are separate -o PATH (and cc1's -dependency-file PATH) naming
// outputs of the job; the worker rewrites them from the parse. As the
// line is parsed before the worker appends its own -ivfsoverlay and
// -working-directory, an option at its end that lacks its value is
// refused (a MissingValueError) rather than left to swallow them.
func check(j *Job) (*plan, string) {
	var table *options.Table
	argv := j.Args
	switch j.Tool {
	case "clang":
		if len(j.Args) == 0 || j.Args[0] != "-cc1" {
			return nil, "clang runs only as clang -cc1"
		}
		table, argv = options.ClangCC1(), j.Args[1:]
	case "lld":
		table = options.LLD()
	default:
		return nil, fmt.Sprintf("tool %q is not one a worker runs (%s)", j.Tool, strings.Join(Tools, ", "))
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
	// before any option is parsed.
	for _, a := range argv {
		if why := denied(a); why != "" {
			return nil, why
		}
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
		if a.Option.ID == "plugin_opt_eq_minus" {
			v = "-" + v
		}
		if !llvmOptionAllowed(v) {
			if strings.Contains(v, "load") || strings.Contains(v, "plugin") {
				return fmt.Sprintf("argument %s may load code", text)
			}
			return fmt.Sprintf("argument %s is not run on workers (an LLVM option outside the allow-list)", text)
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
			// No lld option of its own: an LLVM option without its
			// dash, as LTO reads it.
			if llvmOptionAllowed("-" + inner.Value()) {
				return ""
			}
			return fmt.Sprintf("argument %s is not run on workers (a plugin option outside the allow-list)", text)
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
