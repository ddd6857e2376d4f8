// Package driver is offcc's compiler driver: it reads a clang command line,
// plans the OpenMP offload compilation as a job graph and runs independent
// jobs at once. Command lines without offloading go to clang unchanged.
package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/toolchain"
)

// Invocation is one run of the driver: how it was called and where it writes.
type Invocation struct {
	// Argv0 is the name offcc was called by; clang runs under the same name,
	// so "offcc++" compiles C++ like clang++.
	Argv0 string
	// Args are the arguments after argv[0].
	Args []string
	// Env is the environment (os.Environ()).
	Env []string
	// Stdout and Stderr receive output and diagnostics.
	Stdout, Stderr io.Writer
	// Self is the path of the offcc executable, printed for in-process steps.
	Self string
	// Exec replaces the process with clang when offcc has nothing to add
	// (syscall.Exec); nil runs clang as a child and returns its status.
	Exec func(path string, argv, env []string) error
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
	llvm, err := toolchain.Find(opts.LLVMDir, inv.getenv)
	if err != nil {
		return inv.errorf("%v", err)
	}
	if !opts.Offload() || opts.PrintPhases {
		// Nothing to plan: clang's own driver does exactly what offcc would.
		return inv.runClang(llvm.Clang(), opts.ClangArgs)
	}
	return inv.offload(ctx, llvm, opts)
}

// runClang hands the command line to clang under offcc's name.
func (inv *Invocation) runClang(clang string, args []string) int {
	argv := append([]string{inv.prog()}, args...)
	if inv.Exec != nil {
		err := inv.Exec(clang, argv, inv.Env)
		return inv.errorf("cannot run %s: %v", clang, err)
	}
	g := &actions.Graph{}
	g.Add(&actions.Job{Tool: "clang", Args: append([]string{clang}, args...)})
	err := actions.Execute(context.Background(), g, actions.Options{Jobs: 1, Stdout: inv.Stdout, Stderr: inv.Stderr})
	var ee *actions.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if err != nil {
		return inv.errorf("%v", err)
	}
	return 0
}

func (inv *Invocation) offload(ctx context.Context, llvm *toolchain.LLVM, opts *Options) int {
	dryRun := opts.HashHashHash || opts.PrintBindings
	tmpRoot := inv.getenv("TMPDIR")
	if tmpRoot == "" {
		tmpRoot = os.TempDir()
	}
	tempDir := tmpRoot
	if !dryRun {
		// Every temporary of this build lives in one private directory,
		// removed whatever happens.
		d, err := os.MkdirTemp(tmpRoot, "offcc-")
		if err != nil {
			return inv.errorf("cannot create temporary directory: %v", err)
		}
		defer os.RemoveAll(d)
		tempDir = d
	}
	jobs, js, err := inv.concurrency(opts)
	if err != nil {
		return inv.errorf("%v", err)
	}
	if js != nil {
		defer js.Close()
	}
	steps := &ToolSteps{
		Prog: inv.prog(), Clang: llvm.Clang(),
		LLVMDirExplicit: opts.LLVMDir, Jobs: jobs, Jobserver: js,
	}
	planner := &Planner{
		Clang: llvm.Clang(), Argv0: inv.prog(), Self: inv.Self,
		TempDir: tempDir, Env: inv.Env, Steps: steps,
	}
	if !dryRun {
		// Only private temporary directories can stand for a placeholder.
		planner.Cache = newPlanCache(inv.getenv)
	}
	plan, err := planner.Plan(ctx, opts.ClangArgs)
	var ce *ClangError
	if errors.As(err, &ce) {
		if ce.Messages != "" {
			fmt.Fprintln(inv.Stderr, ce.Messages)
		}
		return ce.Code
	}
	if err != nil {
		return inv.errorf("%v", err)
	}
	switch {
	case opts.PrintBindings:
		printBindings(inv.Stderr, plan)
		return 0
	case opts.HashHashHash:
		for _, h := range plan.Header {
			fmt.Fprintln(inv.Stderr, h)
		}
		for _, j := range plan.Graph.Jobs {
			fmt.Fprintln(inv.Stderr, actions.FormatHash(j.Args))
		}
		return 0
	}
	if opts.Verbose {
		for _, h := range plan.Header {
			fmt.Fprintln(inv.Stderr, h)
		}
	} else {
		// Warnings clang's driver printed while planning.
		for _, h := range plan.Header {
			if strings.Contains(h, ": warning: ") {
				fmt.Fprintln(inv.Stderr, h)
			}
		}
	}
	if err := atomicOutputs(plan.Graph, tempDir); err != nil {
		return inv.errorf("%v", err)
	}
	for _, j := range plan.Graph.Jobs {
		if j.Run == nil {
			j.Env = append(j.Env, "TMPDIR="+tempDir)
		}
	}
	var trace io.Writer
	if inv.getenv("OFFCC_TRACE") != "" {
		trace = inv.Stderr // one line per finished job: tool, wall time, status
	}
	err = actions.Execute(ctx, plan.Graph, actions.Options{
		Jobs: jobs, Jobserver: js, Stdout: inv.Stdout, Stderr: inv.Stderr, Verbose: opts.Verbose, Trace: trace,
	})
	return inv.report(err)
}

// report turns Execute's result into an exit status, printing offcc's line
// for failures whose tool did not explain itself.
func (inv *Invocation) report(err error) int {
	if err == nil {
		return 0
	}
	var ee *actions.ExitError
	if !errors.As(err, &ee) {
		return inv.errorf("%v", err)
	}
	switch {
	case ee.Job == nil:
		inv.errorf("build interrupted")
		if ee.Code > 1 {
			return ee.Code
		}
		return 130
	case ee.Job.Run != nil:
		var se *statusError
		if !errors.As(ee.Err, &se) {
			inv.errorf("%v", ee.Err)
		}
	case ee.Job.Tool == "clang" || ee.Job.Tool == "clang::as":
		// The compiler printed its diagnostics; clang adds nothing.
	default:
		inv.errorf("%v", ee)
	}
	return ee.Code
}

// atomicOutputs makes every external job that writes a file outside the
// temporary directory write a temporary name beside it, renamed on success,
// so an interrupted or failed build never leaves a truncated output.
func atomicOutputs(g *actions.Graph, tempDir string) error {
	for _, j := range g.Jobs {
		if j.Run != nil {
			continue // in-process steps write atomically themselves
		}
		for i, a := range j.Args {
			if a != "-o" || i+1 >= len(j.Args) {
				continue
			}
			out := j.Args[i+1]
			if out == "-" || strings.HasPrefix(out, "/dev/") || strings.HasPrefix(out, tempDir+string(filepath.Separator)) {
				continue
			}
			tmp, err := atomicfile.TempName(out)
			if err != nil {
				return fmt.Errorf("cannot write '%s': %v", out, err)
			}
			j.Args[i+1] = tmp
			for k, o := range j.Outputs {
				if o == out {
					j.Outputs[k] = tmp
				}
			}
			j.Publish = append(j.Publish, actions.Rename{From: tmp, To: out})
		}
	}
	return nil
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
	if opts.UseJobserver {
		fmt.Fprintf(inv.Stderr, "%s: warning: --offload-jobs=jobserver: no jobserver in MAKEFLAGS; using %d jobs\n", inv.prog(), defaultJobs())
	}
	return defaultJobs(), nil, nil
}

// printBindings prints the graph as clang's -ccc-print-bindings does.
func printBindings(w io.Writer, plan *Plan) {
	for _, j := range plan.Graph.Jobs {
		var in []string
		for _, f := range j.Inputs {
			in = append(in, fmt.Sprintf("%q", f))
		}
		out := ""
		if len(j.Outputs) > 0 {
			out = j.Outputs[0]
		}
		fmt.Fprintf(w, "# %q - %q, inputs: [%s], output: %q\n", j.Triple, j.Tool, strings.Join(in, ", "), out)
	}
}

// ExecClang is the default Invocation.Exec: it replaces the process.
func ExecClang(path string, argv, env []string) error { return syscall.Exec(path, argv, env) }
