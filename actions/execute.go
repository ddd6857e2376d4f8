package actions

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"
	"syscall"
	"time"
)

// Options control Execute.
type Options struct {
	// Jobs is the concurrency limit; values below 1 mean 1.
	Jobs int
	// Jobserver, when non-nil, limits concurrency further: the first running
	// job uses the process's implicit slot and each additional concurrently
	// running job holds a token.
	Jobserver *Jobserver
	// Stdout and Stderr receive the jobs' output; nil means os.Stdout and
	// os.Stderr.
	Stdout, Stderr io.Writer
	// Verbose prints each command to Stderr in clang -v form (FormatVerbose)
	// just before it starts.
	Verbose bool
	// Trace, when non-nil, receives one line per finished job:
	// "job <tool> <wall> <exit>".
	Trace io.Writer
}

// killGrace is how long a cancelled child's process group has between
// SIGTERM and SIGKILL.
var killGrace = 2 * time.Second

// ExitError reports a failed build. Job is the first job that failed; it is
// nil when the build stopped because the context passed to Execute was done,
// in which case Code is 1 and Err is ctx.Err() (the caller decides how to
// report an interrupt, e.g. exit status 130 for SIGINT).
type ExitError struct {
	Job  *Job
	Code int   // the child's exit status, 128+signal if it was killed, else 1
	Err  error // the underlying error
}

// Error returns a one-line message in the style of clang's
// "linker command failed with exit code 1 (use -v to see invocation)".
func (e *ExitError) Error() string {
	if e.Job == nil {
		return fmt.Sprintf("build interrupted: %v", e.Err)
	}
	name := e.Job.name()
	var ee *exec.ExitError
	switch {
	case e.Job.Run != nil:
		return fmt.Sprintf("%s: %v", name, e.Err)
	case errors.As(e.Err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("%s command failed due to signal %d (use -v to see invocation)", name, int(ws.Signal()))
		}
		return fmt.Sprintf("%s command failed with exit code %d (use -v to see invocation)", name, e.Code)
	default:
		return fmt.Sprintf("%s: unable to execute command: %v", name, e.Err)
	}
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// result is what a job goroutine reports.
type result struct {
	j              *Job
	token          bool
	err            error
	code           int
	stdout, stderr *bytes.Buffer
	wall           time.Duration
}

// Execute runs the jobs of g, each after all of its dependencies succeeded.
// Among ready jobs the one with the longest path cost to a sink starts first
// (ties: planning order). At most opt.Jobs jobs run at once, and with a
// jobserver every job beyond the first running one holds a token.
//
// External commands run with stdin from /dev/null, each in its own process
// group. With opt.Jobs > 1 a job's stdout and stderr are captured and
// written whole when it ends; with opt.Jobs == 1 they stream.
//
// On the first failure (or when ctx is done) Execute starts nothing new,
// sends SIGTERM to the process group of every running child (SIGKILL after
// 2 s), cancels in-process jobs through their context, waits for all of
// them, deletes the Outputs (and pending Publish sources) of every job that
// failed or was killed, and returns an *ExitError for the first failure.
// The output of killed jobs is discarded. A successful job's Publish renames
// happen right after it succeeds. Graph errors (see Validate) are returned
// as is.
func Execute(ctx context.Context, g *Graph, opt Options) error {
	if err := g.Validate(); err != nil {
		return err
	}
	if opt.Jobs < 1 {
		opt.Jobs = 1
	}
	if opt.Stdout == nil {
		opt.Stdout = os.Stdout
	}
	if opt.Stderr == nil {
		opt.Stderr = os.Stderr
	}
	e := &executor{opt: opt, stream: opt.Jobs == 1}
	return e.run(ctx, g)
}

type executor struct {
	opt    Options
	stream bool
	outMu  sync.Mutex // serialises writes to opt.Stdout, opt.Stderr, opt.Trace
}

// readyHeap orders ready jobs by priority, then planning order.
type readyHeap struct {
	items []int // job indices
	prio  []float64
}

func (h *readyHeap) Len() int { return len(h.items) }
func (h *readyHeap) Less(a, b int) bool {
	ia, ib := h.items[a], h.items[b]
	if h.prio[ia] != h.prio[ib] {
		return h.prio[ia] > h.prio[ib]
	}
	return ia < ib
}
func (h *readyHeap) Swap(a, b int) { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *readyHeap) Push(x any)    { h.items = append(h.items, x.(int)) }
func (h *readyHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// priorities returns, for each job, its own cost plus the largest priority
// of the jobs that depend on it (the longest path cost to a sink), and the
// users of each job.
func priorities(g *Graph, index map[*Job]int) (prio []float64, users [][]int, pending []int) {
	n := len(g.Jobs)
	users = make([][]int, n)
	pending = make([]int, n)
	for i, j := range g.Jobs {
		seen := make(map[*Job]bool, len(j.Deps))
		for _, d := range j.Deps {
			if seen[d] {
				continue
			}
			seen[d] = true
			users[index[d]] = append(users[index[d]], i)
			pending[i]++
		}
	}
	// Reverse topological order via DFS post-order over users (the graph is
	// acyclic: Validate passed).
	order := make([]int, 0, n)
	visited := make([]bool, n)
	var visit func(int)
	visit = func(i int) {
		visited[i] = true
		for _, u := range users[i] {
			if !visited[u] {
				visit(u)
			}
		}
		order = append(order, i) // all users before i
	}
	for i := range g.Jobs {
		if !visited[i] {
			visit(i)
		}
	}
	prio = make([]float64, n)
	for _, i := range order {
		c := g.Jobs[i].Cost
		if c == 0 {
			c = 1
		}
		best := 0.0
		for _, u := range users[i] {
			best = max(best, prio[u])
		}
		prio[i] = c + best
	}
	return prio, users, pending
}

func (e *executor) run(ctx context.Context, g *Graph) error {
	index := make(map[*Job]int, len(g.Jobs))
	for i, j := range g.Jobs {
		index[j] = i
	}
	prio, users, pending := priorities(g, index)
	ready := &readyHeap{prio: prio}
	for i := range g.Jobs {
		if pending[i] == 0 {
			ready.items = append(ready.items, i)
		}
	}
	heap.Init(ready)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel() // also ends any acquire (derived from runCtx)
	js := e.opt.Jobserver
	done := make(chan result, len(g.Jobs))
	var (
		first        *ExitError
		running      int
		implicitBusy bool
		acquiring    bool
		acqCancel    context.CancelFunc = func() {}
		tokCh                           = make(chan error, 1)
		jsBroken     bool
		ctxDone      = ctx.Done()
	)
	fail := func(err *ExitError) {
		if first == nil {
			first = err
			cancel()
		}
	}
	start := func(token bool) {
		i := heap.Pop(ready).(int)
		j := g.Jobs[i]
		if e.opt.Verbose && len(j.Args) > 0 {
			e.outMu.Lock()
			fmt.Fprintln(e.opt.Stderr, FormatVerbose(j.Args))
			e.outMu.Unlock()
		}
		running++
		go func() {
			r := e.runJob(runCtx, j)
			r.token = token
			done <- r
		}()
	}
	for {
		if first == nil && ctx.Err() != nil {
			fail(&ExitError{Code: 1, Err: ctx.Err()})
		}
		if first == nil {
			for running < e.opt.Jobs && ready.Len() > 0 {
				if !implicitBusy {
					implicitBusy = true
					start(false)
					continue
				}
				if js == nil || jsBroken {
					if js == nil {
						start(false)
						continue
					}
					break
				}
				if !acquiring {
					acquiring = true
					actx, c := context.WithCancel(runCtx)
					acqCancel = c
					go func() { tokCh <- js.Acquire(actx) }()
				}
				break
			}
		}
		// Cancel an acquire nobody needs any more (it could block forever).
		if acquiring && (first != nil || ready.Len() == 0 || running >= e.opt.Jobs) {
			acqCancel()
		}
		if running == 0 && !acquiring {
			break
		}
		select {
		case r := <-done:
			running--
			if r.token {
				js.Release()
			} else {
				implicitBusy = false
			}
			e.trace("job %s %s %d", r.j.name(), r.wall.Round(time.Millisecond), r.code)
			if r.err != nil {
				if first == nil && ctx.Err() != nil {
					// Killed because the caller's context is done.
					fail(&ExitError{Code: 1, Err: ctx.Err()})
				}
				if first == nil {
					e.flush(r)
					fail(&ExitError{Job: r.j, Code: r.code, Err: r.err})
				}
				removeOutputs(r.j)
				continue
			}
			e.flush(r)
			for _, u := range users[index[r.j]] {
				pending[u]--
				if pending[u] == 0 {
					heap.Push(ready, u)
				}
			}
		case err := <-tokCh:
			acquiring = false
			acqCancel()
			if err != nil {
				if runCtx.Err() == nil && !errors.Is(err, context.Canceled) {
					// A broken jobserver: go on with the implicit slot.
					jsBroken = true
					e.trace("jobserver %v", err)
				}
				continue
			}
			if first == nil && running < e.opt.Jobs && ready.Len() > 0 {
				if !implicitBusy {
					// The implicit slot came free meanwhile: use it and
					// give the token back.
					js.Release()
					implicitBusy = true
					start(false)
				} else {
					start(true)
				}
			} else {
				js.Release()
			}
		case <-ctxDone:
			ctxDone = nil
			fail(&ExitError{Code: 1, Err: ctx.Err()})
		}
	}
	if first != nil {
		return first
	}
	return nil
}

func (e *executor) trace(format string, args ...any) {
	if e.opt.Trace == nil {
		return
	}
	e.outMu.Lock()
	defer e.outMu.Unlock()
	fmt.Fprintf(e.opt.Trace, format+"\n", args...)
}

// flush writes a job's captured output.
func (e *executor) flush(r result) {
	if r.stdout == nil {
		return
	}
	e.outMu.Lock()
	defer e.outMu.Unlock()
	e.opt.Stdout.Write(r.stdout.Bytes())
	e.opt.Stderr.Write(r.stderr.Bytes())
}

// removeOutputs deletes what a failed or killed job may have written.
func removeOutputs(j *Job) {
	for _, o := range j.Outputs {
		os.Remove(o)
	}
	for _, p := range j.Publish {
		os.Remove(p.From)
	}
}

// runJob runs one job and publishes its outputs if it succeeds.
func (e *executor) runJob(ctx context.Context, j *Job) (r result) {
	r.j = j
	var stdout, stderr io.Writer
	if e.stream {
		stdout, stderr = e.opt.Stdout, e.opt.Stderr
	} else {
		r.stdout, r.stderr = new(bytes.Buffer), new(bytes.Buffer)
		stdout, stderr = r.stdout, r.stderr
	}
	t0 := time.Now()
	if j.Run != nil {
		r.err = runInProcess(ctx, j, stdout, stderr)
	} else {
		r.err = runCommand(ctx, j, stdout, stderr)
	}
	if r.err == nil {
		for _, p := range j.Publish {
			if err := os.Rename(p.From, p.To); err != nil {
				r.err = err
				break
			}
		}
	}
	r.wall = time.Since(t0)
	if r.err != nil {
		r.code = exitCode(r.err)
	}
	return r
}

func runInProcess(ctx context.Context, j *Job, stdout, stderr io.Writer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return j.Run(ctx, stdout, stderr)
}

// exitCode maps an error to an exit status: the child's status, 128+signal
// for a signalled child, the ExitCode() of an error that has one, else 1.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		if c := ee.ExitCode(); c > 0 {
			return c
		}
		return 1
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		if c := ec.ExitCode(); c > 0 {
			return c
		}
	}
	return 1
}

// runCommand runs an external command in its own process group. When ctx is
// done the group gets SIGTERM, then SIGKILL after killGrace.
func runCommand(ctx context.Context, j *Job, stdout, stderr io.Writer) error {
	cmd := exec.Command(j.Args[0], j.Args[1:]...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if len(j.Env) > 0 {
		cmd.Env = append(os.Environ(), j.Env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	pgid := cmd.Process.Pid
	exited := make(chan struct{})
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		select {
		case <-exited:
			return
		case <-ctx.Done():
		}
		syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(killGrace)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			// The group still has a member holding our pipes (Wait has not
			// returned), so pgid cannot have been reused.
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}()
	err := cmd.Wait()
	close(exited)
	<-killerDone
	return err
}
