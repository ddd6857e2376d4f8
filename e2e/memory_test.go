package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/cgrouptest"
)

// The tests of memory-aware scheduling (issue 26) build the kernel of
// testdata/memory/gen-kernel.sh, one OpenMP target region of 52,000
// statements, for four AMD archs with four jobs, inside memory cgroups the
// tests make. Each device compile peaks near 260 MB of resident memory
// (about 190 MB charged to the cgroup, the rest shared library pages), so
// four at once do not fit in 600 MB, two do, and one fits in 330 MB.

const mb = 1 << 20

// memArchs are the kernel's four offload archs.
const memArchs = "gfx906,gfx90a,gfx1030,gfx1100"

// memFlags compile kernel.c for memArchs with four jobs: -O0 keeps the
// compiles short, -fopenmp-offload-mandatory the host side small (no host
// fallback of the region); no device runtime is linked (-c, -nogpulib).
func memFlags(extra ...string) []string {
	return args("-fopenmp", "-O0", "-fopenmp-offload-mandatory", "-nogpulib",
		"--offload-arch="+memArchs, "--offload-jobs=4", extra, "-c", "kernel.c", "-o", "kernel.o")
}

// writeMemKernel writes the kernel of n statements to dir/kernel.c.
func writeMemKernel(t *testing.T, dir string, n int) {
	t.Helper()
	gen, err := filepath.Abs(filepath.Join("..", "testdata", "memory", "gen-kernel.sh"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/bin/sh", gen, strconv.Itoa(n)).Output()
	if err != nil {
		t.Fatalf("%s: %v", gen, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernel.c"), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// memEnv is the environment of a memory test's builds: its own TMPDIR and
// cache directory, plus extra.
func memEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	_, tmp := tmpEnv(t)
	return append([]string{tmp, "OFFCC_CACHE_DIR=" + filepath.Join(t.TempDir(), "cache")}, extra...)
}

// runInGroup runs the compiler under test in dir with env inside g (nil:
// no cgroup) and returns the result and its wall time.
func runInGroup(g *cgrouptest.Group, dir string, env []string, name string, argv []string) (result, time.Duration, error) {
	var cmd *exec.Cmd
	if g != nil {
		cmd = g.Command(name, argv...)
	} else {
		cmd = exec.Command(name, argv...)
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	r := result{cmdline: shellJoin(append([]string{name}, argv...)), stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
		if r.code < 0 {
			r.code = 128 // killed by a signal
		}
		err = nil
	}
	return r, wall, err
}

// mustBuildIn runs a build in g and fails the test unless it succeeds.
func mustBuildIn(t *testing.T, g *cgrouptest.Group, dir string, env []string, name string, argv []string) time.Duration {
	t.Helper()
	r, wall, err := runInGroup(g, dir, env, name, argv)
	if err != nil {
		t.Fatalf("running %s: %v", r.cmdline, err)
	}
	if r.code != 0 {
		kills := 0
		if g != nil {
			kills = g.OOMKills()
		}
		t.Fatalf("build failed (OOM kills in the group: %d):\n%s", kills, r)
	}
	return wall
}

// memTrace is what the memory tests read of a job trace.
type memTrace struct {
	TraceEvents []struct {
		Ph   string `json:"ph"`
		Ts   int64  `json:"ts"`
		Dur  int64  `json:"dur"`
		Args struct {
			Kind         string   `json:"kind"`
			Arch         string   `json:"arch"`
			Command      []string `json:"command"`
			Status       int      `json:"status"`
			MemExpected  int64    `json:"mem_expected"`
			MemPeak      int64    `json:"mem_peak"`
			MemWaitMS    *int64   `json:"mem_wait_ms"`
			SlotWaitMS   *int64   `json:"slot_wait_ms"`
			RetriedAlone bool     `json:"retried_alone"`
		} `json:"args"`
	} `json:"traceEvents"`
}

// maxOverlap returns the largest number of device compiles in the trace
// that ran at the same time, and how many there were.
func maxOverlap(t *testing.T, path string) (most, n int) {
	t.Helper()
	var sp []span
	for _, ev := range readJSON[memTrace](t, path).TraceEvents {
		if ev.Ph == "X" && ev.Args.Kind == "device-compile" {
			sp = append(sp, span{ev.Ts, ev.Ts + ev.Dur})
		}
	}
	for _, a := range sp {
		at := 0 // compiles running at a's start
		for _, b := range sp {
			if b[0] <= a[0] && a[0] < b[1] {
				at++
			}
		}
		most = max(most, at)
	}
	return most, len(sp)
}

// TestMemoryKernelIn600MB builds the kernel inside a 600 MB cgroup, where
// four device compiles at once are killed: memory scheduling runs two at
// once, none is killed, and the object equals that of a build with no
// limit, byte for byte.
func TestMemoryKernelIn600MB(t *testing.T) {
	c := offccOnly(t, "--offload-jobs and memory scheduling are offcc's")
	g := cgrouptest.New(t, 600*mb)
	dir := t.TempDir()
	writeMemKernel(t, dir, 52000)
	env := memEnv(t, "OFFCC_CACHE=0")

	free := mustBuildIn(t, nil, dir, env, c.cc, memFlags())
	if err := os.Rename(filepath.Join(dir, "kernel.o"), filepath.Join(dir, "free.o")); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "trace.json")
	wall := mustBuildIn(t, g, dir, env, c.cc, memFlags("--job-trace="+trace))
	t.Logf("no limit %.1fs; 600 MB %.1fs, group peak %d MB, OOM kills %d", free.Seconds(), wall.Seconds(), g.Peak()/mb, g.OOMKills())
	if k := g.OOMKills(); k != 0 {
		t.Errorf("%d processes OOM-killed in 600 MB, want none", k)
	}
	want, err := os.ReadFile(filepath.Join(dir, "free.o"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "kernel.o"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("kernel.o built in 600 MB (%d bytes) differs from the one built with no limit (%d bytes)", len(got), len(want))
	}
	most, n := maxOverlap(t, trace)
	if n != 4 {
		t.Errorf("%d device compiles in the trace, want 4", n)
	}
	if most < 2 {
		t.Errorf("at most %d device compile(s) ran at once in 600 MB, want at least 2", most)
	}
	// Two of the four waited for memory, with four slots free for them:
	// the trace says so in mem_wait_ms.
	held := 0
	for _, ev := range readJSON[memTrace](t, trace).TraceEvents {
		if ev.Ph != "X" || ev.Args.Kind != "device-compile" {
			continue
		}
		if ev.Args.MemWaitMS == nil || ev.Args.SlotWaitMS == nil {
			t.Errorf("device compile for %s: no mem_wait_ms or slot_wait_ms in the trace", ev.Args.Arch)
		} else {
			t.Logf("device compile for %s: waited %d ms for memory, %d ms for a slot", ev.Args.Arch, *ev.Args.MemWaitMS, *ev.Args.SlotWaitMS)
			if *ev.Args.MemWaitMS >= 500 {
				held++
			}
		}
	}
	if most < 4 && held == 0 {
		t.Errorf("at most %d device compiles ran at once in 600 MB, and none waited for memory (mem_wait_ms) half a second", most)
	}
}

// TestMemoryKernelIn330MB builds the kernel inside a 330 MB cgroup, where
// only one device compile fits at a time.
func TestMemoryKernelIn330MB(t *testing.T) {
	c := offccOnly(t, "--offload-jobs and memory scheduling are offcc's")
	dir := t.TempDir()
	writeMemKernel(t, dir, 52000)
	g := cgrouptest.New(t, 330*mb)
	wall := mustBuildIn(t, g, dir, memEnv(t, "OFFCC_CACHE=0"), c.cc, memFlags())
	t.Logf("330 MB %.1fs, group peak %d MB, OOM kills %d", wall.Seconds(), g.Peak()/mb, g.OOMKills())
	if k := g.OOMKills(); k != 0 {
		t.Errorf("%d processes OOM-killed in 330 MB, want none", k)
	}
	if _, err := os.Stat(filepath.Join(dir, "kernel.o")); err != nil {
		t.Error(err)
	}
}

// TestMemoryTwoProcessesShareCgroup builds the kernel twice at once in one
// 600 MB cgroup, as make -j2 would: the two offcc processes share the
// budget and both succeed.
func TestMemoryTwoProcessesShareCgroup(t *testing.T) {
	c := offccOnly(t, "memory scheduling is offcc's")
	g := cgrouptest.New(t, 600*mb)
	type out struct {
		r    result
		wall time.Duration
		err  error
	}
	var dirs [2]string
	var envs [2][]string
	for i := range dirs {
		dirs[i] = t.TempDir()
		writeMemKernel(t, dirs[i], 52000)
		envs[i] = memEnv(t, "OFFCC_CACHE=0")
	}
	done := make(chan out, 2)
	for i := range dirs {
		go func() {
			r, wall, err := runInGroup(g, dirs[i], envs[i], c.cc, memFlags())
			done <- out{r, wall, err}
		}()
	}
	for range dirs {
		o := <-done
		if o.err != nil {
			t.Errorf("running %s: %v", o.r.cmdline, o.err)
		} else if o.r.code != 0 {
			t.Errorf("one of two builds in one 600 MB cgroup failed (OOM kills in the group: %d):\n%s", g.OOMKills(), o.r)
		} else {
			t.Logf("one build of two: %.1fs", o.wall.Seconds())
		}
	}
	t.Logf("two builds in 600 MB: group peak %d MB, OOM kills %d", g.Peak()/mb, g.OOMKills())
}

// TestMemoryOOMKilledJobRetriedAlone builds a small kernel, so that the
// device compiles' learned peaks are small, then the big one at the same
// path inside a 450 MB cgroup: trusting what it learned, offcc starts three
// or four compiles where two fit (in 600 MB four get killed only most of
// the time), the OOM killer kills one, offcc runs it again alone, and the
// build succeeds.
func TestMemoryOOMKilledJobRetriedAlone(t *testing.T) {
	c := offccOnly(t, "memory scheduling is offcc's")
	dir := t.TempDir()
	g := cgrouptest.New(t, 450*mb)
	env := memEnv(t) // the cache on: it keeps the peaks learned
	writeMemKernel(t, dir, 500)
	mustBuildIn(t, nil, dir, env, c.cc, memFlags())

	writeMemKernel(t, dir, 52000)
	trace := filepath.Join(dir, "trace.json")
	wall := mustBuildIn(t, g, dir, env, c.cc, memFlags("--job-trace="+trace))
	t.Logf("450 MB with peaks learned from a small kernel: %.1fs, group peak %d MB, OOM kills %d", wall.Seconds(), g.Peak()/mb, g.OOMKills())
	if g.OOMKills() == 0 {
		t.Fatal("no process OOM-killed: the learned peaks did not let too many compiles start")
	}
	evs := readJSON[memTrace](t, trace).TraceEvents
	retried := 0
	for i, ev := range evs {
		if ev.Ph != "X" || !ev.Args.RetriedAlone {
			continue
		}
		retried++
		if ev.Args.Kind != "device-compile" || ev.Args.Status != 0 {
			t.Errorf("job retried alone: %s for %s, status %d; want a device compile that succeeds", ev.Args.Kind, ev.Args.Arch, ev.Args.Status)
		}
		a := span{ev.Ts, ev.Ts + ev.Dur}
		for j, o := range evs {
			if j != i && o.Ph == "X" && len(o.Args.Command) > 0 && a.overlaps(span{o.Ts, o.Ts + o.Dur}) {
				t.Errorf("%s for %s, retried alone, ran beside %s for %s", ev.Args.Kind, ev.Args.Arch, o.Args.Kind, o.Args.Arch)
			}
		}
	}
	if retried == 0 {
		t.Errorf("no job in the trace was retried alone after %d OOM kill(s)", g.OOMKills())
	}
}
