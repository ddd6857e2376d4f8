package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// raceRemote is a Remote whose runs a local run may race: a run takes
// delay (for ever when 0), then prints to stderr and writes "remote" to
// the action's output, or with back gives the action back. A run whose
// context ends returns at once, unless deaf: it then ends after delay
// anyway, successfully, without writing.
type raceRemote struct {
	slow, deadline time.Duration
	delay          time.Duration
	back           bool
	deaf           bool
	runs           atomic.Int32
	cancelled      atomic.Int32
}

func (f *raceRemote) Slots() int             { return 1 }
func (f *raceRemote) Accepts(a *Action) bool { return a.Kind == DeviceCompile }
func (f *raceRemote) Deadlines(*Action) (time.Duration, time.Duration) {
	return f.slow, f.deadline
}

func (f *raceRemote) Run(ctx context.Context, a *Action, stdout, stderr io.Writer) (RemoteInfo, error) {
	f.runs.Add(1)
	var timer <-chan time.Time
	if f.delay > 0 {
		timer = time.After(f.delay)
	}
	select {
	case <-timer:
	case <-ctx.Done():
		f.cancelled.Add(1)
		if !f.deaf {
			return RemoteInfo{}, ctx.Err()
		}
		<-timer
		return RemoteInfo{Worker: "w1"}, nil
	}
	if f.back {
		return RemoteInfo{}, fmt.Errorf("%w: too slow", ErrRunLocally)
	}
	fmt.Fprintf(stderr, "from the worker\n")
	return RemoteInfo{Worker: "w1"}, os.WriteFile(a.Outputs[0].Path, []byte("remote"), 0o644)
}

// countingObserver counts the calls for each action.
type countingObserver struct {
	mu                sync.Mutex
	started, finished map[*Action]int
}

func (o *countingObserver) ActionStarted(a *Action) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started == nil {
		o.started = map[*Action]int{}
	}
	o.started[a]++
}

func (o *countingObserver) ActionFinished(a *Action) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.finished == nil {
		o.finished = map[*Action]int{}
	}
	o.finished[a]++
}

// check reports an action told other than once.
func (o *countingObserver) check(t *testing.T, as ...*Action) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, a := range as {
		if o.started[a] != 1 || o.finished[a] != 1 {
			t.Errorf("%s: ActionStarted %d times, ActionFinished %d times, want once each", a.Label(), o.started[a], o.finished[a])
		}
	}
}

// raceBuild is one build of a race test: its output, trace and observer.
type raceBuild struct {
	stdout, stderr syncBuffer
	lines          syncBuffer
	trace          *Trace
	obs            countingObserver
	took           time.Duration
}

// execute runs g with remote, opt's Remote, Trace and Observer set by b.
func (b *raceBuild) execute(g *Graph, remote Remote, opt Options) error {
	b.trace = &Trace{Lines: &b.lines}
	opt.Remote, opt.Trace, opt.Observer = remote, b.trace, &b.obs
	t0 := time.Now()
	err := Execute(context.Background(), g, NewShell(ShellOptions{Stdout: &b.stdout, Stderr: &b.stderr}), opt)
	b.took = time.Since(t0)
	return err
}

// event returns the only event of a.
func (b *raceBuild) event(t *testing.T, a *Action) Event {
	t.Helper()
	var evs []Event
	for _, ev := range b.trace.Events() {
		if ev.Action == a {
			evs = append(evs, ev)
		}
	}
	if len(evs) != 1 {
		t.Fatalf("%s traced %d times, want once", a.Label(), len(evs))
	}
	return evs[0]
}

// deviceJob adds a device compile (which raceRemote accepts) writing
// dir/name by the shell script, its output's path as $1.
func deviceJob(g *Graph, dir, name, script string) *Action {
	out := filepath.Join(dir, name)
	return g.MustAdd(&Action{Kind: DeviceCompile, Offload: HIP, Tool: name, Cost: 1,
		Command: []string{"/bin/sh", "-c", script, "sh", out}, Outputs: []*Artifact{NewArtifact(out)}})
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestRaceLocalWins: a remote run that is slow while a local slot idles is
// raced locally; the local run wins, the remote run's context is
// cancelled, and the action's output is the local run's, printed, traced
// and reported once.
func TestRaceLocalWins(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	d := deviceJob(&g, dir, "d", `echo local-out; echo local > "$1"`)
	remote := &raceRemote{slow: 50 * time.Millisecond}
	var b raceBuild
	if err := b.execute(&g, remote, Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, d.Outputs[0].Path); got != "local\n" {
		t.Errorf("output %q, want the local run's", got)
	}
	if remote.runs.Load() != 1 || remote.cancelled.Load() != 1 {
		t.Errorf("%d remote runs, %d cancelled; want the one cancelled", remote.runs.Load(), remote.cancelled.Load())
	}
	if got := b.stdout.String(); got != "local-out\n" {
		t.Errorf("stdout %q, want the local run's once", got)
	}
	ev := b.event(t, d)
	if ev.Raced != "local" || ev.Remote != nil || ev.Code != 0 {
		t.Errorf("traced Raced %q, Remote %v, code %d; want won locally", ev.Raced, ev.Remote, ev.Code)
	}
	if !strings.Contains(b.lines.String(), " raced=local") {
		t.Errorf("trace lines lack raced=local:\n%s", b.lines.String())
	}
	b.obs.check(t, d)
}

// TestRaceRemoteWins: the remote run ends first: the local process racing
// it is killed (and gone when Execute returns), its output is dropped,
// and the worker's diagnostics are printed once.
func TestRaceRemoteWins(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	var g Graph
	d := deviceJob(&g, dir, "d", `echo $$ > `+pidFile+`; echo local-out; echo local-err >&2; exec sleep 30`)
	remote := &raceRemote{slow: 50 * time.Millisecond, delay: 500 * time.Millisecond}
	var b raceBuild
	if err := b.execute(&g, remote, Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	if b.took > 10*time.Second {
		t.Errorf("took %v: the local run was not killed", b.took)
	}
	pid := readPid(t, pidFile)
	if alive(pid) {
		t.Errorf("the local run (pid %d) outlived the build", pid)
	}
	if got := readString(t, d.Outputs[0].Path); got != "remote" {
		t.Errorf("output %q, want the remote run's", got)
	}
	if got := b.stderr.String(); got != "from the worker\n" {
		t.Errorf("stderr %q, want the worker's once", got)
	}
	if got := b.stdout.String(); got != "" {
		t.Errorf("stdout %q: the losing run's output was printed", got)
	}
	ev := b.event(t, d)
	if ev.Raced != "remote" || ev.Remote == nil || ev.Remote.Worker != "w1" {
		t.Errorf("traced Raced %q, Remote %v; want won by w1", ev.Raced, ev.Remote)
	}
	b.obs.check(t, d)
}

// TestRaceDeadline: with the local slot busy, a slow remote run is not
// raced; once past its deadline its action is made ready, and its local
// run takes the slot when it frees.
func TestRaceDeadline(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	l := g.MustAdd(&Action{Kind: Backend, Tool: "l", Cost: 1, Outputs: []*Artifact{NewArtifact(filepath.Join(dir, "l"))},
		Command: []string{"/bin/sh", "-c", `sleep 0.5; echo l > "$1"`, "sh", filepath.Join(dir, "l")}})
	d := deviceJob(&g, dir, "d", `echo local > "$1"`)
	remote := &raceRemote{slow: 20 * time.Millisecond, deadline: 100 * time.Millisecond}
	var b raceBuild
	if err := b.execute(&g, remote, Options{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	le, de := b.event(t, l), b.event(t, d)
	if de.Start.Before(le.End) {
		t.Errorf("the local run of d started at %v, before l ended at %v: it had no slot", de.Start, le.End)
	}
	if de.Raced != "local" || remote.cancelled.Load() != 1 {
		t.Errorf("d traced Raced %q, %d remote runs cancelled; want won locally, the remote run cancelled", de.Raced, remote.cancelled.Load())
	}
	if got := readString(t, d.Outputs[0].Path); got != "local\n" {
		t.Errorf("output %q, want the local run's", got)
	}
	b.obs.check(t, l, d)
}

// TestRaceRemoteGivesBack: a remote run that gives its action back while a
// local run races it is dropped; the local run goes on (it does not start
// again) and is the action's.
func TestRaceRemoteGivesBack(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	var g Graph
	d := deviceJob(&g, dir, "d", `echo x >> `+runs+`; sleep 0.8; echo local > "$1"`)
	remote := &raceRemote{slow: 20 * time.Millisecond, delay: 400 * time.Millisecond, back: true}
	var b raceBuild
	if err := b.execute(&g, remote, Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, runs); got != "x\n" {
		t.Errorf("the local run started %d times, want once", strings.Count(got, "x"))
	}
	if got := readString(t, d.Outputs[0].Path); got != "local\n" {
		t.Errorf("output %q, want the local run's", got)
	}
	ev := b.event(t, d)
	if ev.Raced != "local" || ev.GivenBack != "too slow" {
		t.Errorf("traced Raced %q, GivenBack %q; want local, too slow", ev.Raced, ev.GivenBack)
	}
	b.obs.check(t, d)
}

// TestRaceLocalFails: a local run that fails while the remote run goes on
// is the action's result: the build fails once, with its diagnostics
// printed once, the remote run cancelled and the action's users never
// started.
func TestRaceLocalFails(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	d := deviceJob(&g, dir, "d", `echo "error: bad" >&2; exit 3`)
	var userRan atomic.Bool
	g.MustAdd(&Action{Kind: Package, Inputs: d.Outputs,
		Run: func(context.Context, *Shell) error { userRan.Store(true); return nil }})
	remote := &raceRemote{slow: 50 * time.Millisecond}
	var b raceBuild
	err := b.execute(&g, remote, Options{Jobs: 2})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Action != d || ee.Code != 3 {
		t.Fatalf("err = %#v, want d's failure (exit 3)", err)
	}
	if got := b.stderr.String(); got != "error: bad\n" {
		t.Errorf("stderr %q, want the local run's diagnostics once", got)
	}
	if remote.cancelled.Load() != 1 {
		t.Errorf("%d remote runs cancelled, want 1", remote.cancelled.Load())
	}
	if userRan.Load() {
		t.Error("a user of the failed action ran")
	}
	if ev := b.event(t, d); ev.Raced != "local" || ev.Code != 3 {
		t.Errorf("traced Raced %q, code %d", ev.Raced, ev.Code)
	}
	b.obs.check(t, d)
}

// TestRaceRemoteEndsAfterLocal: a remote run that succeeds after the local
// run won (it missed its cancellation) is dropped: nothing of it is
// printed, and the action ends once, after it.
func TestRaceRemoteEndsAfterLocal(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	d := deviceJob(&g, dir, "d", `echo local-out; echo local > "$1"`)
	remote := &raceRemote{slow: 50 * time.Millisecond, delay: 500 * time.Millisecond, deaf: true}
	var b raceBuild
	if err := b.execute(&g, remote, Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	if b.stdout.String() != "local-out\n" || b.stderr.String() != "" {
		t.Errorf("stdout %q, stderr %q; want the local run's output once", b.stdout.String(), b.stderr.String())
	}
	if ev := b.event(t, d); ev.Raced != "local" || ev.Remote != nil {
		t.Errorf("traced Raced %q, Remote %v", ev.Raced, ev.Remote)
	}
	if got := readString(t, d.Outputs[0].Path); got != "local\n" {
		t.Errorf("output %q, want the local run's", got)
	}
	b.obs.check(t, d)
}

// TestNoRace: without deadlines, or with a Remote that gives none, a slow
// remote run is never raced, however idle the local slots.
func TestNoRace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remote Remote
	}{
		{"zero", &raceRemote{delay: 300 * time.Millisecond}},
		{"no interface", &fakeRemote{slots: 1, delay: 300 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ran := filepath.Join(dir, "ran")
			var g Graph
			d := deviceJob(&g, dir, "d", `echo x > `+ran+`; echo local > "$1"`)
			var b raceBuild
			if err := b.execute(&g, tc.remote, Options{Jobs: 4}); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("a local run started")
			}
			if got := readString(t, d.Outputs[0].Path); got != "remote" {
				t.Errorf("output %q, want the remote run's", got)
			}
			if ev := b.event(t, d); ev.Raced != "" || ev.Remote == nil {
				t.Errorf("traced Raced %q, Remote %v", ev.Raced, ev.Remote)
			}
			b.obs.check(t, d)
		})
	}
}

// TestRaceMemoryAndCache: under Options.Memory a racing local run is
// admitted by Memory like any other and its reservation ends; with a
// cache, whichever run wins, the action's result is told to the cache
// once.
func TestRaceMemoryAndCache(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delay  time.Duration // the remote run's
		script string        // the local run's
		want   string        // the output
	}{
		{"local wins", 0, `echo local > "$1"`, "local\n"},
		{"remote wins", 400 * time.Millisecond, `exec sleep 30`, "remote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var g Graph
			d := deviceJob(&g, dir, "d", tc.script)
			mem := newFakeMemory(100, map[string]int64{"d": 10})
			cache := &memCache{}
			remote := &raceRemote{slow: 50 * time.Millisecond, delay: tc.delay}
			var b raceBuild
			if err := b.execute(&g, remote, Options{Jobs: 2, Memory: mem, Cache: cache}); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, d.Outputs[0].Path); got != tc.want {
				t.Errorf("output %q, want %q", got, tc.want)
			}
			mem.check(t)
			mem.mu.Lock()
			asked := mem.asked["d"]
			mem.mu.Unlock()
			if asked != 1 {
				t.Errorf("Memory asked %d times for the local run, want once", asked)
			}
			if told := cache.told("d"); len(told) != 1 || told[0] != nil {
				t.Errorf("the cache was told %v, want one success", told)
			}
			ev := b.event(t, d)
			if ev.Cache != "miss" || ev.Raced == "" {
				t.Errorf("traced Cache %q, Raced %q", ev.Cache, ev.Raced)
			}
			if (ev.Raced == "local") != (ev.Memory != nil) {
				t.Errorf("traced Raced %q with Memory %+v", ev.Raced, ev.Memory)
			}
			b.obs.check(t, d)
		})
	}
}

// TestRaceTraceChrome: the Chrome trace names the side that won.
func TestRaceTraceChrome(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	deviceJob(&g, dir, "d", `echo local > "$1"`)
	var b raceBuild
	if err := b.execute(&g, &raceRemote{slow: 20 * time.Millisecond}, Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := b.trace.WriteChrome(&out, "offcc"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"raced": "local"`) {
		t.Errorf("the Chrome trace lacks raced:\n%s", out.String())
	}
}

// TestRaceMemoryKilled: a local run that Memory says was killed for want
// of memory while the remote run it races goes on is dropped, not run
// again alone and not the build's failure; when the remote run then gives
// the action back, it runs locally again.
func TestRaceMemoryKilled(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	var g Graph
	d := deviceJob(&g, dir, "d", `echo x >> `+runs+`; [ "$(wc -l < `+runs+`)" -gt 1 ] || exit 9; echo local > "$1"`)
	mem := newFakeMemory(100, map[string]int64{"d": 10})
	mem.oom["d"] = true
	remote := &raceRemote{slow: 20 * time.Millisecond, delay: 300 * time.Millisecond, back: true}
	var b raceBuild
	if err := b.execute(&g, remote, Options{Jobs: 2, Memory: mem}); err != nil {
		t.Fatal(err)
	}
	mem.check(t)
	if got := readString(t, runs); got != "x\nx\n" {
		t.Errorf("the local run started %d times, want twice (raced, then given back)", strings.Count(got, "x"))
	}
	if got := readString(t, d.Outputs[0].Path); got != "local\n" {
		t.Errorf("output %q, want the local run's", got)
	}
	if ev := b.event(t, d); ev.GivenBack != "too slow" || ev.Code != 0 {
		t.Errorf("traced GivenBack %q, code %d", ev.GivenBack, ev.Code)
	}
	b.obs.check(t, d)
}

// TestRaceStopAfterFailure: a failure before a raced action in the graph's
// order, with StopAfterFailure, cancels its remote run and drops its
// queued local run: the build ends at once with that failure.
func TestRaceStopAfterFailure(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	f := g.MustAdd(&Action{Kind: Backend, Tool: "f", Cost: 1, Outputs: []*Artifact{NewArtifact(filepath.Join(dir, "f"))},
		Command: []string{"/bin/sh", "-c", `sleep 0.3; exit 4`}})
	d := deviceJob(&g, dir, "d", `echo local > "$1"`)
	remote := &raceRemote{deadline: 50 * time.Millisecond}
	var b raceBuild
	err := b.execute(&g, remote, Options{Jobs: 1, StopAfterFailure: true})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Action != f || ee.Code != 4 {
		t.Fatalf("err = %#v, want f's failure", err)
	}
	if b.took > 5*time.Second || remote.cancelled.Load() != 1 {
		t.Errorf("took %v, %d remote runs cancelled", b.took, remote.cancelled.Load())
	}
	if _, err := os.Stat(d.Outputs[0].Path); err == nil {
		t.Error("the dropped action's local run ran")
	}
}

// TestRaceCancel: a build cancelled during a race kills the local run and
// cancels the remote one.
func TestRaceCancel(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	var g Graph
	deviceJob(&g, dir, "d", `echo $$ > `+pidFile+`; exec sleep 30`)
	remote := &raceRemote{slow: 20 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		readPid(t, pidFile)
		cancel()
	}()
	t0 := time.Now()
	err := Execute(ctx, &g, quietShell(), Options{Jobs: 2, Remote: remote})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Action != nil {
		t.Fatalf("err = %#v, want an interrupted build", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if pid := readPid(t, pidFile); alive(pid) {
		t.Errorf("the local run (pid %d) outlived the build", pid)
	}
	if remote.cancelled.Load() != 1 {
		t.Errorf("%d remote runs cancelled, want 1", remote.cancelled.Load())
	}
}
