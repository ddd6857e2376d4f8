package farm

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
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
}

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
}

func decodeJob(data []byte) (*Job, error) {
	var j Job
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("job record does not decode: %v", err)
	}
	if j.Version != 1 {
		return nil, fmt.Errorf("job version %d (this worker speaks 1)", j.Version)
	}
	return &j, nil
}

// Option tables for checking a job's command line (see check).
var (
	// Options that load code into the tool, or make it read or write
	// files the job does not name: never run, alone, joined to their
	// value or followed by "=".
	deniedOptions = []string{
		"-load", "-plugin", "-add-plugin", "-ivfsoverlay", "-working-directory",
		"-fmodules-cache-path", "-fmodule-file", "-fprebuilt-module-path", "-stats-file",
		"-opt-record-file", "-MF", "-header-include-file", "-fprofile-instrument-path",
		"-coverage-notes-file", "-coverage-data-file", "-split-dwarf-output",
		"-emit-pch", "-emit-module", "-Map", "--Map", "--reproduce", "--why-extract",
		"--dependency-file", "--script", "--version-script", "--dynamic-list",
		"--library-path", "--print-archive-stats", "--lto-obj-path", "-L", "-T",
		"-serialize-diagnostic-file", "-diagnostic-log-file", "-stack-usage-file",
		"-module-dependency-dir", "-dependency-dot", "-MJ", "--output",
	}
	// Prefixes of arguments never run (plugins, dumps, files written
	// beside the output).
	deniedPrefixes = []string{
		"-fpass-plugin", "-fplugin", "-load=", "--load-pass-plugin", "-load-pass-plugin",
		"-dump-", "-ast-dump", "-ftime-trace", "-save-temps", "--save-temps",
		"-fcrash-diagnostics", "-plugin-arg-",
	}
	// Options whose next argument is a name or a directory, not a file
	// read or written.
	nameOptions = map[string]bool{
		"-MT": true, "-MQ": true, "-main-file-name": true, "-resource-dir": true,
		"-internal-isystem": true, "-internal-externc-isystem": true, "-isystem": true,
		"-I": true, "-iquote": true, "-idirafter": true, "-isysroot": true,
		"-fdebug-compilation-dir": true, "-fcoverage-compilation-dir": true,
		"-dwarf-debug-flags": true, "-split-dwarf-file": true, "-triple": true,
		"-aux-triple": true, "-target-cpu": true, "-aux-target-cpu": true,
		"-tune-cpu": true, "-target-feature": true, "-target-abi": true, "-x": true,
		"-mllvm": true, "-D": true, "-U": true, "-m": true, "-flavor": true,
		"-ferror-limit": true, "-pic-level": true, "-mrelocation-model": true,
		"-debugger-tuning": true, "-mframe-pointer": true, "-stack-protector": true,
	}
	// Joined options (-opt=VALUE or -IVALUE) whose value is a name or a
	// directory.
	joinedNames = []string{
		"-fdebug-compilation-dir=", "-fcoverage-compilation-dir=", "-fdebug-prefix-map=",
		"-ffile-prefix-map=", "-fmacro-prefix-map=", "-fcoverage-prefix-map=", "-I",
		"-isystem", "-iquote", "-idirafter", "-cuid=", "-D", "-U",
	}
)

// denied returns why an argument is never run, or "".
func denied(a string) string {
	// Response files are read by the tool before anything else, from
	// the worker's own files; offcc writes them at run time only.
	if strings.HasPrefix(a, "@") {
		return fmt.Sprintf("response file %s is not run on workers", a)
	}
	// An output joined to -o (-o/path, -ofile) would escape the job's
	// outputs; cc1's -object-file-name= is a name.
	if strings.HasPrefix(a, "-o") && len(a) > 2 && !strings.HasPrefix(a, "-object-file-name=") &&
		!strings.HasPrefix(a, "-opt-record-passes=") && !strings.HasPrefix(a, "-opt-record-format=") {
		return fmt.Sprintf("option %s is not run on workers (outputs go as -o PATH)", a)
	}
	for _, d := range deniedOptions {
		if a == d || strings.HasPrefix(a, d+"=") || len(d) == 2 && strings.HasPrefix(a, d) {
			return fmt.Sprintf("option %s is not run on workers", a)
		}
	}
	for _, d := range deniedPrefixes {
		if strings.HasPrefix(a, d) {
			return fmt.Sprintf("option %s is not run on workers", a)
		}
	}
	// Values of -mllvm and -plugin-opt= that load passes.
	if strings.Contains(a, "-load") || strings.Contains(a, "pass-plugin") {
		return fmt.Sprintf("argument %s may load code", a)
	}
	return ""
}

// outputOptions are the options whose value an output of the job is.
var outputOptions = map[string]bool{"-o": true, "-dependency-file": true}

// check returns why a worker must not run j ("" when it may): its tool is
// one of Tools, nothing loads plugins or writes or reads files outside
// the job, and every absolute path it names is a shipped file (clang's
// search directories and names aside).
func check(j *Job) string {
	switch j.Tool {
	case "clang":
		if len(j.Args) == 0 || j.Args[0] != "-cc1" {
			return "clang runs only as clang -cc1"
		}
	case "lld":
	default:
		return fmt.Sprintf("tool %q is not one a worker runs (%s)", j.Tool, strings.Join(Tools, ", "))
	}
	if !filepath.IsAbs(j.Dir) {
		return fmt.Sprintf("working directory %q is not absolute", j.Dir)
	}
	files := map[string]bool{}
	for _, f := range j.Files {
		if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path {
			return fmt.Sprintf("file %q is not an absolute clean path", f.Path)
		}
		files[f.Path] = true
		if f.Arg != "" {
			files[f.Arg] = true
		}
	}
	outputs := map[string]bool{}
	for _, o := range j.Outputs {
		outputs[o] = true
	}
	for _, a := range j.Args {
		if why := denied(a); why != "" {
			return why
		}
		if j.Tool == "lld" && strings.Contains(a, "..") {
			return fmt.Sprintf("argument %s leaves the job's directory", a)
		}
	}
	for i := 0; i < len(j.Args); i++ {
		a := j.Args[i]
		if outputOptions[a] {
			if i+1 >= len(j.Args) || !outputs[j.Args[i+1]] {
				return fmt.Sprintf("%s names no output of the job", a)
			}
			i++
			continue
		}
		if nameOptions[a] {
			i++
			continue
		}
		if p, ok := pathOf(a); ok && !files[p] && !outputs[a] {
			return fmt.Sprintf("%s names a file the job does not ship", a)
		}
	}
	return ""
}

// pathOf returns the absolute path an argument names, if any: the
// argument itself, or the value of a joined option that is not one of
// joinedNames.
func pathOf(a string) (string, bool) {
	if strings.HasPrefix(a, "/") {
		return a, true
	}
	if !strings.HasPrefix(a, "-") {
		return "", false
	}
	for _, n := range joinedNames {
		if strings.HasPrefix(a, n) {
			return "", false
		}
	}
	if i := strings.Index(a, "="); i > 0 && strings.HasPrefix(a[i+1:], "/") {
		return a[i+1:], true
	}
	return "", false
}
