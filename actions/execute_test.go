package actions

import (
	"bytes"
	"context"
	"encoding/json"
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

// quietShell is a Shell that discards all output.
func quietShell() *Shell { return NewShell(ShellOptions{Stdout: io.Discard, Stderr: io.Discard}) }

// recorder is a set of in-process actions that records start order and
// concurrency. Each action writes an artifact named after it; an action
// depends on another by reading that artifact.
type recorder struct {
	mu       sync.Mutex
	order    []string
	done     map[*Action]bool
	cur, max int
	errs     []string
}

func (r *recorder) job(g *Graph, name string, cost float64, d time.Duration, deps ...*Action) *Action {
	a := &Action{Tool: name, Cost: cost, Command: []string{"offcc", name}, Outputs: []*Artifact{NewArtifact(name)}}
	for _, dep := range deps {
		a.Inputs = append(a.Inputs, dep.Outputs[0])
	}
	a.Run = func(ctx context.Context, sh *Shell) error {
		r.mu.Lock()
		if r.done == nil {
			r.done = map[*Action]bool{}
		}
		for _, dep := range a.Deps() {
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
			r.done[a] = true
			r.mu.Unlock()
		}()
		fmt.Fprintf(sh.Stdout(), "out %s\n", name)
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.MustAdd(a)
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
	var stdout, stderr, lines bytes.Buffer
	sh := NewShell(ShellOptions{Stdout: &stdout, Stderr: &stderr, Verbose: true})
	if err := Execute(context.Background(), &g, sh, Options{Jobs: 1, Trace: &Trace{Lines: &lines}}); err != nil {
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
	if n := strings.Count(lines.String(), "\njob "); n != 4 || !strings.HasPrefix(lines.String(), "job a ") {
		t.Errorf("trace lines %q", lines.String())
	}
	// Ties go by planning order.
	var h Graph
	var r2 recorder
	for _, n := range []string{"x", "y", "z"} {
		r2.job(&h, n, 0, 0)
	}
	if err := Execute(context.Background(), &h, quietShell(), Options{Jobs: 1}); err != nil {
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
		var all []*Action
		for i := range 40 {
			var deps []*Action
			for k := 1; k <= 3; k++ {
				if i >= 5*k && (i+k)%3 == 0 {
					deps = append(deps, all[i-5*k])
				}
			}
			all = append(all, r.job(&g, fmt.Sprint("j", i), float64(i%5), 3*time.Millisecond, deps...))
		}
		var stdout bytes.Buffer
		trace := &Trace{}
		if err := Execute(context.Background(), &g, NewShell(ShellOptions{Stdout: &stdout, Stderr: io.Discard}), Options{Jobs: jobs, Trace: trace}); err != nil {
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
		// No two events overlap in one slot, and slots stay below Jobs.
		evs := trace.Events()
		for i, x := range evs {
			if x.Slot < 0 || x.Slot >= jobs {
				t.Errorf("Jobs=%d: slot %d", jobs, x.Slot)
			}
			for _, y := range evs[i+1:] {
				if x.Slot == y.Slot && x.Start.Before(y.End) && y.Start.Before(x.End) {
					t.Errorf("Jobs=%d: %s and %s overlap in slot %d", jobs, x.Action.Tool, y.Action.Tool, x.Slot)
				}
			}
		}
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	var b []byte
	for i := 0; i < 200; i++ {
		var err error
		if b, err = os.ReadFile(path); err == nil && len(b) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestFailureKeepsIndependentActions checks clang's rule: an action that
// depends on a failed one never starts, independent actions run to the end
// and their diagnostics are printed, and the first failure is returned.
func TestFailureKeepsIndependentActions(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	var g Graph
	var dependentStarted atomic.Bool
	fail1 := g.MustAdd(&Action{Kind: DeviceCompile, Cost: 5, Outputs: []*Artifact{NewArtifact(p("a.o"))},
		Command: []string{"sh", "-c", `echo "error in a" >&2; exit 3`}})
	fail2 := g.MustAdd(&Action{Kind: DeviceCompile, Cost: 4, Outputs: []*Artifact{NewArtifact(p("b.o"))},
		Command: []string{"sh", "-c", `sleep 0.2; echo "error in b" >&2; exit 1`}})
	ok := g.MustAdd(&Action{Kind: DeviceCompile, Cost: 3, Outputs: []*Artifact{NewArtifact(p("c.o"))},
		Command: []string{"sh", "-c", `sleep 0.3; echo "warning in c" >&2; echo c > "$1"`, "sh", p("c.o")}})
	g.MustAdd(&Action{Kind: Package, Inputs: []*Artifact{fail1.Outputs[0], fail2.Outputs[0], ok.Outputs[0]},
		Run: func(context.Context, *Shell) error { dependentStarted.Store(true); return nil }})
	var stderr bytes.Buffer
	err := Execute(context.Background(), &g, NewShell(ShellOptions{Stdout: io.Discard, Stderr: &stderr}), Options{Jobs: 2})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Action != fail1 || ee.Code != 3 {
		t.Fatalf("err = %#v, want the first failure (exit 3)", err)
	}
	if want := "clang frontend command failed with exit code 3 (use -v to see invocation)"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	for _, msg := range []string{"error in a", "error in b", "warning in c"} {
		if !strings.Contains(stderr.String(), msg) {
			t.Errorf("stderr lacks %q: %q", msg, stderr.String())
		}
	}
	if dependentStarted.Load() {
		t.Error("an action depending on failed ones started")
	}
	if _, err := os.Stat(p("c.o")); err != nil {
		t.Errorf("independent action's output missing: %v", err)
	}
}

// TestCancelKillsProcessGroups checks that a cancelled build kills every
// running child and its children, discards their output and leaves no
// output file behind.
func TestCancelKillsProcessGroups(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	var g Graph
	g.MustAdd(&Action{Tool: "long", Cost: 10, Outputs: []*Artifact{NewArtifact(p("long.o"))},
		Command: []string{"sh", "-c", `echo partial > "$2"; sleep 30 & echo $! > "$3"; echo killed-output; sleep 30; wait`,
			"sh", "-o", p("long.o"), p("gc.pid")}})
	var r recorder
	r.job(&g, "inproc", 0, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		readPid(t, p("gc.pid"))
		cancel()
	}()
	var stdout bytes.Buffer
	t0 := time.Now()
	err := Execute(ctx, &g, NewShell(ShellOptions{Stdout: &stdout, Stderr: io.Discard}), Options{Jobs: 4})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Action != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %#v", err)
	}
	if d := time.Since(t0); d > 4*time.Second {
		t.Errorf("took %v", d)
	}
	if strings.Contains(stdout.String(), "killed-output") {
		t.Error("output of a killed action printed")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "gc.pid" {
			t.Errorf("left behind: %s", e.Name())
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
}

func TestKillEscalatesToSIGKILL(t *testing.T) {
	old := killGrace
	killGrace = 200 * time.Millisecond
	defer func() { killGrace = old }()
	dir := t.TempDir()
	var g Graph
	g.MustAdd(&Action{Tool: "stubborn", Outputs: []*Artifact{NewArtifact(filepath.Join(dir, "s.o"))},
		Command: []string{"sh", "-c", `trap '' TERM; echo $$ > "$1"; sleep 30 & wait; sleep 30`, "sh", filepath.Join(dir, "s.pid")}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		readPid(t, filepath.Join(dir, "s.pid"))
		cancel()
	}()
	t0 := time.Now()
	err := Execute(ctx, &g, quietShell(), Options{Jobs: 2})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Action != nil {
		t.Fatalf("err = %#v", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestPublish checks that a command's -o output outside the temporary
// directory appears only when the command succeeds, and that the action
// reading it sees it.
func TestPublish(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o755)
	p := func(n string) string { return filepath.Join(dir, n) }
	var g Graph
	ok := g.MustAdd(&Action{Tool: "ok", Cost: 2, Outputs: []*Artifact{NewArtifact(p("a"))},
		Command: []string{"sh", "-c", `case "$2" in */a) exit 9;; esac; echo a > "$2"`, "sh", "-o", p("a")}})
	g.MustAdd(&Action{Tool: "user", Inputs: ok.Outputs, Outputs: []*Artifact{NewArtifact(p("b"))},
		Command: []string{"sh", "-c", `test -f "$1" && echo b > "$3" && exit 1`, "sh", p("a"), "-o", p("b")}})
	g.MustAdd(&Action{Tool: "temp", Outputs: []*Artifact{NewArtifact(filepath.Join(tmp, "t.o"))},
		Command: []string{"sh", "-c", `echo t > "$2"`, "sh", "-o", filepath.Join(tmp, "t.o")}})
	err := Execute(context.Background(), &g, NewShell(ShellOptions{Stdout: io.Discard, Stderr: io.Discard, TempDir: tmp}), Options{Jobs: 2})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || ee.Action.Tool != "user" {
		t.Fatalf("err = %v", err)
	}
	names := func(d string) []string {
		ents, _ := os.ReadDir(d)
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	if got := names(dir); !slices.Equal(got, []string{"a", "tmp"}) {
		t.Errorf("files %v, want a and tmp (b failed, no temporaries)", got)
	}
	if got := names(tmp); !slices.Equal(got, []string{"t.o"}) {
		t.Errorf("temp dir %v, want t.o written in place", got)
	}
	// An output directory that does not exist: clang's message, with the
	// path the user named.
	var h Graph
	h.MustAdd(&Action{Tool: "x", Outputs: []*Artifact{NewArtifact(p("none/x.o"))}, Command: []string{"true", "-o", p("none/x.o")}})
	err = Execute(context.Background(), &h, quietShell(), Options{Jobs: 1})
	if want := "unable to open output file '" + p("none/x.o") + "': 'No such file or directory'"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// TestExpand checks that an action's expansion joins the running graph: the
// new actions run after it, actions reading its output wait for them, and
// an expansion can expand again.
func TestExpand(t *testing.T) {
	var g Graph
	var r recorder
	src := r.job(&g, "src", 1, 5*time.Millisecond)
	out := NewArtifact("linked")
	var mu sync.Mutex
	var log []string
	note := func(s string) {
		mu.Lock()
		log = append(log, s)
		mu.Unlock()
	}
	step := func(name string, in []*Artifact, outs ...*Artifact) *Action {
		return &Action{Tool: name, Inputs: in, Outputs: outs, Run: func(context.Context, *Shell) error {
			time.Sleep(5 * time.Millisecond)
			note(name)
			return nil
		}}
	}
	link := g.MustAdd(&Action{Kind: Link, Inputs: src.Outputs, Outputs: []*Artifact{out},
		Expand: func(context.Context, *Shell) ([]*Action, error) {
			note("expand")
			d1 := step("dev1", nil, NewArtifact("d1"))
			d2 := step("dev2", nil, NewArtifact("d2"))
			inner := &Action{Kind: Wrap, Inputs: []*Artifact{d1.Outputs[0], d2.Outputs[0]}, Outputs: []*Artifact{NewArtifact("w")},
				Expand: func(context.Context, *Shell) ([]*Action, error) {
					note("expand2")
					return []*Action{step("wrap", nil, NewArtifact("w2"))}, nil
				}}
			host := step("host", []*Artifact{inner.Outputs[0]}, out)
			return []*Action{d1, d2, inner, host}, nil
		}})
	g.MustAdd(step("after", []*Artifact{out}))
	trace := &Trace{}
	if err := Execute(context.Background(), &g, quietShell(), Options{Jobs: 3, Trace: trace}); err != nil {
		t.Fatal(err)
	}
	pos := func(s string) int { return slices.Index(log, s) }
	for _, s := range []string{"expand", "dev1", "dev2", "expand2", "wrap", "host", "after"} {
		if pos(s) < 0 {
			t.Fatalf("%s did not run: %v", s, log)
		}
	}
	if !(pos("expand") < pos("dev1") && pos("dev2") < pos("expand2") && pos("wrap") < pos("host") && pos("host") < pos("after")) {
		t.Errorf("order %v", log)
	}
	if out.Producer() == link || out.Producer().Tool != "host" {
		t.Errorf("linked's producer is %v, want the expansion's host action", out.Producer().Tool)
	}
	if n := len(trace.Events()); n != 8 {
		t.Errorf("%d trace events, want 8 (src, link, dev1, dev2, inner, wrap, host, after)", n)
	}
	// An expansion that fails is the build's failure.
	var h Graph
	h.MustAdd(&Action{Kind: Link, Expand: func(context.Context, *Shell) ([]*Action, error) {
		return nil, errors.New("cannot read images")
	}})
	if err := Execute(context.Background(), &h, quietShell(), Options{Jobs: 2}); err == nil || err.Error() != "cannot read images" {
		t.Errorf("err = %v", err)
	}
	// So does one whose actions do not fit the graph.
	var k Graph
	k.MustAdd(&Action{Kind: Link, Expand: func(context.Context, *Shell) ([]*Action, error) {
		f := NewArtifact("x")
		return []*Action{{Tool: "a", Outputs: []*Artifact{f}, Command: []string{"true"}}, {Tool: "b", Outputs: []*Artifact{f}, Command: []string{"true"}}}, nil
	}})
	if err := Execute(context.Background(), &k, quietShell(), Options{Jobs: 2}); err == nil || !strings.Contains(err.Error(), "both write x") {
		t.Errorf("err = %v", err)
	}
}

func TestExecErrors(t *testing.T) {
	var g Graph
	g.MustAdd(&Action{Tool: "missing", Command: []string{"/nonexistent/tool"}})
	err := Execute(context.Background(), &g, quietShell(), Options{Jobs: 1})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || err.Error() != `unable to execute command: Executable "/nonexistent/tool" doesn't exist!` {
		t.Errorf("err = %v", err)
	}
	var h Graph
	h.MustAdd(&Action{Kind: HostLink, Command: []string{"sh", "-c", "kill -9 $$"}})
	err = Execute(context.Background(), &h, quietShell(), Options{Jobs: 1})
	if !errors.As(err, &ee) || ee.Code != 128+9 || err.Error() != "linker command failed due to signal 9 (use -v to see invocation)" {
		t.Errorf("err = %v", err)
	}
	var k Graph
	k.MustAdd(&Action{Tool: "panic", Run: func(context.Context, *Shell) error { panic("boom") }})
	err = Execute(context.Background(), &k, quietShell(), Options{Jobs: 1})
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("err = %v", err)
	}
	var e Graph
	e.MustAdd(&Action{Tool: "env", Env: []string{"OFFCC_TEST_X=hello"}, Command: []string{"sh", "-c", `echo "$OFFCC_TEST_X $OFFCC_TEST_Y"; read x && echo stdin-not-null; true`}})
	var out bytes.Buffer
	sh := NewShell(ShellOptions{Stdout: &out, Stderr: io.Discard, Env: []string{"OFFCC_TEST_Y=world"}})
	if err := Execute(context.Background(), &e, sh, Options{Jobs: 2}); err != nil || out.String() != "hello world\n" {
		t.Errorf("env job: %v %q", err, out.String())
	}
}

// TestStdin checks that every command reading "-" gets the build's standard
// input, which is read once.
func TestStdin(t *testing.T) {
	var g Graph
	in := NewArtifact("-")
	for i := range 3 {
		g.MustAdd(&Action{Tool: fmt.Sprint("cat", i), Inputs: []*Artifact{in}, Command: []string{"cat"}})
	}
	reads := 0
	var out bytes.Buffer
	sh := NewShell(ShellOptions{Stdout: &out, Stderr: io.Discard, Stdin: func() ([]byte, error) {
		reads++
		return []byte("int x;\n"), nil
	}})
	if err := Execute(context.Background(), &g, sh, Options{Jobs: 3}); err != nil {
		t.Fatal(err)
	}
	if out.String() != strings.Repeat("int x;\n", 3) || reads != 1 {
		t.Errorf("output %q after %d reads", out.String(), reads)
	}
}

func TestDryRun(t *testing.T) {
	var g Graph
	var ran atomic.Bool
	a := g.MustAdd(&Action{Command: []string{"/bin/cc", "-o", "a b.o"}, Outputs: []*Artifact{NewArtifact("a b.o")}})
	g.MustAdd(&Action{Command: []string{"offcc", "pack", `$x`}, Inputs: a.Outputs, Run: func(context.Context, *Shell) error { ran.Store(true); return nil }})
	var stderr bytes.Buffer
	if err := Execute(context.Background(), &g, NewShell(ShellOptions{Stderr: &stderr, DryRun: true}), Options{Jobs: 4}); err != nil {
		t.Fatal(err)
	}
	if want := " \"/bin/cc\" \"-o\" \"a b.o\"\n \"offcc\" \"pack\" \"\\$x\"\n"; stderr.String() != want || ran.Load() {
		t.Errorf("dry run printed %q (ran: %v), want %q", stderr.String(), ran.Load(), want)
	}
}

// TestDepFileDiscovered checks that the files a command's dependency file
// lists become the action's discovered inputs, and appear in the trace.
func TestDepFileDiscovered(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "x.d")
	var g Graph
	a := g.MustAdd(&Action{Kind: DeviceCompile, DepFile: d,
		Command: []string{"sh", "-c", `printf 'x.o: x.c inc/a\\ b.h \\\n  /usr/include/stdio.h\n' > "$1"`, "sh", d}})
	trace := &Trace{}
	if err := Execute(context.Background(), &g, quietShell(), Options{Jobs: 1, Trace: trace}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"x.c", "inc/a b.h", "/usr/include/stdio.h"}; !slices.Equal(a.Discovered, want) {
		t.Errorf("Discovered = %q, want %q", a.Discovered, want)
	}
	var buf bytes.Buffer
	if err := trace.WriteChrome(&buf, "offcc test"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string
			Tid  int
			Dur  int64
			Args struct {
				Inputs []string
				Kind   string
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("trace is not JSON: %v\n%s", err, buf.String())
	}
	var x int
	for _, ev := range doc.TraceEvents {
		if ev.Ph == "X" {
			x++
			if ev.Args.Kind != "device-compile" || !slices.Contains(ev.Args.Inputs, "inc/a b.h") {
				t.Errorf("event %+v", ev)
			}
		}
	}
	if x != 1 {
		t.Errorf("%d complete events, want 1", x)
	}
	// A command that fails to write its dependency file fails.
	var h Graph
	h.MustAdd(&Action{Kind: DeviceCompile, DepFile: filepath.Join(dir, "none.d"), Command: []string{"true"}})
	if err := Execute(context.Background(), &h, quietShell(), Options{Jobs: 1}); err == nil || !strings.Contains(err.Error(), "dependency file") {
		t.Errorf("err = %v", err)
	}
}
