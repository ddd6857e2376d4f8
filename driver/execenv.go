package driver

import (
	"context"
	"io"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/config"
	"github.com/offcc/offcc/internal/atomicfile"
)

// execEnv is what running a plan needs besides the plan, as cmd/go's
// Builder and Shell are what running its action graph needs: the Shell
// the jobs run through and the executor's options (how many jobs at once
// or make's jobserver, the memory governor, the build cache's session,
// the progress line, the build farm's client, the trace). newExecEnv
// builds it, the one place that reads the command line's options for
// running a plan; close releases what it opened.
type execEnv struct {
	// shell runs the jobs, writing through the progress line when there
	// is one.
	shell *actions.Shell
	// options are the executor's.
	options actions.Options
	// session is the build cache's session (options.Cache), nil when the
	// cache is off; command, when not nil, is where it stores the
	// compile's whole result once the build succeeds.
	session *cache.Session
	command *cache.CommandKey
	// progress is the status line, nil when there is none.
	progress Progress
	// traceFile is the Chrome trace file to write (--job-trace,
	// OFFCC_JOB_TRACE), "" for none.
	traceFile string
	// closers undo what newExecEnv opened, in the reverse order.
	closers []func()
}

// newExecEnv builds the environment that runs plan, a plan of b. What it
// opens, close closes; on an error it has closed it already.
func (b *offloadBuild) newExecEnv(plan *Plan) (_ *execEnv, err error) {
	inv, opts, tempDir := b.inv, b.opts, b.temp.path
	env := &execEnv{command: b.command}
	defer func() {
		if err != nil {
			env.close()
		}
	}()
	jobs, js, err := inv.concurrency(opts)
	if err != nil {
		return nil, err
	}
	if js != nil {
		env.onClose(func() { js.Close() })
	}
	shopt := actions.ShellOptions{
		Stdout: inv.Stdout, Stderr: inv.Stderr, Verbose: opts.Verbose,
		TempDir: tempDir, Env: []string{"TMPDIR=" + tempDir},
	}
	if plan.ReadsStdin && inv.Stdin != nil {
		shopt.Stdin = func() ([]byte, error) { return io.ReadAll(inv.Stdin) }
	}
	env.traceFile = inv.jobTraceFile(opts)
	var trace *actions.Trace
	traceLines, _ := config.ParseBool(inv.getenv("OFFCC_TRACE"))
	if env.traceFile != "" || traceLines {
		trace = &actions.Trace{}
		if traceLines {
			trace.Lines = inv.Stderr
		}
	}
	// clang's driver stops a CUDA, HIP or SYCL build at its first failing
	// job (it compiles one source several times: one error, printed
	// once); other builds run on what does not depend on a failure.
	stop := b.kind == actions.CUDA || b.kind == actions.HIP || b.kind == actions.SYCL
	env.options = actions.Options{Jobs: jobs, Jobserver: js, Trace: trace, StopAfterFailure: stop}
	gov, closeGov, err := inv.memory(opts, b.cache, tempDir)
	if err != nil {
		return nil, err
	}
	if gov != nil {
		env.options.Memory = gov
		env.onClose(closeGov)
	}
	if b.cache != nil {
		// The session that looked the whole compile up, if one did, is
		// the build's to close (offloadBuild.close).
		env.session = b.session
		if env.session == nil {
			env.session = inv.newSession(b.cache, tempDir, opts)
			env.onClose(env.session.Close)
		}
		env.options.Cache = env.session
	}
	// The status line comes before the farm's client, which runs its
	// dependency scans through the build's Shell (and so its writers);
	// it shows nothing until the first job starts.
	if inv.Services != nil && inv.Services.Progress != nil {
		env.progress = inv.Services.Progress(inv.serviceEnv(), inv.Stderr)
	}
	if env.progress != nil {
		shopt.Stdout, shopt.Stderr = env.progress.Writer(inv.Stdout), env.progress.Writer(inv.Stderr)
		env.options.Observer = env.progress
	}
	env.shell = actions.NewShell(shopt)
	// The farm reads the jobs with the option tables of the build's
	// release (the workers with those of the LLVM they run), and sends
	// them to workers of the build's toolchain only.
	url := inv.remoteExecURL(opts)
	if url != "" && inv.Services != nil && inv.Services.Remote != nil {
		req := RemoteRequest{URL: url, Clang: b.clang, Release: b.release.Major, TempDir: tempDir, Shell: env.shell}
		if gov != nil {
			req.Peaks = gov
		}
		if client, closeClient := inv.Services.Remote(inv.serviceEnv(), req); client != nil {
			env.options.Remote = client
			env.onClose(closeClient)
		}
	}
	return env, nil
}

// onClose adds f to what close runs.
func (env *execEnv) onClose(f func()) { env.closers = append(env.closers, f) }

// close closes what newExecEnv opened, the last opened first: the farm's
// client, the session, the memory governor, the jobserver.
func (env *execEnv) close() {
	for i := len(env.closers) - 1; i >= 0; i-- {
		env.closers[i]()
	}
	env.closers = nil
}

// execute runs plan in env and returns the exit status: the build's
// (report), or 1 when the job trace asked for cannot be written. A build
// that succeeds stores its whole result where env says.
func (inv *Invocation) execute(ctx context.Context, plan *Plan, env *execEnv) int {
	err := actions.Execute(ctx, plan.Graph, env.shell, env.options)
	if env.progress != nil {
		env.progress.Close()
	}
	status := inv.report(err)
	if status == 0 && env.command != nil {
		env.session.StoreCommand(*env.command, plan.Graph)
	}
	return inv.writeTrace(env, status)
}

// writeTrace writes the trace's totals line (OFFCC_TRACE) and its
// Chrome trace file, and returns status, or 1 for a successful build
// whose trace file cannot be written.
func (inv *Invocation) writeTrace(env *execEnv, status int) int {
	trace := env.options.Trace
	if trace != nil && trace.Lines != nil {
		self, children := processCPU()
		trace.WriteTotals(trace.Lines, self, children)
	}
	if env.traceFile != "" {
		if werr := atomicfile.WriteFunc(env.traceFile, 0o666, func(w io.Writer) error {
			return trace.WriteChrome(w, inv.prog()+" "+strings.Join(inv.Args, " "))
		}); werr != nil {
			inv.errorf("cannot write the job trace: %v", werr)
			if status == 0 {
				status = 1
			}
		}
	}
	return status
}

// jobTraceFile is the Chrome trace file --job-trace, else OFFCC_JOB_TRACE,
// names; "" for none.
func (inv *Invocation) jobTraceFile(opts *Options) string {
	if opts.JobTrace != "" {
		return opts.JobTrace
	}
	return inv.getenv("OFFCC_JOB_TRACE")
}
