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
	"testing"
	"time"
)

// fakeMemory admits actions by a budget and an expected peak per action
// (by Tool), and checks what the contract asks of the executor: running
// is the number of reservations held, none beyond the budget unless it is
// the only one, and nothing beside an action run again alone.
type fakeMemory struct {
	mu      sync.Mutex
	budget  int64
	peaks   map[string]int64
	oom     map[string]bool // Done returns true for these when they fail
	used    int64
	held    int // reservations not done
	alone   string
	log     []string    // "start NAME" at Started, "done NAME" at Done
	started chan string // the names of the actions admitted, in order
	asked   map[string]int
	pids    map[string][]int
	usages  map[string][]Usage
	errs    []string
	wake    chan struct{}
	others  int64 // held by other processes: with none running, Reserve waits for them
}

func newFakeMemory(budget int64, peaks map[string]int64) *fakeMemory {
	return &fakeMemory{budget: budget, peaks: peaks, oom: map[string]bool{}, asked: map[string]int{},
		pids: map[string][]int{}, usages: map[string][]Usage{}, started: make(chan string, 100), wake: make(chan struct{}, 1)}
}

func (m *fakeMemory) Reserve(a *Action, running int) (Reservation, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name := a.Tool
	m.asked[name]++
	if running != m.held {
		m.errs = append(m.errs, fmt.Sprintf("Reserve(%s): running %d, %d reservations held", name, running, m.held))
	}
	if m.alone != "" {
		m.errs = append(m.errs, fmt.Sprintf("Reserve(%s) while %s runs alone", name, m.alone))
	}
	exp := m.peaks[name]
	if running > 0 && m.used+exp > m.budget || running == 0 && m.others > 0 && m.others+exp > m.budget {
		return nil, false
	}
	m.used += exp
	m.held++
	if m.used > m.budget && m.held > 1 {
		m.errs = append(m.errs, fmt.Sprintf("%s admitted: %d reserved of %d", name, m.used, m.budget))
	}
	if n := len(m.usages[name]); n > 0 && m.oom[name] {
		// Its second run: it must run alone.
		if running != 0 {
			m.errs = append(m.errs, fmt.Sprintf("%s run again beside %d others", name, running))
		}
		m.alone = name
	}
	m.started <- name
	return &fakeReservation{m: m, name: name, exp: exp}, true
}

func (m *fakeMemory) Wake() <-chan struct{} { return m.wake }

func (m *fakeMemory) setBudget(b int64) {
	m.mu.Lock()
	m.budget = b
	m.mu.Unlock()
}

func (m *fakeMemory) setOthers(n int64) {
	m.mu.Lock()
	m.others = n
	m.mu.Unlock()
}

func (m *fakeMemory) check(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.errs {
		t.Error(e)
	}
	if m.held != 0 || m.used != 0 {
		t.Errorf("%d reservations (%d bytes) never done", m.held, m.used)
	}
}

func (m *fakeMemory) events() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.log)
}

type fakeReservation struct {
	m    *fakeMemory
	name string
	exp  int64
}

func (r *fakeReservation) Started(pid int) {
	r.m.mu.Lock()
	r.m.pids[r.name] = append(r.m.pids[r.name], pid)
	r.m.log = append(r.m.log, "start "+r.name)
	r.m.mu.Unlock()
}

func (r *fakeReservation) Done(u Usage, err error) bool {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used -= r.exp
	m.held--
	m.usages[r.name] = append(m.usages[r.name], u)
	m.log = append(m.log, "done "+r.name)
	if m.alone == r.name {
		m.alone = ""
	}
	return err != nil && m.oom[r.name]
}

func (r *fakeReservation) Expected() int64 { return r.exp }

// memCache is a Cache that serves the actions named in hits and records
// what it is told of the others' runs.
type memCache struct {
	mu   sync.Mutex
	hits map[string]bool
	done map[string][]error
}

func (c *memCache) Begin(ctx context.Context, a *Action) CachedRun {
	return &memCachedRun{c: c, name: a.Tool, hit: c.hits[a.Tool]}
}

func (c *memCache) told(name string) []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.done[name])
}

type memCachedRun struct {
	c    *memCache
	name string
	hit  bool
}

func (r *memCachedRun) Hit() ([]byte, []byte, bool) { return nil, nil, r.hit }
func (r *memCachedRun) Status() string {
	if r.hit {
		return "hit"
	}
	return "miss"
}
func (r *memCachedRun) Done(stdout, stderr []byte, err error) {
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	if r.c.done == nil {
		r.c.done = map[string][]error{}
	}
	r.c.done[r.name] = append(r.c.done[r.name], err)
}

// blocking adds an action named name that runs a shell until the file
// dir/name.go exists (see release), then writes dir/name.
func blocking(g *Graph, dir, name string, cost float64) *Action {
	out := filepath.Join(dir, name)
	script := fmt.Sprintf("while [ ! -e %s.go ]; do sleep 0.01; done; echo %s > %s", out, name, out)
	return g.MustAdd(&Action{Tool: name, Cost: cost, Command: []string{"/bin/sh", "-c", script}, Outputs: []*Artifact{NewArtifact(out)}})
}

func release(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+".go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// expectStart waits for the next command admitted and checks it is want.
func expectStart(t *testing.T, m *fakeMemory, want string) {
	t.Helper()
	select {
	case got := <-m.started:
		if got != want {
			t.Fatalf("%s started, want %s (so far: %v)", got, want, m.events())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never started (so far: %v)", want, m.events())
	}
}

// expectNoStart checks that no command is admitted for a while.
func expectNoStart(t *testing.T, m *fakeMemory) {
	t.Helper()
	select {
	case got := <-m.started:
		t.Fatalf("%s started, want none to fit (so far: %v)", got, m.events())
	case <-time.After(200 * time.Millisecond):
	}
}

// execute runs g in the background and returns its error's channel.
func executeAsync(g *Graph, sh *Shell, opt Options) <-chan error {
	done := make(chan error, 1)
	go func() { done <- Execute(context.Background(), g, sh, opt) }()
	return done
}

func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the build never ended")
		return nil
	}
}

// TestMemoryAdmitsByBudget: with 4 slots, only the commands whose
// expected peaks fit in the budget run at once, in critical-path order
// among those that fit; a held one starts when a running one ends; one
// bigger than the budget runs when nothing else does; and the trace shows
// each command's expected and measured peak and its wait.
func TestMemoryAdmitsByBudget(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	for _, j := range []struct {
		name string
		cost float64
	}{{"a", 6}, {"b", 5}, {"c", 4}, {"d", 3}, {"e", 2}, {"f", 1}} {
		blocking(&g, dir, j.name, j.cost)
	}
	m := newFakeMemory(100<<20, map[string]int64{"a": 60 << 20, "b": 60 << 20, "c": 30 << 20, "d": 30 << 20, "e": 10 << 20, "f": 150 << 20})
	var lines syncBuffer
	trace := &Trace{Lines: &lines}
	done := executeAsync(&g, quietShell(), Options{Jobs: 4, Memory: m, Trace: trace})
	// a (60) fits, b does not, c (90) fits, d does not, e (100) fits.
	expectStart(t, m, "a")
	expectStart(t, m, "c")
	expectStart(t, m, "e")
	expectNoStart(t, m)
	release(t, dir, "c") // 70 in use: d (30) fits, b (60) still not
	expectStart(t, m, "d")
	expectNoStart(t, m)
	release(t, dir, "a") // 40: b fits
	expectStart(t, m, "b")
	release(t, dir, "e")
	release(t, dir, "d")
	expectNoStart(t, m) // f (150) waits for b
	release(t, dir, "b")
	expectStart(t, m, "f") // alone, over the budget
	release(t, dir, "f")
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	m.check(t)
	for _, ev := range trace.Events() {
		mem := ev.Memory
		if mem == nil {
			t.Fatalf("%s: no memory in the trace", ev.Action.Tool)
		}
		if mem.Expected != m.peaks[ev.Action.Tool] || mem.Peak <= 0 || mem.RetriedAlone {
			t.Errorf("%s: trace memory %+v", ev.Action.Tool, *mem)
		}
		if held := strings.Contains("bdf", ev.Action.Tool); held != (mem.Wait >= 150*time.Millisecond) {
			t.Errorf("%s waited %v for memory", ev.Action.Tool, mem.Wait)
		}
	}
	if !strings.Contains(lines.String(), "job b ") || !strings.Contains(lines.String(), " mem_expected=60MiB mem_peak=") {
		t.Errorf("trace lines %q", lines.String())
	}
	var chrome bytes.Buffer
	if err := trace.WriteChrome(&chrome, "offcc"); err != nil || !strings.Contains(chrome.String(), `"mem_expected": 157286400`) || !strings.Contains(chrome.String(), `"mem_wait_ms"`) {
		t.Errorf("chrome trace (%v) lacks memory: %s", err, chrome.String())
	}
}

// TestMemoryWake: a command held for memory starts when Memory's Wake
// says memory came free outside the build, while the other still runs.
func TestMemoryWake(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	blocking(&g, dir, "a", 2)
	blocking(&g, dir, "b", 1)
	m := newFakeMemory(100, map[string]int64{"a": 60, "b": 60})
	done := executeAsync(&g, quietShell(), Options{Jobs: 2, Memory: m})
	expectStart(t, m, "a")
	expectNoStart(t, m)
	m.setBudget(200)
	m.wake <- struct{}{}
	expectStart(t, m, "b")
	release(t, dir, "a")
	release(t, dir, "b")
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	m.check(t)
}

// TestMemoryOtherProcesses: with none of its own actions running, a build
// whose memory other processes hold (make -jN) starts nothing until Wake
// says they let go, and then finishes.
func TestMemoryOtherProcesses(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	blocking(&g, dir, "a", 2)
	blocking(&g, dir, "b", 1)
	m := newFakeMemory(100, map[string]int64{"a": 60, "b": 60})
	m.setOthers(100)
	done := executeAsync(&g, quietShell(), Options{Jobs: 2, Memory: m})
	expectNoStart(t, m)
	m.setOthers(30)
	m.wake <- struct{}{}
	expectStart(t, m, "a")
	expectNoStart(t, m)
	release(t, dir, "a")
	expectStart(t, m, "b")
	release(t, dir, "b")
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	m.check(t)
}

// TestMemoryCacheHitsNotHeld: while one command holds all the memory,
// actions the cache serves finish without asking Memory, and a miss waits.
func TestMemoryCacheHitsNotHeld(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	blocking(&g, dir, "big", 4)
	blocking(&g, dir, "h1", 3)
	blocking(&g, dir, "h2", 2)
	blocking(&g, dir, "miss", 1)
	m := newFakeMemory(100, map[string]int64{"big": 100, "h1": 100, "h2": 100, "miss": 100})
	c := &memCache{hits: map[string]bool{"h1": true, "h2": true}}
	trace := &Trace{}
	done := executeAsync(&g, quietShell(), Options{Jobs: 4, Memory: m, Cache: c, Trace: trace})
	// The two misses' lookups race: the first back runs, the other waits.
	var first string
	select {
	case first = <-m.started:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing started")
	}
	other := map[string]string{"big": "miss", "miss": "big"}[first]
	deadline := time.Now().Add(10 * time.Second)
	for len(trace.Events()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var finished []string
	for _, ev := range trace.Events() {
		finished = append(finished, ev.Action.Tool+" "+ev.Cache)
		if ev.Memory != nil {
			t.Errorf("%s: a cache hit with memory %+v", ev.Action.Tool, *ev.Memory)
		}
	}
	slices.Sort(finished)
	if !slices.Equal(finished, []string{"h1 hit", "h2 hit"}) {
		t.Errorf("finished while %s runs: %v, want the two hits", first, finished)
	}
	expectNoStart(t, m)
	release(t, dir, first)
	expectStart(t, m, other)
	release(t, dir, other)
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	m.check(t)
	if m.asked["h1"] != 0 || m.asked["h2"] != 0 {
		t.Errorf("Memory asked for cache hits: %v", m.asked)
	}
	if got := c.told("miss"); len(got) != 1 || got[0] != nil {
		t.Errorf("cache told of miss's run: %v", got)
	}
}

// oomJob adds an action that prints to stderr and kills itself with
// SIGKILL, the first time only unless always is set; then it writes its
// output.
func oomJob(g *Graph, dir, name string, cost float64, always bool) *Action {
	out := filepath.Join(dir, name)
	script := "echo first-try-noise >&2; sleep 0.3; kill -9 $$"
	if !always {
		script = fmt.Sprintf("if [ ! -e %[1]s.tried ]; then touch %[1]s.tried; %[2]s; fi; echo alone >&2; echo ok > %[1]s", out, script)
	}
	return g.MustAdd(&Action{Tool: name, Cost: cost, Command: []string{"/bin/sh", "-c", script}, Outputs: []*Artifact{NewArtifact(out)}})
}

// TestMemoryRetryAlone: a command that Memory says was killed for want of
// memory runs again once no other local command runs, nothing starts
// beside it, and the build succeeds: its first failure is neither shown
// nor told to the cache, and the trace marks it.
func TestMemoryRetryAlone(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	oomJob(&g, dir, "x", 5, false)
	blocking(&g, dir, "o1", 4)
	blocking(&g, dir, "o2", 3)
	blocking(&g, dir, "o3", 2)
	m := newFakeMemory(1000, map[string]int64{"x": 40, "o1": 30, "o2": 30, "o3": 30})
	m.oom["x"] = true
	c := &memCache{}
	var stderr syncBuffer
	trace := &Trace{}
	sh := NewShell(ShellOptions{Stdout: io.Discard, Stderr: &stderr})
	done := executeAsync(&g, sh, Options{Jobs: 3, Memory: m, Cache: c, Trace: trace})
	// x, o1 and o2 take the 3 slots (their lookups race); x is killed.
	var first []string
	for range 3 {
		select {
		case name := <-m.started:
			first = append(first, name)
		case <-time.After(10 * time.Second):
			t.Fatalf("started %v", first)
		}
	}
	slices.Sort(first)
	if !slices.Equal(first, []string{"o1", "o2", "x"}) {
		t.Fatalf("started %v, want o1 o2 x", first)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(m.events(), "done x") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	expectNoStart(t, m) // x waits to run alone; o3 waits behind it
	release(t, dir, "o1")
	release(t, dir, "o3")
	expectNoStart(t, m)
	release(t, dir, "o2")
	expectStart(t, m, "x")
	expectStart(t, m, "o3")
	if err := wait(t, done); err != nil {
		t.Fatalf("build failed: %v\n%s", err, stderr.String())
	}
	m.check(t)
	ev := m.events()
	ix := slices.Index(ev, "done x")
	if again := slices.Index(ev[ix+1:], "start x") + ix + 1; ev[again+1] != "done x" || slices.Index(ev, "done o2") > again {
		t.Errorf("x did not run again alone: %v", ev)
	}
	if u := m.usages["x"]; len(u) != 2 || u[0].Signaled != 9 || u[1].Signaled != 0 {
		t.Errorf("x's usages %+v, want SIGKILL then an exit", u)
	}
	if s := stderr.String(); strings.Contains(s, "first-try-noise") || !strings.Contains(s, "alone") {
		t.Errorf("stderr %q, want the second run's output only", s)
	}
	if got := c.told("x"); len(got) != 1 || got[0] != nil {
		t.Errorf("cache told of x's runs: %v, want its success only", got)
	}
	for _, e := range trace.Events() {
		if e.Action.Tool == "x" && (e.Memory == nil || !e.Memory.RetriedAlone || e.Code != 0) {
			t.Errorf("x's trace event %+v", e)
		}
	}
}

// TestMemoryRetryFailsAgain: a command killed again when it runs alone
// fails the build as a crash, after exactly two runs.
func TestMemoryRetryFailsAgain(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	x := oomJob(&g, dir, "x", 1, true)
	m := newFakeMemory(1000, map[string]int64{"x": 40})
	m.oom["x"] = true
	err := Execute(context.Background(), &g, quietShell(), Options{Jobs: 2, Memory: m})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Action != x || !ee.Crashed() || ee.Code != 137 {
		t.Fatalf("err %v, want x's crash", err)
	}
	if !strings.Contains(err.Error(), "due to signal 9") {
		t.Errorf("message %q", err.Error())
	}
	m.check(t)
	if n := len(m.usages["x"]); n != 2 {
		t.Errorf("x ran %d times, want 2", n)
	}
}

// TestMemoryHelperAlloc is not a test: run by TestMemoryMeasuresChild, it
// allocates and touches the bytes OFFCC_TEST_ALLOC names and writes its
// pid to OFFCC_TEST_PIDFILE.
func TestMemoryHelperAlloc(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("OFFCC_TEST_ALLOC"))
	if err != nil {
		t.Skip("run by TestMemoryMeasuresChild")
	}
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	os.WriteFile(os.Getenv("OFFCC_TEST_PIDFILE"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	os.Exit(int(b[n-4096]) - 1)
}

// TestMemoryMeasuresChild: the Reservation is told the real child's pid
// and its measured peak: a child that touches 100 MB peaks above that.
func TestMemoryMeasuresChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	var g Graph
	g.MustAdd(&Action{Tool: "alloc", Command: []string{os.Args[0], "-test.run=^TestMemoryHelperAlloc$"},
		Env: []string{"OFFCC_TEST_ALLOC=" + strconv.Itoa(100<<20), "OFFCC_TEST_PIDFILE=" + pidFile}})
	m := newFakeMemory(1<<40, map[string]int64{"alloc": 1 << 30})
	if err := Execute(context.Background(), &g, quietShell(), Options{Jobs: 1, Memory: m}); err != nil {
		t.Fatal(err)
	}
	m.check(t)
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := strconv.Atoi(string(data)); len(m.pids["alloc"]) != 1 || m.pids["alloc"][0] != want {
		t.Errorf("Started with %v, the child's pid is %d", m.pids["alloc"], want)
	}
	if u := m.usages["alloc"]; len(u) != 1 || u[0].PeakRSS < 100<<20 || u[0].Signaled != 0 {
		t.Errorf("usage %+v, want a peak of at least 100 MiB", u)
	}
}
