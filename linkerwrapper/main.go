package linkerwrapper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/offcc/offcc/actions"
)

// Main runs the link stage as a command ("offcc linker-wrapper") with
// clang-linker-wrapper's command line args (without the program name) and
// returns the exit status. It plans the link (Plan) and runs the actions
// with offcc's executor, --wrapper-jobs (else cfg.Jobs) at a time. With
// --dry-run it prints the commands in clang's -v quoting and runs nothing.
// Errors are reported on cfg.Stderr as one line "offcc: error: ...".
func Main(ctx context.Context, cfg Config, args []string) int {
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	fail := func(err error) int {
		fmt.Fprintf(cfg.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	cl, err := ParseReleaseCommandLine(cfg.Release, args)
	if err != nil {
		return fail(err)
	}
	o := cl.o
	if o.dryRun {
		acts, err := Plan(cfg, cl, nil, cfg.Stderr)
		if err != nil {
			return fail(err)
		}
		sh := actions.NewShell(actions.ShellOptions{Stdout: cfg.Stdout, Stderr: cfg.Stderr})
		for _, a := range acts {
			// clang-linker-wrapper compiles its registration module
			// in-process and prints no command for it; nor does offcc.
			if a.Run == nil && a.Kind != actions.Wrap {
				sh.Print(actions.FormatVerbose(a.Command) + "\n")
			}
		}
		return 0
	}
	if !o.saveTemps {
		cfg.TempDir, err = os.MkdirTemp("", "offcc-link-")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(cfg.TempDir)
	}
	cfg.Verbose = o.verbose
	acts, err := Plan(cfg, cl, nil, cfg.Stderr)
	if err != nil {
		return fail(err)
	}
	g := &actions.Graph{}
	for _, a := range acts {
		if err := g.Add(a); err != nil {
			return fail(err)
		}
	}
	jobs := o.wrapperJobs
	if jobs == 0 {
		jobs = cfg.Jobs
	}
	if o.wrapperJobserver {
		jobs = runtime.NumCPU()
	}
	shopt := actions.ShellOptions{Stdout: cfg.Stdout, Stderr: cfg.Stderr, Verbose: o.verbose, TempDir: cfg.TempDir}
	if cfg.TempDir != "" {
		shopt.Env = []string{"TMPDIR=" + cfg.TempDir}
	}
	err = actions.Execute(ctx, g, actions.NewShell(shopt), actions.Options{Jobs: jobs, Jobserver: cfg.Jobserver})
	if err != nil {
		return fail(describe(err))
	}
	return 0
}

// describe turns an Execute error into the link stage's one-line message,
// naming the step that failed.
func describe(err error) error {
	var ee *actions.ExitError
	if !errors.As(err, &ee) || ee.Action == nil || !ee.CommandFailed() {
		if ee != nil && ee.Action != nil {
			return ee.Err
		}
		return err
	}
	a := ee.Action
	what := "wrapping device images"
	switch a.Kind {
	case actions.DeviceLink:
		t := a.Target.Arch
		if t == "" || t == "generic" {
			t = a.Target.Triple
		}
		what = "linking device code for " + t
	case actions.HostLink:
		what = "host linking"
	case actions.Link:
		what = "clang-linker-wrapper"
	}
	if ee.Code >= 128 {
		return fmt.Errorf("%s failed: %v", what, ee)
	}
	return fmt.Errorf("%s failed with exit code %d", what, ee.Code)
}
