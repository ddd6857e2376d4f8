package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/tempname"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/target"
)

// Plan is offcc's typed plan for one command line: the actions that build
// it and what clang's driver printed while planning.
type Plan struct {
	// Header holds the lines clang prints before its jobs: the version
	// header, under -v its installation-detection lines, and its driver
	// warnings.
	Header []string
	// Graph holds the actions in clang's job order.
	Graph *actions.Graph
	// HostTriple is the host compilation's triple.
	HostTriple string
	// ReadsStdin is set when an action reads standard input.
	ReadsStdin bool
}

// UnrecognizedError reports a job clang printed that offcc's builder
// cannot plan with certainty. offcc then hands the whole command line to
// clang unchanged.
type UnrecognizedError struct {
	Job    string
	Reason string
}

func (e *UnrecognizedError) Error() string {
	if e.Job == "" {
		return e.Reason
	}
	return fmt.Sprintf("%s, in: %s", e.Reason, e.Job)
}

func unrecognized(j *clangJob, format string, args ...any) error {
	e := &UnrecognizedError{Reason: fmt.Sprintf(format, args...)}
	if j != nil {
		e.Job = j.String()
	}
	return e
}

// ClangError is a failure reported by clang's driver while planning: its
// diagnostics and exit status.
type ClangError struct {
	Messages string
	Code     int
}

func (e *ClangError) Error() string { return strings.TrimRight(e.Messages, "\n") }

// offloadBuilder turns the jobs clang's driver prints for one offload
// model into typed actions, as clang's per-kind offload action builders
// decide which actions exist. A new offload kind plugs in by implementing
// it and registering in builders; the executor does not change.
type offloadBuilder interface {
	// bind adds the actions of one clang job to the plan, or returns an
	// *UnrecognizedError for a job it cannot plan.
	bind(p *planner, j *clangJob) error
}

// builders are the offload builders by the model they plan.
var builders = map[actions.OffloadKind]offloadBuilder{
	actions.OpenMP: openmpBuilder{},
	actions.HIP:    hipBuilder{},
	actions.SYCL:   syclBuilder{},
	actions.CUDA:   cudaBuilder{},
	actions.None:   plainBuilder{},
}

// planner builds a Plan from clang's jobs. It binds every file a job reads
// or writes to an artifact by the option that names it, and refuses a job
// that names a temporary file it did not bind.
type planner struct {
	env     *planEnv
	offload actions.OffloadKind
	plan    *Plan
	// files holds every artifact so far by path: sources and outputs.
	files map[string]*actions.Artifact
}

// planEnv is what building a plan needs to know about the invocation.
type planEnv struct {
	// tempDir is the build's private temporary directory: clang names its
	// temporaries there.
	tempDir string
	// self is the offcc executable, printed for in-process steps.
	self string
	// linkPrefix goes between "offcc linker-wrapper" and the wrapper's
	// arguments in printed commands (--llvm-dir=DIR when given).
	linkPrefix []string
	// steps runs offcc's in-process steps.
	steps *steps
	// userInputs are the input files named on the command line.
	userInputs map[string]bool
	// cuid returns the compile unit ID clang gives a CUDA or HIP source
	// when it runs the user's command line, or "" when offcc cannot tell:
	// clang's "-###" hashes into it an argument the build does not have.
	// keep says that the ID -### printed is as good (-fuse-cuid=random).
	cuid func(input string) (id string, keep bool)
	// tables are the option tables of the release of the clang whose
	// jobs are planned.
	tables *options.Tables
}

// optionTables returns the option tables of the release whose jobs are
// planned: the newest release's where none are set.
func (e *planEnv) optionTables() *options.Tables {
	return orNewest(e.tables)
}

func newPlanner(env *planEnv, offload actions.OffloadKind) *planner {
	return &planner{env: env, offload: offload, plan: &Plan{Graph: &actions.Graph{}}, files: map[string]*actions.Artifact{}}
}

// build plans every job.
func (p *planner) build(jobs []*clangJob) (*Plan, error) {
	b := builders[p.offload]
	if b == nil {
		return nil, unrecognized(nil, "offcc does not plan %s offloading yet", p.offload)
	}
	if len(jobs) == 0 {
		return nil, unrecognized(nil, "clang printed no jobs")
	}
	for _, j := range jobs {
		if err := b.bind(p, j); err != nil {
			return nil, err
		}
	}
	return p.plan, nil
}

// isTemp reports whether path lies in the private temporary directory.
func (p *planner) isTemp(path string) bool {
	return strings.HasPrefix(path, p.env.tempDir+string(filepath.Separator))
}

// input returns the artifact for a file a job reads: the output of an
// earlier job, or a file that exists before the build. A temporary file no
// earlier job writes means offcc misread the plan.
func (p *planner) input(j *clangJob, path string) (*actions.Artifact, error) {
	if f, ok := p.files[path]; ok {
		return f, nil
	}
	if p.isTemp(path) {
		return nil, unrecognized(j, "the job reads %s, which no earlier job writes", path)
	}
	f := actions.NewArtifact(path)
	p.files[path] = f
	if f.IsStdin() {
		p.plan.ReadsStdin = true
	}
	return f, nil
}

// inputs returns the artifacts for files a job reads (see input).
func (p *planner) inputs(j *clangJob, paths []string) ([]*actions.Artifact, error) {
	var fs []*actions.Artifact
	for _, path := range paths {
		f, err := p.input(j, path)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// output returns a new artifact for a file a job writes.
func (p *planner) output(j *clangJob, path string) (*actions.Artifact, error) {
	if _, ok := p.files[path]; ok {
		return nil, unrecognized(j, "%s is written by two jobs, or read before it is written", path)
	}
	f := actions.NewArtifact(path)
	p.files[path] = f
	return f, nil
}

// temp returns a new artifact for a temporary file of offcc's own, named
// like clang's: <tmp>/<stem>-<6 hex><ext>, stem taken from like.
func (p *planner) temp(like, ext string) *actions.Artifact {
	base := filepath.Base(like)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	if i := strings.LastIndexByte(stem, '-'); i > 0 && len(stem)-i == 7 && p.isTemp(like) {
		stem = stem[:i] // already a clang temporary name
	}
	for {
		path := filepath.Join(p.env.tempDir, fmt.Sprintf("%s-%s%s", stem, tempname.Hex6(), ext))
		if _, used := p.files[path]; !used {
			f := actions.NewArtifact(path)
			p.files[path] = f
			return f
		}
	}
}

// add checks that the job names no temporary file the action does not
// read or write, then adds the action to the plan.
func (p *planner) add(j *clangJob, a *actions.Action) error {
	if err := p.checkBound(j, a.Inputs, a.Reads, a.Outputs); err != nil {
		return err
	}
	if err := p.plan.Graph.Add(a); err != nil {
		return unrecognized(j, "%v", err)
	}
	return nil
}

// checkBound refuses a job whose command line names a temporary file that
// is not among the files bound to its actions: an edge offcc would
// otherwise miss.
func (p *planner) checkBound(j *clangJob, files ...[]*actions.Artifact) error {
	var bound []string
	for _, fs := range files {
		for _, f := range fs {
			bound = append(bound, f.Path)
		}
	}
	sort.Slice(bound, func(x, y int) bool { return len(bound[x]) > len(bound[y]) })
	dir := p.env.tempDir + string(filepath.Separator)
	for _, arg := range j.argv[1:] {
		if !strings.Contains(arg, dir) {
			continue
		}
		rest := arg
		for _, b := range bound {
			rest = strings.ReplaceAll(rest, b, "")
		}
		if strings.Contains(rest, dir) {
			return unrecognized(j, "the argument %q names a temporary file offcc does not know the role of", arg)
		}
	}
	return nil
}

// hostTriple returns the host triple seen so far, or the default.
func (p *planner) hostTriple() string {
	if p.plan.HostTriple != "" {
		return p.plan.HostTriple
	}
	return target.DefaultHostTriple()
}

// hashHashHashArgs returns the arguments that ask clang for the jobs of
// clangArgs: them, less any printing option, and -###.
func hashHashHashArgs(clangArgs []string) []string {
	args := make([]string, 0, len(clangArgs)+1)
	for _, a := range clangArgs {
		switch a {
		case "-###", "-ccc-print-bindings", "-ccc-print-phases":
			continue
		}
		args = append(args, a)
	}
	return append(args, "-###")
}

// clangJobs asks clang for its jobs (clang -###), from the plan cache when
// it has a usable entry. It returns the header lines, the jobs and clang's
// warnings; a failure of clang's driver is a *ClangError. query, when not
// nil, is the plan cache's key of the command (plans.query), already made.
func clangJobs(ctx context.Context, inv *Invocation, clang string, clangArgs []string, tempDir string, cache *planCache, query *planQuery) (header []string, jobs []*clangJob, err error) {
	args := hashHashHashArgs(clangArgs)
	cacheable := cache != nil
	if cacheable && query == nil {
		cwd, err := os.Getwd()
		cacheable = err == nil
		if cacheable {
			query, cacheable = cache.query(clang, inv.prog(), args, inv.Env, cwd, inv.getenv("OFFCC_BASE_DIR"))
		}
	}
	if cacheable {
		if out, ok := cache.lookup(query, tempDir); ok {
			header, jobs, err := parseHashHashHash(out, 0)
			if err == nil && sourcesExist(jobs, tempDir) {
				return header, jobs, nil
			}
		}
	}
	if inv.ensureTemp != nil {
		if err := inv.ensureTemp(); err != nil {
			return nil, nil, err
		}
	}
	// clang's -v lists no query of this kind, and neither does offcc's.
	sh := actions.NewShell(actions.ShellOptions{
		Stderr: inv.Stderr, TempDir: tempDir, BaseEnv: inv.Env, Env: []string{"TMPDIR=" + tempDir},
	})
	// clang's driver prints -### unbuffered, one write(2) per word
	// (10,129 for a HIP compile): through a pipe offcc read them one by
	// one (12,240 reads). An unlinked file in the private directory
	// takes them, and offcc reads it once.
	spool, err := os.CreateTemp(tempDir, "hash-hash-hash-*.txt")
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create temporary file: %v", err)
	}
	os.Remove(spool.Name())
	defer spool.Close()
	code := 0
	err = sh.Run(ctx, &actions.Cmd{
		Argv: append([]string{clang}, args...), Argv0: inv.prog(),
		Stdout: spool, Stderr: spool, Quiet: true,
	})
	var out bytes.Buffer
	if _, serr := spool.Seek(0, io.SeekStart); serr != nil {
		return nil, nil, fmt.Errorf("cannot read clang's jobs: %v", serr)
	}
	if _, rerr := out.ReadFrom(spool); rerr != nil {
		return nil, nil, fmt.Errorf("cannot read clang's jobs: %v", rerr)
	}
	if err != nil {
		var ee *exec.ExitError
		var re *actions.ResponseFileError
		var se *actions.StartError
		switch {
		case errors.As(err, &re):
			return nil, nil, fmt.Errorf("cannot write a response file: %v", re.Err)
		case errors.As(err, &se):
			return nil, nil, fmt.Errorf("cannot run %s: %v", clang, se.Err)
		case !errors.As(err, &ee):
			return nil, nil, fmt.Errorf("cannot run %s: %v", clang, err)
		}
		code = max(ee.ExitCode(), 1)
	}
	header, jobs, err = parseHashHashHash(out.String(), code)
	if err == nil && cacheable {
		cache.save(query, tempDir, out.String())
	}
	return header, jobs, err
}

// parseHashHashHash splits clang's -### output (and its exit status) into
// header lines, jobs and diagnostics. Warnings from clang's driver (unused
// arguments, ...) are returned after the header, to reach the user once,
// as clang prints them.
func parseHashHashHash(output string, code int) (header []string, jobs []*clangJob, err error) {
	var messages []string
	inHeader := true
	var script []string // HIP's object generator, for the job that reads it
	inScript := false
	for _, line := range strings.Split(strings.TrimRight(output, "\n"), "\n") {
		if line == hipObjectGeneratorHead {
			inScript = true
		}
		if inScript {
			if isScriptLine(line) {
				script = append(script, line)
				continue
			}
			inScript = false
		}
		switch {
		case strings.HasPrefix(line, " \""):
			inHeader = false
			argv, err := actions.SplitHash(line)
			if err != nil || len(argv) == 0 {
				return nil, nil, fmt.Errorf("cannot read clang's job line: %v", err)
			}
			j := newClangJob(argv)
			if script != nil && slices.ContainsFunc(argv, func(a string) bool { return strings.HasSuffix(a, ".mcin") }) {
				j.script, script = strings.Join(script, "\n")+"\n", nil
			}
			jobs = append(jobs, j)
		case strings.Contains(line, "'"+hipDumpScript+"'"):
			// offcc's own addition (an unused argument in a compile).
		case line == " (in-process)":
		case inHeader && !strings.Contains(line, ": error: ") && !strings.Contains(line, ": warning: "):
			header = append(header, line)
		default:
			messages = append(messages, line)
		}
	}
	if code != 0 {
		return nil, nil, &ClangError{Messages: strings.Join(messages, "\n"), Code: code}
	}
	return append(header, messages...), jobs, nil
}

// hipDumpScript makes clang's driver print, under -###, the assembly file
// it writes for an -fgpu-rdc HIP link (its object generator) and does not
// write under -###; offcc adds it to HIP plans and writes the file itself.
const hipDumpScript = "-fhip-dump-offload-linker-script"

// hipObjectGeneratorHead is the first line of that file.
const hipObjectGeneratorHead = "#       HIP Object Generator"

// isScriptLine reports whether a line of -### output belongs to the object
// generator's text: comments, indented directives and labels.
func isScriptLine(line string) bool {
	switch {
	case strings.HasPrefix(line, "#"), strings.HasPrefix(line, "  ."):
		return true
	case strings.HasSuffix(line, ":") && !strings.ContainsAny(line, " \t\""):
		return true
	}
	return false
}

// sourcesExist reports whether every file a cached plan's compile jobs
// read (the input ending each cc1 job, when it is not a temporary or
// standard input) still exists; if one is gone, clang itself must say so.
func sourcesExist(jobs []*clangJob, tempDir string) bool {
	for _, j := range jobs {
		n := len(j.argv)
		if !j.isCC1() || n < 5 || j.argv[n-3] != "-x" {
			continue
		}
		in := j.argv[n-1]
		if in == "-" || strings.HasPrefix(in, tempDir+string(filepath.Separator)) {
			continue
		}
		if _, err := os.Stat(in); err != nil {
			return false
		}
	}
	return true
}
