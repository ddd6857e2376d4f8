package farm

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

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

// outputOptions are the spellings of the options whose value the worker
// replaces by its own path for an output (see Worker's run): the separate
// -o PATH of clang -cc1 and lld, and cc1's -dependency-file PATH. The
// worker finds them word by word, so check refuses a job where one of
// these words is anything but such an option (the value of another, an
// input): the worker's rewriting and check's parse then see the same
// options.
var outputOptions = map[string]bool{"-o": true, "-dependency-file": true}

// outputIDs are the options, by tool, whose value an output of a job is:
// the only options that write files a job may have.
var outputIDs = map[string]map[string]bool{
	"clang": {"o": true, "dependency_file": true},
	"lld":   {"o": true},
}

// loadsCode reports whether an argument for another layer (-mllvm X,
// -plugin-opt=X) may load code: an LLVM option that loads a plugin or a
// pass plugin (-load=, -load-pass-plugin=, --load-pass-plugin=).
func loadsCode(words []string) bool {
	for _, w := range words {
		if strings.Contains(w, "-load") || strings.Contains(w, "pass-plugin") {
			return true
		}
	}
	return false
}

// mustShip reports whether the values of an argument of o that are
// absolute paths must be files the job ships: inputs, files read, code
// loaded or run, and values offcc has not classified (NoValue), which may
// be files. Search directories, names, macros and arguments for other
// layers are not.
func mustShip(o *options.Option) bool {
	switch o.Value {
	case options.ReadFile, options.Plugin, options.Program, options.NoValue:
		return true
	}
	return o.Kind == options.Input
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

// check returns why a worker must not run j ("" when it may): its tool is
// one of Tools, nothing loads plugins or writes or reads files outside
// the job, and every absolute path it names is a shipped file (clang's
// search directories and names aside).
//
// The command line is parsed once with its tool's option table (clang
// -cc1's, or ld.lld's) and judged option by option, by what the option
// model says of each: an option the tool does not have, one that never
// runs on a worker (Option.NoRemote), an output other than the job's, a
// file read that the job does not ship, are refused. The worker appends
// its own -ivfsoverlay and -working-directory to a clang job after this
// check: as the line is parsed first, an option at its end that lacks its
// value is refused (a MissingValueError) rather than left to swallow what
// the worker appends.
func check(j *Job) string {
	var table *options.Table
	argv := j.Args
	switch j.Tool {
	case "clang":
		if len(j.Args) == 0 || j.Args[0] != "-cc1" {
			return "clang runs only as clang -cc1"
		}
		table, argv = options.ClangCC1(), j.Args[1:]
	case "lld":
		table = options.LLD()
	default:
		return fmt.Sprintf("tool %q is not one a worker runs (%s)", j.Tool, strings.Join(Tools, ", "))
	}
	if !filepath.IsAbs(j.Dir) {
		return fmt.Sprintf("working directory %q is not absolute", j.Dir)
	}
	c := &checker{j: j, table: table, files: map[string]bool{}, outputs: map[string]bool{}, outputAt: map[int]bool{}}
	for _, f := range j.Files {
		if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path {
			return fmt.Sprintf("file %q is not an absolute clean path", f.Path)
		}
		c.files[f.Path] = true
		if f.Arg != "" {
			c.files[f.Arg] = true
		}
	}
	for _, o := range j.Outputs {
		c.outputs[o] = true
	}
	// Word by word, wherever the word stands: response files are expanded
	// before any option is parsed, and an lld job's arguments are read
	// in the worker's job directory.
	for _, a := range argv {
		if why := denied(a); why != "" {
			return why
		}
		if j.Tool == "lld" && strings.Contains(a, "..") {
			return fmt.Sprintf("argument %s leaves the job's directory", a)
		}
	}
	args, err := table.Parse(argv)
	if err != nil {
		return fmt.Sprintf("%s: %v", table.Tool, err)
	}
	for _, a := range args {
		if why := c.arg(a, argv, true); why != "" {
			return why
		}
	}
	for i, a := range argv {
		if outputOptions[a] && !c.outputAt[i] {
			return fmt.Sprintf("argument %s is not an output option of the job (it is the value of another, or one the worker does not rewrite)", a)
		}
	}
	return ""
}

// checker is check's state for one job.
type checker struct {
	j       *Job
	table   *options.Table
	files   map[string]bool // shipped files, by path and by argument
	outputs map[string]bool // the job's outputs
	// outputAt are the indexes (in the parsed argv) of the output
	// options the worker rewrites.
	outputAt map[int]bool
}

// arg returns why the parsed argument a of argv is refused, or "". top is
// false for an argument that stands in another's value (lld's separate
// -plugin-opt X, read as --plugin-opt=X), which the worker never rewrites.
func (c *checker) arg(a *options.Arg, argv []string, top bool) string {
	o := a.Option
	words := a.Words(argv)
	text := strings.Join(words, " ")
	switch {
	case a.IsUnknown():
		return fmt.Sprintf("%s has no option %s", c.table.Tool, a.Value())
	case o.Kind == options.RemainingArgs || o.Kind == options.RemainingArgsJoined:
		return fmt.Sprintf("option %s takes every argument after it (the worker's among them)", a.Spelling)
	case outputIDs[c.j.Tool][o.ID]:
		// An output joined to its option (-o/path, -ofile) or spelled
		// otherwise (--output=) would escape the worker's rewriting.
		if !top || a.Alias != nil || a.Count != 2 || !outputOptions[words[0]] {
			return fmt.Sprintf("option %s is not run on workers (outputs go as -o PATH)", text)
		}
		if !c.outputs[a.Value()] {
			return fmt.Sprintf("%s names no output of the job", words[0])
		}
		c.outputAt[a.Index] = true
		return ""
	case o.NoRemote != "":
		return fmt.Sprintf("option %s is not run on workers (%s)", text, o.NoRemote)
	case o.Value == options.WriteFile || o.Value == options.WriteDir:
		// The option model gives these a NoRemote reason; an option it
		// left without one still writes outside the job.
		return fmt.Sprintf("option %s is not run on workers (its value is a %s)", text, o.Value)
	case o.Value == options.Forward:
		if loadsCode(words) {
			return fmt.Sprintf("argument %s may load code", text)
		}
		// lld reads a separate -plugin-opt X as --plugin-opt=X.
		if c.j.Tool == "lld" && o.ID == "plugin_opt" {
			line := []string{"--plugin-opt=" + a.Value()}
			inner, err := c.table.ParseOne(line, 0)
			if err != nil {
				return fmt.Sprintf("%s: %v", c.table.Tool, err)
			}
			if why := c.arg(inner, line, false); why != "" {
				return fmt.Sprintf("%s (lld reads %s as %s)", why, text, line[0])
			}
		}
		return ""
	}
	if !mustShip(o) {
		return ""
	}
	for _, v := range a.Values {
		if filepath.IsAbs(v) && !c.files[v] {
			return fmt.Sprintf("%s names a file the job does not ship", text)
		}
	}
	return ""
}
