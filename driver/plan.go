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
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/tempname"
	"github.com/offcc/offcc/toolchain"
)

// Plan is offcc's job graph for one command line, planned from the commands
// clang's driver would run (clang translates every option; offcc owns the
// graph: which jobs exist, what they wait for and how they run).
type Plan struct {
	// Header holds the lines clang prints before its jobs: the version
	// header and, under -v, its installation-detection lines.
	Header []string
	// Graph is the job graph in clang's order.
	Graph *actions.Graph
	// HostTriple is the host compilation's triple.
	HostTriple string
}

// Planner turns clang's job list into offcc's graph.
type Planner struct {
	// Clang is the clang driver to ask for its job list.
	Clang string
	// Argv0 is the name clang is run under, so its diagnostics and driver
	// mode (offcc++ means g++ mode) match offcc's.
	Argv0 string
	// Self is the offcc executable, printed for in-process steps.
	Self string
	// TempDir is the directory clang names temporaries in (TMPDIR).
	TempDir string
	// Env is the environment to run clang with.
	Env []string
	// Steps runs offcc's in-process steps.
	Steps Steps
	// Cache, when non-nil, remembers clang's job lists (see planCache).
	Cache *planCache
}

// Steps are the in-process implementations of the steps offcc owns.
type Steps interface {
	// Package writes an offload binary: args are llvm-offload-binary's.
	Package(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// Embed adds blobs as the .llvm.offloading section of hostObj, writing out.
	Embed(ctx context.Context, out, hostObj string, blobs []string) error
	// Link runs the link stage: args are clang-linker-wrapper's.
	Link(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// LinkArgsPrefix is printed between "offcc linker-wrapper" and the args.
	LinkArgsPrefix() []string
}

// ClangError is a failure reported by clang's driver while planning: its
// diagnostics and exit status.
type ClangError struct {
	Messages string
	Code     int
}

func (e *ClangError) Error() string { return strings.TrimRight(e.Messages, "\n") }

// Plan asks clang for its jobs (clang -###) and builds offcc's graph.
func (p *Planner) Plan(ctx context.Context, clangArgs []string) (*Plan, error) {
	args := make([]string, 0, len(clangArgs)+1)
	for _, a := range clangArgs {
		switch a {
		case "-###", "-ccc-print-bindings", "-ccc-print-phases":
			continue
		}
		args = append(args, a)
	}
	args = append(args, "-###")
	output, code, err := p.clangJobs(ctx, args)
	if err != nil {
		return nil, err
	}
	var header, messages []string
	var jobs [][]string
	inHeader := true
	for _, line := range strings.Split(strings.TrimRight(output, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, " \""):
			inHeader = false
			fields, err := actions.SplitHash(line)
			if err != nil {
				return nil, fmt.Errorf("cannot read clang's job line: %v", err)
			}
			jobs = append(jobs, fields)
		case line == " (in-process)":
		case inHeader && !strings.Contains(line, ": error: ") && !strings.Contains(line, ": warning: "):
			header = append(header, line)
		default:
			messages = append(messages, line)
		}
	}
	if code != 0 {
		return nil, &ClangError{Messages: strings.Join(messages, "\n"), Code: code}
	}
	if len(messages) > 0 {
		// Warnings from clang's driver (unused arguments, ...) reach the user
		// once, as clang would print them.
		header = append(header, messages...)
	}
	plan := &Plan{Header: header, Graph: &actions.Graph{}}
	if err := p.build(plan, jobs); err != nil {
		return nil, err
	}
	return plan, nil
}

// clangJobs returns clang's -### output and exit status, from the plan
// cache when it has a usable entry.
func (p *Planner) clangJobs(ctx context.Context, args []string) (string, int, error) {
	var key string
	cacheable := p.Cache != nil
	if cacheable {
		key, cacheable = p.Cache.key(p.Clang, p.Argv0, args, p.Env)
	}
	if cacheable {
		if out, ok := p.Cache.load(key, p.TempDir); ok && sourcesExist(out, p.TempDir) {
			return out, 0, nil
		}
	}
	cmd := exec.CommandContext(ctx, p.Clang, args...)
	cmd.Args[0] = p.Argv0
	cmd.Env = append(append([]string{}, p.Env...), "TMPDIR="+p.TempDir)
	var out bytes.Buffer
	cmd.Stderr = &out
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		code := 1
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return "", 0, fmt.Errorf("cannot run %s: %v", p.Clang, err)
		}
		if ee.ExitCode() > 0 {
			code = ee.ExitCode()
		}
		return out.String(), code, nil
	}
	if cacheable {
		p.Cache.store(key, p.TempDir, out.String())
	}
	return out.String(), 0, nil
}

// sourcesExist reports whether every file a cached plan's compile jobs read
// (their last argument, when it is not a temporary) still exists; if one is
// gone, clang itself must say so.
func sourcesExist(output, tempDir string) bool {
	for _, line := range strings.Split(output, "\n") {
		if !strings.HasPrefix(line, " \"") {
			continue
		}
		argv, err := actions.SplitHash(line)
		if err != nil || len(argv) < 2 || (argv[1] != "-cc1" && argv[1] != "-cc1as") {
			continue
		}
		in := mainInput(argv, argAfter(argv, "-o"))
		if in == "" || strings.HasPrefix(in, tempDir+string(filepath.Separator)) {
			continue
		}
		if _, err := os.Stat(in); err != nil {
			return false
		}
	}
	return true
}

// producers maps each output file to the job that writes it.
type producers map[string]*actions.Job

// refs returns the earlier outputs an argument names: the whole argument,
// the part after '=', or file= values of an --image= specification.
func (pr producers) refs(arg string) []string {
	if _, ok := pr[arg]; ok {
		return []string{arg}
	}
	var out []string
	if strings.HasPrefix(arg, "--image=") {
		for _, kv := range strings.Split(strings.TrimPrefix(arg, "--image="), ",") {
			if f, ok := strings.CutPrefix(kv, "file="); ok {
				if _, ok := pr[f]; ok {
					out = append(out, f)
				}
			}
		}
		return out
	}
	if i := strings.IndexByte(arg, '='); i >= 0 {
		if _, ok := pr[arg[i+1:]]; ok {
			out = append(out, arg[i+1:])
		}
	}
	return out
}

func (p *Planner) build(plan *Plan, jobs [][]string) error {
	pr := producers{}
	for _, argv := range jobs {
		if len(argv) == 0 {
			continue
		}
		j := describe(argv)
		if j.Triple == "" {
			j.Triple = plan.HostTriple
		}
		if plan.HostTriple == "" && j.Tool == "clang" {
			plan.HostTriple = j.Triple
		}
		// Dependencies: every earlier output this command names.
		seen := map[*actions.Job]bool{}
		for _, a := range argv[1:] {
			for _, f := range pr.refs(a) {
				if !contains(j.Inputs, f) {
					j.Inputs = append(j.Inputs, f)
				}
				if d := pr[f]; !seen[d] {
					seen[d] = true
					j.Deps = append(j.Deps, d)
				}
			}
		}
		switch base := toolchain.ToolName(argv[0]); {
		case base == "llvm-offload-binary" || base == "clang-offload-packager":
			p.inProcessPackager(j)
		case base == "clang-linker-wrapper":
			p.inProcessLinker(j, plan.HostTriple)
		case j.Tool == "clang" && contains(argv, "-emit-obj") && embedsOffload(argv):
			// The host backend would wait for every device image only to
			// copy it into a section. Compile the host object alone and add
			// the section afterwards, so the backend runs beside the device
			// compiles.
			if err := p.splitEmbed(plan, j, pr); err != nil {
				return err
			}
			continue
		}
		plan.Graph.Add(j)
		for _, o := range j.Outputs {
			pr[o] = j
		}
	}
	return nil
}

// describe reads one clang job: its tool name for -ccc-print-bindings, its
// triple, output, primary input and estimated cost.
func describe(argv []string) *actions.Job {
	j := &actions.Job{Args: argv}
	base := toolchain.ToolName(argv[0])
	out := argAfter(argv, "-o")
	switch {
	case len(argv) > 1 && argv[1] == "-cc1":
		j.Tool = "clang"
		j.Triple = argAfter(argv, "-triple")
		j.Cost = cc1Cost(argv)
	case len(argv) > 1 && argv[1] == "-cc1as":
		j.Tool = "clang::as"
		j.Triple = argAfter(argv, "-triple")
		j.Cost = 0.1
	case base == "llvm-offload-binary" || base == "clang-offload-packager":
		j.Tool = "Offload::Packager"
		j.Cost = 0.05
	case base == "clang-linker-wrapper":
		j.Tool = "Offload::Linker"
		j.Cost = 1
	case base == "ptxas":
		j.Tool = "NVPTX::Assembler"
		j.Triple = "nvptx64-nvidia-cuda"
		out = argAfter(argv, "--output-file")
		j.Cost = 0.5
	case base == "ld" || strings.HasPrefix(base, "ld."):
		j.Tool = "GNU::Linker"
		j.Cost = 1
	default:
		j.Tool = base
		j.Cost = 0.5
	}
	switch j.Tool {
	case "clang", "clang::as", "NVPTX::Assembler":
		if in := mainInput(argv, out); in != "" {
			j.Inputs = append(j.Inputs, in)
		}
	}
	if out != "" {
		j.Outputs = []string{out}
	}
	return j
}

// mainInput returns the file a compile or assemble job reads: the last
// argument that is not an option (clang puts it last, after "-x <lang>";
// ptxas may follow it with "-c"), or "" when that is the job's output.
func mainInput(argv []string, out string) string {
	for i := len(argv) - 1; i > 0; i-- {
		if a := argv[i]; !strings.HasPrefix(a, "-") {
			if a == out {
				return ""
			}
			return a
		}
	}
	return ""
}

// cc1Cost estimates a compile's cost relative to a device compile, from
// measurements of clang 22 on OpenMP code: the host front end without LLVM
// passes is about a fifth of a device compile, the host backend a bit more.
func cc1Cost(argv []string) float64 {
	switch {
	case contains(argv, "-disable-llvm-passes"):
		return 0.2
	case contains(argv, "-fopenmp-is-target-device"):
		return 1
	case argAfter(argv, "-x") == "ir":
		return 1.3
	}
	return 1
}

func (p *Planner) inProcessPackager(j *actions.Job) {
	args := append([]string{}, j.Args[1:]...)
	j.Args = append([]string{p.Self, "offload-binary"}, args...)
	steps := p.Steps
	j.Run = func(ctx context.Context, stdout, stderr io.Writer) error {
		return steps.Package(ctx, args, stdout, stderr)
	}
}

func (p *Planner) inProcessLinker(j *actions.Job, hostTriple string) {
	args := append([]string{}, j.Args[1:]...)
	j.Args = append(append([]string{p.Self, "linker-wrapper"}, p.Steps.LinkArgsPrefix()...), args...)
	j.Triple = hostTriple
	steps := p.Steps
	j.Run = func(ctx context.Context, stdout, stderr io.Writer) error {
		return steps.Link(ctx, args, stdout, stderr)
	}
}

// splitEmbed replaces a host backend job that embeds offload binaries by a
// backend job that does not, plus an embedding step after it.
func (p *Planner) splitEmbed(plan *Plan, j *actions.Job, pr producers) error {
	var blobs []string
	var args []string
	for _, a := range j.Args {
		if b, ok := strings.CutPrefix(a, "-fembed-offload-object="); ok {
			blobs = append(blobs, b)
			continue
		}
		args = append(args, a)
	}
	if len(j.Outputs) != 1 {
		return fmt.Errorf("host backend job has no output")
	}
	final := j.Outputs[0]
	hostOnly, err := p.tempName(final)
	if err != nil {
		return err
	}
	setArgAfter(args, "-o", hostOnly)
	backend := &actions.Job{
		Tool: j.Tool, Triple: j.Triple, Args: args, Cost: j.Cost,
		Outputs: []string{hostOnly},
	}
	var embedDeps []*actions.Job
	for _, in := range j.Inputs {
		if contains(blobs, in) {
			continue
		}
		backend.Inputs = append(backend.Inputs, in)
		if d := pr[in]; d != nil {
			backend.Deps = append(backend.Deps, d)
		}
	}
	embedDeps = append(embedDeps, backend)
	for _, b := range blobs {
		if d := pr[b]; d != nil {
			embedDeps = append(embedDeps, d)
		}
	}
	embed := &actions.Job{
		Tool:    "Offload::Embedder",
		Triple:  j.Triple,
		Args:    append([]string{p.Self, "offload-embed", "-o", final, hostOnly}, blobs...),
		Inputs:  append([]string{hostOnly}, blobs...),
		Outputs: []string{final},
		Deps:    embedDeps,
		Cost:    0.02,
	}
	steps := p.Steps
	embed.Run = func(ctx context.Context, _, _ io.Writer) error {
		return steps.Embed(ctx, final, hostOnly, blobs)
	}
	plan.Graph.Add(backend)
	plan.Graph.Add(embed)
	pr[hostOnly] = backend
	pr[final] = embed
	return nil
}

// tempName names a temporary like clang: <tmp>/<stem>-<6 hex>.<ext>.
func (p *Planner) tempName(like string) (string, error) {
	base := filepath.Base(like)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	if i := strings.LastIndexByte(stem, '-'); i > 0 && len(stem)-i == 7 && strings.HasPrefix(like, p.TempDir) {
		stem = stem[:i] // already a clang temporary name
	}
	dir := p.TempDir
	if dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, fmt.Sprintf("%s-%s%s", stem, tempname.Hex6(), ext)), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func argAfter(argv []string, opt string) string {
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == opt {
			return argv[i+1]
		}
	}
	return ""
}

func setArgAfter(argv []string, opt, value string) {
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == opt {
			argv[i+1] = value
			return
		}
	}
}

// embedsOffload reports whether a compile embeds offload binaries.
func embedsOffload(argv []string) bool {
	for _, a := range argv {
		if strings.HasPrefix(a, "-fembed-offload-object=") {
			return true
		}
	}
	return false
}
