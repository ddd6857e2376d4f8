package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// recorder is a set of in-process jobs that records start order and
// concurrency.
type recorder struct {
	mu       sync.Mutex
	order    []string
	done     map[*Job]bool
	cur, max int
	errs     []string
}

func (r *recorder) job(g *Graph, name string, cost float64, d time.Duration, deps ...*Job) *Job {
	j := &Job{Tool: name, Cost: cost, Deps: deps, Args: []string{"offcc", name}}
	j.Run = func(ctx context.Context, stdout, stderr io.Writer) error {
		r.mu.Lock()
		if r.done == nil {
			r.done = map[*Job]bool{}
		}
		for _, dep := range j.Deps {
			if !r.done[dep] {
				r.errs = append(r.errs, fmt.Sprintf("%s started before dep %s finished", name, dep.Tool))
			}
		}
		r.order = append(r.order, name)
		r.cur++
		r.max = max(r.max, r.cur)
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			r.cur--
			r.done[j] = true
			r.mu.Unlock()
		}()
		fmt.Fprintf(stdout, "out %s\n", name)
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.Add(j)
}

func TestPriorityOrder(t *testing.T) {
	var g Graph
	var r recorder
	a := r.job(&g, "a", 1, 0)
	b := r.job(&g, "b", 5, 0)
	r.job(&g, "c", 1, 0, b)
	r.job(&g, "d", 3, 0)
	r.job(&g, "e", 10, 0, a)
	// Longest paths: a=11 e=10 b=6 d=3 c=1; e becomes ready after a.
	var stdout, stderr, trace bytes.Buffer
	if err := Execute(context.Background(), &g, Options{Jobs: 1, Stdout: &stdout, Stderr: &stderr, Verbose: true, Trace: &trace}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "e", "b", "d", "c"}; !slices.Equal(r.order, want) {
		t.Errorf("order %v, want %v", r.order, want)
	}
	if got, want := stdout.String(), "out a\nout e\nout b\nout d\nout c\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if !strings.HasPrefix(stderr.String(), ` "offcc" a`+"\n") {
		t.Errorf("verbose output %q", stderr.String())
	}
	if n := strings.Count(trace.String(), "\njob "); n != 4 || !strings.HasPrefix(trace.String(), "job a ") {
		t.Errorf("trace %q", trace.String())
	}
	// Ties go by planning order.
	var h Graph
	var r2 recorder
	for _, n := range []string{"x", "y", "z"} {
		r2.job(&h, n, 0, 0)
	}
	if err := Execute(context.Background(), &h, Options{Jobs: 1, Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"x", "y", "z"}; !slices.Equal(r2.order, want) {
		t.Errorf("tie order %v, want %v", r2.order, want)
	}
}

func TestConcurrencyLimitAndDeps(t *testing.T) {
	for _, jobs := range []int{1, 2, 4, 7} {
		var g Graph
		var r recorder
		var all []*Job
		for i := range 40 {
			var deps []*Job
			for k := 1; k <= 3; k++ {
				if i >= 5*k && (i+k)%3 == 0 {
					deps = append(deps, all[i-5*k])
				}
			}
			all = append(all, r.job(&g, fmt.Sprint("j", i), float64(i%5), 3*time.Millisecond, deps...))
		}
		var stdout bytes.Buffer
		if err := Execute(context.Background(), &g, Options{Jobs: jobs, Stdout: &stdout, Stderr: io.Discard}); err != nil {
			t.Fatal(err)
		}
		if r.max != jobs {
			t.Errorf("Jobs=%d: max concurrency %d", jobs, r.max)
		}
		if len(r.order) != 40 || len(r.errs) > 0 {
			t.Errorf("Jobs=%d: ran %d jobs; %v", jobs, len(r.order), r.errs)
		}
		// Captured output is written whole per job.
		if n := strings.Count(stdout.String(), "out j"); n != 40 {
			t.Errorf("Jobs=%d: %d output lines", jobs, n)
		}
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestFailureKillsRunningJobs(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	var g Graph
	var laterStarted atomic.Bool
	// ok: highest priority, succeeds quickly, its output is kept.
	g.Add(&Job{Tool: "ok", Cost: 20, Outputs: []string{p("ok.o")}, Args: []string{"offcc", "ok"},
		Run: func(ctx context.Context, stdout, stderr io.Writer) error {
			fmt.Fprintln(stderr, "ok warning")
			return os.WriteFile(p("ok.o"), []byte("ok"), 0o666)
		}})
	// long: a child that spawns a grandchild, both sleeping.
	long := g.Add(&Job{Tool: "long", Cost: 10, Outputs: []string{p("long.o")},
		Args: []string{"sh", "-c", `echo partial > "$1"; sleep 30 & echo $! > "$2"; echo started > "$3"; sleep 30; wait`,
			"sh", p("long.o"), p("gc.pid"), p("long.started")}})
	// fail: starts when ok is done, waits for long to be running, fails.
	fail := g.Add(&Job{Tool: "fail", Cost: 5, Outputs: []string{p("fail.o")},
		Args: []string{"sh", "-c", `echo partial > "$1"; while [ ! -s "$2" ]; do sleep 0.02; done; echo msg >&2; exit 3`,
			"sh", p("fail.o"), p("long.started")}})
	g.Add(&Job{Tool: "later", Cost: 1, Outputs: []string{p("later.o")}, Args: []string{"offcc", "later"},
		Run: func(context.Context, io.Writer, io.Writer) error { laterStarted.Store(true); return nil }})
	var stdout, stderr bytes.Buffer
	t0 := time.Now()
	err := Execute(context.Background(), &g, Options{Jobs: 2, Stdout: &stdout, Stderr: &stderr})
	elapsed := time.Since(t0)
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v, want *ExitError", err)
	}
	if ee.Code != 3 || ee.Job != fail {
		t.Errorf("ExitError code %d job %v, want 3 fail", ee.Code, ee.Job.Tool)
	}
	if want := "fail command failed with exit code 3 (use -v to see invocation)"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	if elapsed > 4*time.Second {
		t.Errorf("took %v", elapsed)
	}
	if !strings.Contains(stderr.String(), "msg\n") || !strings.Contains(stderr.String(), "ok warning\n") {
		t.Errorf("stderr %q", stderr.String())
	}
	if laterStarted.Load() {
		t.Error("a job started after the failure")
	}
	for name, want := range map[string]bool{"ok.o": true, "long.o": false, "fail.o": false, "later.o": false} {
		if _, err := os.Stat(p(name)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", name, err == nil, want)
		}
	}
	gc := readPid(t, p("gc.pid"))
	deadline := time.Now().Add(time.Second)
	for alive(gc) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(gc) {
		syscall.Kill(gc, syscall.SIGKILL)
		t.Errorf("grandchild %d still alive", gc)
	}
	_ = long
}

func TestKillEscalatesToSIGKILL(t *testing.T) {
	old := killGrace
	killGrace = 200 * time.Millisecond
	defer func() { killGrace = old }()
	dir := t.TempDir()
	var g Graph
	g.Add(&Job{Tool: "stubborn", Cost: 2, Outputs: []string{filepath.Join(dir, "s.o")},
		Args: []string{"sh", "-c", `trap '' TERM; echo x > "$1"; echo $$ > "$2"; sleep 30 & wait; sleep 30`, "sh",
			filepath.Join(dir, "s.o"), filepath.Join(dir, "s.pid")}})
	g.Add(&Job{Tool: "fail", Args: []string{"sh", "-c", `while [ ! -s "$1" ]; do sleep 0.02; done; exit 1`, "sh", filepath.Join(dir, "s.pid")}})
	t0 := time.Now()
	err := Execute(context.Background(), &g, Options{Jobs: 2, Stdout: io.Discard, Stderr: io.Discard})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || ee.Job.Tool != "fail" {
		t.Fatalf("err = %#v", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "s.o")); err == nil {
		t.Error("output of killed job kept")
	}
}

func TestPublish(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	var g Graph
	okJob := g.Add(&Job{Tool: "ok", Cost: 2, Outputs: []string{p("a.tmp")}, Publish: []Rename{{p("a.tmp"), p("a")}},
		Args: []string{"sh", "-c", `echo a > "$1"`, "sh", p("a.tmp")}})
	g.Add(&Job{Tool: "user", Deps: []*Job{okJob}, Outputs: []string{p("b.tmp")}, Publish: []Rename{{p("b.tmp"), p("b")}},
		Args: []string{"sh", "-c", `test -f "$1" && echo b > "$2" && exit 1`, "sh", p("a"), p("b.tmp")}})
	err := Execute(context.Background(), &g, Options{Jobs: 2, Stdout: io.Discard, Stderr: io.Discard})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("err = %v", err)
	}
	exists := func(n string) bool { _, err := os.Stat(p(n)); return err == nil }
	if !exists("a") || exists("a.tmp") {
		t.Error("successful job not published")
	}
	if exists("b") || exists("b.tmp") {
		t.Error("failed job published or its temp kept")
	}
}

func TestContextCancel(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	g.Add(&Job{Tool: "sleep", Outputs: []string{filepath.Join(dir, "s.o")},
		Args: []string{"sh", "-c", `echo > "$1"; sleep 30`, "sh", filepath.Join(dir, "s.o")}})
	var r recorder
	r.job(&g, "inproc", 0, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := Execute(ctx, &g, Options{Jobs: 4, Stdout: io.Discard, Stderr: io.Discard})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Job != nil || ee.Code != 1 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %#v", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "s.o")); err == nil {
		t.Error("output of cancelled job kept")
	}
}

func TestExecErrors(t *testing.T) {
	var g Graph
	g.Add(&Job{Tool: "missing", Args: []string{"/nonexistent/tool"}})
	err := Execute(context.Background(), &g, Options{Jobs: 1, Stdout: io.Discard, Stderr: io.Discard})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(err.Error(), "unable to execute") {
		t.Errorf("err = %v", err)
	}
	var h Graph
	h.Add(&Job{Tool: "sig", Args: []string{"sh", "-c", "kill -9 $$"}})
	err = Execute(context.Background(), &h, Options{Jobs: 1, Stdout: io.Discard, Stderr: io.Discard})
	if !errors.As(err, &ee) || ee.Code != 128+9 || !strings.Contains(err.Error(), "signal") {
		t.Errorf("err = %v", err)
	}
	var k Graph
	k.Add(&Job{Tool: "panic", Run: func(context.Context, io.Writer, io.Writer) error { panic("boom") }})
	err = Execute(context.Background(), &k, Options{Jobs: 1, Stdout: io.Discard, Stderr: io.Discard})
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("err = %v", err)
	}
	var e Graph
	e.Add(&Job{Tool: "env", Env: []string{"OFFCC_TEST_X=hello"}, Args: []string{"sh", "-c", `echo "$OFFCC_TEST_X"; read x && echo stdin-not-null; true`}})
	var out bytes.Buffer
	if err := Execute(context.Background(), &e, Options{Jobs: 2, Stdout: &out, Stderr: io.Discard}); err != nil || out.String() != "hello\n" {
		t.Errorf("env job: %v %q", err, out.String())
	}
}
