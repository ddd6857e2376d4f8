package e2e

// End-to-end tests of the build farm (package farm, offcc worker, and
// OFFCC_REMOTE_EXEC): real redis-servers on loopback ports, workers started
// as subprocesses of the offcc under test, real HIP and OpenMP builds whose
// objects must be byte-identical to local builds, and the failures the
// farm must survive (a worker killed or drained mid-job, Redis stopped
// mid-build, tampered blobs, hostile jobs).

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/offcc/offcc/farm"
	"github.com/offcc/offcc/trust"
)

// farmCUID is the compile unit ID of every HIP build of these tests:
// clang's default one hashes the temporary output path, so objects built
// without a fixed one differ from build to build.
const farmCUID = "-cuid=farmtest"

// farmEnv returns the environment additions of a build through the farm
// at url ("" for a local build): a fresh TMPDIR, no build cache or shared
// cache (they would hide the work), OFFCC_TRACE lines, and none of the
// farm settings of the caller's environment.
func farmEnv(t testing.TB, url string, extra ...string) []string {
	t.Helper()
	_, tmp := tmpEnv(t)
	env := append([]string{tmp, "OFFCC_CACHE=0", "OFFCC_REMOTE_CACHE=", "OFFCC_REMOTE_CACHE_READONLY=",
		"OFFCC_TRACE=1", "OFFCC_JOB_TRACE=", "OFFCC_REMOTE_EXEC=" + url, "OFFCC_REMOTE_EXEC_PICKUP=",
		"OFFCC_LLVM_DIR=", "OFFCC_PLAN_CACHE="}, farmKeyEnv(t)...)
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		env = append(env, strings.TrimSpace("GORACE="+g+" atexit_sleep_ms=0"))
	}
	return append(env, extra...)
}

// farmKeyDir holds the key pairs of the farm's tests: "client" (the
// clients' key, which the workers trust), "worker" (the workers', which
// the clients trust) and "attacker" (trusted by nobody).
type farmKeyDir string

func (d farmKeyDir) path(name string) string { return filepath.Join(string(d), name) }

// key loads one of the private keys.
func (d farmKeyDir) key(t testing.TB, name string) *trust.PrivateKey {
	t.Helper()
	k, err := trust.LoadPrivateKey(d.path(name + ".key"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var farmKeysOnce = sync.OnceValues(func() (farmKeyDir, error) {
	dir := filepath.Join(workDir, "farm-keys")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for _, name := range []string{"client", "worker", "attacker"} {
		k, err := trust.Generate(name)
		if err != nil {
			return "", err
		}
		if _, _, err := trust.WriteKeyPair(filepath.Join(dir, name), k); err != nil {
			return "", err
		}
	}
	return farmKeyDir(dir), nil
})

// farmKeyEnv returns the key settings of a farm client (which workers
// read too, but for OFFCC_SIGNING_KEY: see startWorker).
func farmKeyEnv(t testing.TB) []string {
	keys := farmKeys(t)
	return []string{"OFFCC_REMOTE_EXEC_INSECURE=", "OFFCC_REMOTE_CACHE_INSECURE=",
		"OFFCC_SIGNING_KEY=" + keys.path("client.key"), "OFFCC_TRUSTED_WORKERS=" + keys.path("worker.pub"),
		"OFFCC_TRUSTED_CLIENTS=" + keys.path("client.pub"), "OFFCC_TRUSTED_CACHE_KEYS="}
}

// farmKeys returns the farm tests' keys, made once per run.
func farmKeys(t testing.TB) farmKeyDir {
	t.Helper()
	d, err := farmKeysOnce()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// farmHIPFlags are the flags of a HIP compile of testdata/hip sources for
// archs (comma-separated), without ROCm.
func farmHIPFlags(t testing.TB, archs string) []string {
	return []string{"-x", "hip", "--offload-arch=" + archs, "-nogpuinc", "-nogpulib", "-O2",
		"-I" + srcPath(t, "../hip"), farmCUID}
}

// lockedBuffer is a bytes.Buffer safe for a process's output and the
// test's reads at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// farmWorker is an "offcc worker" process.
type farmWorker struct {
	name   string
	cmd    *exec.Cmd
	log    *lockedBuffer
	exited chan struct{} // closed when it has exited; then err is set
	err    error
}

// startWorker starts "offcc worker --redis url --jobs 1 --name name" with
// env added to its environment. When the test ends a worker still running
// is told to stop (SIGTERM) and must exit 0 (a race-instrumented worker
// exits 66 on a race); its log is shown when the test failed.
func startWorker(t *testing.T, c compiler, url, name string, env ...string) *farmWorker {
	t.Helper()
	return startWorkerFlags(t, c, url, name, nil, env...)
}

// startWorkerFlags is startWorker with flags added to the worker's
// command line.
func startWorkerFlags(t *testing.T, c compiler, url, name string, flags []string, env ...string) *farmWorker {
	t.Helper()
	w := &farmWorker{name: name, log: &lockedBuffer{}, exited: make(chan struct{})}
	w.cmd = exec.Command(c.cc, append([]string{"worker", "--redis", url, "--jobs", "1", "--name", name, "--dir", workerDir(t)}, flags...)...)
	w.cmd.Env = append(os.Environ(), farmEnv(t, "")...)
	w.cmd.Env = append(w.cmd.Env, "OFFCC_SIGNING_KEY="+farmKeys(t).path("worker.key"))
	w.cmd.Env = append(w.cmd.Env, env...)
	w.cmd.Stdout, w.cmd.Stderr = w.log, w.log
	if err := w.cmd.Start(); err != nil {
		t.Fatalf("starting worker %s: %v", name, err)
	}
	go func() {
		w.err = w.cmd.Wait()
		close(w.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			w.cmd.Process.Signal(syscall.SIGTERM)
			if !w.wait(20 * time.Second) {
				w.cmd.Process.Kill()
				<-w.exited
				t.Errorf("worker %s did not exit within 20s of SIGTERM", name)
			} else if w.err != nil {
				t.Errorf("worker %s exited with %v after SIGTERM, want 0", name, w.err)
			}
		}
		if t.Failed() {
			t.Logf("log of worker %s (%v):\n%s", name, w.err, w.log)
		}
	})
	return w
}

// workerDir returns a directory for a worker's jobs, removed when the test
// ends. A worker running as root runs jobs as other uids, which must be
// able to reach it: it is under the run's work directory, not the test's
// (0700) one, and searchable by all.
func workerDir(t testing.TB) string {
	t.Helper()
	if err := os.Chmod(workDir, 0o711); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(workDir, "worker-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A worker killed with SIGKILL leaves its running job's tmpfs
		// mounted (the next worker started on the directory removes
		// it): so does the test that kills it.
		for _, m := range mountsUnder(dir) {
			syscall.Unmount(m, syscall.MNT_DETACH)
		}
		os.RemoveAll(dir)
	})
	return dir
}

// mountsUnder returns the mount points beneath dir, deepest first.
func mountsUnder(dir string) []string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var m []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			m = append(m, f[4])
		}
	}
	slices.SortFunc(m, func(a, b string) int { return len(b) - len(a) })
	return m
}

// wait waits up to d for the worker to exit and reports whether it did.
func (w *farmWorker) wait(d time.Duration) bool {
	select {
	case <-w.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// farmStatusDoc is "offcc worker status --json", read into the type it
// is written from.
type farmStatusDoc struct{ farm.Status }

// worker returns the status of the worker named name, if listed.
func (s farmStatusDoc) worker(name string) (farm.WorkerInfo, bool) {
	for _, w := range s.Workers {
		if w.Name == name {
			return w, true
		}
	}
	return farm.WorkerInfo{}, false
}

// done sums the finished jobs of the listed workers.
func (s farmStatusDoc) done() int64 {
	var n int64
	for _, w := range s.Workers {
		n += w.Done
	}
	return n
}

func (s farmStatusDoc) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// farmStatus runs "offcc worker status --redis url --json".
func farmStatus(t testing.TB, c compiler, url string) farmStatusDoc {
	t.Helper()
	r := cmdSpec{dir: workDir, env: farmEnv(t, ""), name: c.cc, args: []string{"worker", "status", "--redis", url, "--json"}}.run(t)
	if r.code != 0 {
		t.Fatalf("offcc worker status failed:\n%s", r)
	}
	var st farmStatusDoc
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("offcc worker status --json: %v\n%s", err, r)
	}
	return st
}

// waitStatus polls the farm's status until cond holds (failing the test
// after timeout) and returns that status.
func waitStatus(t testing.TB, c compiler, url, what string, timeout time.Duration, cond func(farmStatusDoc) bool) farmStatusDoc {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := farmStatus(t, c, url)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s; status: %s", timeout, what, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitWorkers waits until every named worker is listed, serving.
func waitWorkers(t testing.TB, c compiler, url string, names ...string) farmStatusDoc {
	t.Helper()
	return waitStatus(t, c, url, fmt.Sprintf("workers %q are not all listed", names), 20*time.Second, func(st farmStatusDoc) bool {
		for _, n := range names {
			if w, ok := st.worker(n); !ok || w.Draining {
				return false
			}
		}
		return true
	})
}

// farmBuild is a compile run in a directory of its own.
type farmBuild struct {
	dir   string
	env   []string
	args  []string
	trace string // its --job-trace file
}

// newFarmBuild returns a build of args (which name the output k.o,
// relative) in a new directory under the test's, its base directory
// (OFFCC_BASE_DIR, unless env sets another), through the farm at url
// ("" for a local build).
func newFarmBuild(t testing.TB, c compiler, url string, env []string, a ...string) *farmBuild {
	t.Helper()
	dir, err := os.MkdirTemp(t.TempDir(), "build-")
	if err != nil {
		t.Fatal(err)
	}
	// Each build's directory is its base directory, as a checkout's: an
	// OpenMP translation unit's identity (its kernel names) is then the
	// same in every build of the same sources.
	b := &farmBuild{dir: dir, env: append(append(farmEnv(t, url), "OFFCC_BASE_DIR="+dir), env...), trace: filepath.Join(dir, "trace.json")}
	b.args = append(slices.Clone(a), "--job-trace="+b.trace)
	return b
}

func (b *farmBuild) obj() string { return filepath.Join(b.dir, "k.o") }

// start runs the build in the background: the result comes on the channel
// (an error only when it could not run at all, or ran past two minutes).
func (b *farmBuild) start(c compiler) <-chan farmOutcome {
	ch := make(chan farmOutcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, c.cc, b.args...)
		cmd.Dir = b.dir
		cmd.Env = append(os.Environ(), b.env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r := result{cmdline: shellJoin(append([]string{c.cc}, b.args...)), stdout: out.String(), stderr: errb.String()}
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee) && ctx.Err() == nil:
			r.code = ee.ExitCode()
			if r.code < 0 {
				r.code = 128
			}
		default:
			ch <- farmOutcome{r, fmt.Errorf("running %s: %v (context: %v)", r.cmdline, err, ctx.Err())}
			return
		}
		ch <- farmOutcome{r, nil}
	}()
	return ch
}

type farmOutcome struct {
	r   result
	err error
}

// mustRun runs the build and fails the test unless it succeeds.
func (b *farmBuild) mustRun(t testing.TB, c compiler) result {
	t.Helper()
	return mustSucceed(t, <-b.start(c))
}

func mustSucceed(t testing.TB, o farmOutcome) result {
	t.Helper()
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.r.code != 0 {
		t.Fatalf("build failed:\n%s", o.r)
	}
	return o.r
}

// farmTraceLine is an OFFCC_TRACE line: its tool, the worker= it ran on
// ("" for a job run here) and the line.
type farmTraceLine struct{ tool, worker, line string }

// traceLines returns the OFFCC_TRACE lines of a build's stderr.
func traceLines(stderr string) []farmTraceLine {
	var out []farmTraceLine
	for _, l := range parseTraceLines(stderr) {
		out = append(out, farmTraceLine{tool: l.tool, worker: l.get("worker"), line: l.line})
	}
	return out
}

// remoteLines returns the OFFCC_TRACE lines of jobs that ran on a worker.
func remoteLines(stderr string) []farmTraceLine {
	var out []farmTraceLine
	for _, l := range traceLines(stderr) {
		if l.worker != "" {
			out = append(out, l)
		}
	}
	return out
}

// farmRefs caches the objects of local builds, by flags: several tests
// compare with the same one.
var farmRefs struct {
	mu   sync.Mutex
	objs map[string]*farmRef
}

type farmRef struct {
	once sync.Once
	obj  []byte
	err  error
}

// localObject returns the object that a local build (no farm, no cache) of
// args (which must not name an output) gives, building it once per
// package run.
func localObject(t testing.TB, c compiler, a ...string) []byte {
	t.Helper()
	key := strings.Join(a, "\x00")
	farmRefs.mu.Lock()
	if farmRefs.objs == nil {
		farmRefs.objs = map[string]*farmRef{}
	}
	ref := farmRefs.objs[key]
	if ref == nil {
		ref = &farmRef{}
		farmRefs.objs[key] = ref
	}
	farmRefs.mu.Unlock()
	ref.once.Do(func() {
		dir, err := os.MkdirTemp(workDir, "farm-ref-")
		if err != nil {
			ref.err = err
			return
		}
		tmp := filepath.Join(dir, "tmp")
		os.Mkdir(tmp, 0o755)
		env := append(farmEnv(t, ""), "TMPDIR="+tmp, "OFFCC_TRACE=")
		cmd := exec.Command(c.cc, append(slices.Clone(a), "-o", "k.o")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			ref.err = fmt.Errorf("local reference build %s: %v\n%s", shellJoin(cmd.Args), err, out)
			return
		}
		ref.obj, ref.err = os.ReadFile(filepath.Join(dir, "k.o"))
	})
	if ref.err != nil {
		t.Fatal(ref.err)
	}
	return ref.obj
}

// heavyOnce holds the heavy source, written once per package run.
var heavyOnce struct {
	once sync.Once
	path string
	err  error
}

// heavySource returns a HIP translation unit whose device compile takes a
// few seconds per arch (fully unrolled loops in many kernels).
func heavySource(t testing.TB) string {
	t.Helper()
	heavyOnce.once.Do(func() {
		var b strings.Builder
		b.WriteString("// Generated by e2e/farm_test.go: slow device compiles.\n#include \"hip_min.h\"\n")
		for i := 0; i < 12; i++ {
			fmt.Fprintf(&b, `__global__ void heavy%d(float *a, const float *b, int n) {
  float acc = %d.0f;
#pragma unroll
  for (int j = 0; j < 256; j++) {
    acc = acc * b[(j * %d) %% 97] + a[(j + %d) %% 89];
    acc = __builtin_sqrtf(acc * acc + 1.0f) / (acc + %d.0f);
  }
  a[n] = acc;
}
`, i, i, i+3, i, i+1)
		}
		dir, err := os.MkdirTemp(workDir, "farm-heavy-")
		if err != nil {
			heavyOnce.err = err
			return
		}
		heavyOnce.path = filepath.Join(dir, "heavy.hip")
		heavyOnce.err = os.WriteFile(heavyOnce.path, []byte(b.String()), 0o644)
	})
	if heavyOnce.err != nil {
		t.Fatal(heavyOnce.err)
	}
	return heavyOnce.path
}

// heavyArchs are the archs of the builds of the heavy source.
const heavyArchs = "gfx906"

// heavyArgs are the arguments of a compile of the heavy source.
func heavyArgs(t testing.TB) []string {
	return args(farmHIPFlags(t, heavyArchs), "-c", heavySource(t))
}

// waitRunning waits until one of the named workers runs a job, as status
// says or (sooner than its announcements) as the job's claim in Redis
// says, and returns its name; the build ending first fails the test (the
// job was to be slow).
func waitRunning(t testing.TB, c compiler, srv *redistest.Server, build <-chan farmOutcome, names ...string) string {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case o := <-build:
			t.Fatalf("the build ended before a worker ran a job (a job too fast to catch?): %v\n%s", o.err, o.r)
		default:
		}
		keys, _ := rdb.Keys(ctx, "offcc:farm:claim:*").Result()
		for _, k := range keys {
			if owner, err := rdb.Get(ctx, k).Result(); err == nil && slices.Contains(names, owner) {
				return owner
			}
		}
		st := farmStatus(t, c, srv.URL)
		for _, n := range names {
			if w, ok := st.worker(n); ok && w.Running > 0 {
				return n
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("none of workers %q ran a job within a minute", names)
	return ""
}

// signalMidBuild starts the only worker, name, and the heavy TU's build
// through the farm of srv, and sends the worker sig once it runs one of
// the build's jobs; it returns the worker and what startHeavyBuild does.
func signalMidBuild(t *testing.T, c compiler, srv *redistest.Server, name string, sig syscall.Signal) (*farmWorker, []byte, *farmBuild, <-chan farmOutcome, time.Time) {
	t.Helper()
	w := startWorker(t, c, srv.URL, name)
	waitWorkers(t, c, srv.URL, name)
	want, b, done, start := startHeavyBuild(t, c, srv, name)
	if err := w.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	t.Logf("%v %v into the build", sig, time.Since(start))
	return w, want, b, done, start
}

// startHeavyBuild starts the heavy TU's build through the farm of srv and
// returns once one of the named workers runs one of its jobs, with the
// local build's object, the build, its outcome and its start time.
func startHeavyBuild(t *testing.T, c compiler, srv *redistest.Server, names ...string) ([]byte, *farmBuild, <-chan farmOutcome, time.Time) {
	t.Helper()
	want := localObject(t, c, heavyArgs(t)...)
	b := newFarmBuild(t, c, srv.URL, nil, append(heavyArgs(t), "-o", "k.o")...)
	start := time.Now()
	done := b.start(c)
	waitRunning(t, c, srv, done, names...)
	return want, b, done, start
}

// TestFarmFourAndTenArchs: with three workers, a four-arch and a ten-arch
// HIP compile through the farm give the objects of local builds; device
// compiles ran on workers (OFFCC_TRACE says worker=, the job trace too,
// with its transfer and timing arguments), and status counts their jobs.
func TestFarmFourAndTenArchs(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	for _, n := range []string{"w1", "w2", "w3"} {
		startWorker(t, c, srv.URL, n)
	}
	waitWorkers(t, c, srv.URL, "w1", "w2", "w3")
	src := srcPath(t, "../hip/kernels.hip")
	for _, archs := range []string{
		"gfx906,gfx908,gfx90a,gfx1030",
		"gfx906,gfx908,gfx90a,gfx1030,gfx942,gfx1100,gfx1101,gfx803,gfx900,gfx1010",
	} {
		n := strings.Count(archs, ",") + 1
		a := args(farmHIPFlags(t, archs), "-c", src)
		b := newFarmBuild(t, c, srv.URL, nil, append(a, "-o", "k.o")...)
		start := time.Now()
		r := b.mustRun(t, c)
		t.Logf("%d archs through the farm: %v", n, time.Since(start))
		sameBytes(t, fmt.Sprintf("%d archs: the object built through the farm", n), b.obj(), localObject(t, c, a...))

		if remote := remoteLines(r.stderr); len(remote) == 0 {
			t.Errorf("%d archs: no OFFCC_TRACE line says worker=:\n%s", n, r.stderr)
		} else {
			for _, l := range remote {
				if !slices.Contains([]string{"w1", "w2", "w3"}, l.worker) || l.tool != "clang" && l.tool != "lld" {
					t.Errorf("%d archs: bad remote job line %q", n, l.line)
				}
			}
		}
		evs := readJobTrace(t, b.trace)
		var devRemote, devAll int
		for _, e := range evs {
			if e.Kind == "device-compile" {
				devAll++
			}
			if e.Worker == "" {
				continue
			}
			if e.Kind == "device-compile" {
				devRemote++
			}
			if e.BytesUp == nil || e.BytesDown == nil || e.TransferMS == nil || e.QueueMS == nil || e.RunMS == nil {
				t.Errorf("%d archs: remote event %s lacks bytes_up, bytes_down, transfer_ms, queue_ms or run_ms", n, e)
			} else if *e.BytesDown == 0 {
				t.Errorf("%d archs: remote event %s received no bytes", n, e)
			}
		}
		if devAll != n || devRemote == 0 {
			t.Errorf("%d archs: %d device compiles (want %d), %d on workers (want one at least):\n%s", n, devAll, n, devRemote, listEvents(evs))
		}
		t.Logf("%d archs: %d of %d device compiles on workers; %d jobs remote in all", n, devRemote, devAll, len(remoteLines(r.stderr)))
	}
	st := waitStatus(t, c, srv.URL, "status: no worker finished a job", 10*time.Second, func(st farmStatusDoc) bool { return st.done() > 0 })
	for _, w := range st.Workers {
		if w.Refused != 0 || w.Failed != 0 {
			t.Errorf("status: worker %s refused %d and failed %d jobs", w.Name, w.Refused, w.Failed)
		}
	}
}

// TestFarmWorkerKilled: the only worker, killed (SIGKILL) while it runs a
// slow device compile, loses its lease; the client runs the job itself and
// the build's object is the local build's.
func TestFarmWorkerKilled(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	_, want, b, done, start := signalMidBuild(t, c, srv, "victim", syscall.SIGKILL)
	r := mustSucceed(t, <-done)
	t.Logf("build: %v", time.Since(start))
	sameBytes(t, "the object built with its worker killed", b.obj(), want)
	for _, l := range remoteLines(r.stderr) {
		if l.worker == "victim" && l.tool == "clang" {
			t.Errorf("a compile is said to have run on the killed worker: %q", l.line)
		}
	}
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("a dead worker is no warning:\n%s", r.stderr)
	}
}

// TestFarmRedisStops: the farm's Redis stopped while workers run the
// build's device compiles: the build finishes locally with the local
// build's object, after one warning about the build farm.
func TestFarmRedisStops(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	startWorker(t, c, srv.URL, "r1")
	startWorker(t, c, srv.URL, "r2")
	waitWorkers(t, c, srv.URL, "r1", "r2")
	want, b, done, start := startHeavyBuild(t, c, srv, "r1", "r2")
	srv.Stop()
	t.Logf("redis-server stopped %v into the build", time.Since(start))
	r := mustSucceed(t, <-done)
	t.Logf("build: %v\n%s", time.Since(start), r.stderr)
	sameBytes(t, "the object built with Redis stopped", b.obj(), want)
	var warnings []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, "build farm") {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "warning") {
		t.Errorf("want exactly one warning about the build farm, got %d:\n%s", len(warnings), r.stderr)
	}
}

// TestFarmOtherToolchain: a worker whose LLVM differs (its clang is another
// file) announces another toolchain and takes none of the jobs of a build
// with the real LLVM, which runs them all locally.
func TestFarmOtherToolchain(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	// Where the jobs' uids (a root worker's) can read it.
	fake := workerDir(t)
	for _, d := range []string{"bin", "lib/clang/22"} {
		if err := os.MkdirAll(filepath.Join(fake, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Another executable as clang (the sandbox runs ELF files only).
	falseBin, err := os.ReadFile("/bin/false")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "bin", "clang"), falseBin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"lld", "ld.lld"} {
		if err := os.Symlink(filepath.Join(llvmBin, l), filepath.Join(fake, "bin", l)); err != nil {
			t.Fatal(err)
		}
	}
	startWorker(t, c, srv.URL, "other", "OFFCC_LLVM_DIR="+filepath.Join(fake, "bin"))
	st := waitWorkers(t, c, srv.URL, "other")
	other, _ := st.worker("other")
	if other.Toolchain == "" || other.Toolchain == farm.Toolchain(refClang) {
		t.Errorf("the worker with another clang announces toolchain %q, the real LLVM's is %q", other.Toolchain, farm.Toolchain(refClang))
	}

	a := args(farmHIPFlags(t, "gfx906,gfx90a"), "-c", srcPath(t, "../hip/kernels.hip"))
	b := newFarmBuild(t, c, srv.URL, []string{"OFFCC_REMOTE_EXEC_PICKUP=300ms"}, append(a, "-o", "k.o")...)
	start := time.Now()
	r := b.mustRun(t, c)
	t.Logf("build: %v", time.Since(start))
	sameBytes(t, "the object built beside a worker of another toolchain", b.obj(), localObject(t, c, a...))
	if remote := remoteLines(r.stderr); len(remote) != 0 || len(traceLines(r.stderr)) == 0 {
		t.Errorf("want OFFCC_TRACE lines, none with worker=:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("warnings:\n%s", r.stderr)
	}

	// A real worker, for comparison, after the build.
	startWorker(t, c, srv.URL, "real")
	st = waitWorkers(t, c, srv.URL, "other", "real")
	other, _ = st.worker("other")
	real, _ := st.worker("real")
	if other.Done != 0 || other.Refused != 0 || other.Failed != 0 || other.Running != 0 {
		t.Errorf("the worker of another toolchain took jobs: %+v", other)
	}
	if other.Toolchain == real.Toolchain {
		t.Errorf("the worker with another clang has the real worker's toolchain %q", real.Toolchain)
	}
	if real.Toolchain != farm.Toolchain(refClang) {
		t.Errorf("the real worker's toolchain %q is not farm.Toolchain(%s) = %q", real.Toolchain, refClang, farm.Toolchain(refClang))
	}
}

// farmJobs submits jobs to a farm's workers the way package farm's client
// does: the job entry (record and input blobs) in the store, then the job
// ID on the toolchain's stream.
type farmJobs struct {
	store     *redisstore.Store
	rdb       *redis.Client
	toolchain string
	// key signs the jobs (the clients' key unless a test changes it;
	// nil sends them unsigned).
	key *trust.PrivateKey
}

func newFarmJobs(t *testing.T, url, toolchain string) *farmJobs {
	t.Helper()
	store, err := redisstore.Open(url, redisstore.Options{OpTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return &farmJobs{store: store, rdb: store.Client(), toolchain: toolchain, key: farmKeys(t).key(t, "client")}
}

// farmToolID is the identity digest a job gives its tool.
func farmToolID(path string) string {
	s := sha256.Sum256([]byte(cache.ToolIdentity(path)))
	return hex.EncodeToString(s[:])
}

// farmBlobOf describes a file as blob name of an entry.
func farmBlobOf(t testing.TB, path, name string) cache.Blob {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return cache.Blob{Name: name, Size: int64(len(data)), Sum: cache.SumBytes(data), Mode: 0o644, Path: path}
}

// run submits j (its ID, version and toolchain filled in here), with
// files as its inputs, and returns the worker's result record and entry.
func (f *farmJobs) run(t *testing.T, j farm.Job, files ...string) (farm.Result, *cache.Entry) {
	t.Helper()
	return f.runWith(t, j, nil, files...)
}

// runWith is run with the job entry, once signed, passed through tamper
// (when not nil) before it is stored: what an attacker with write access
// to Redis does to a client's job.
func (f *farmJobs) runWith(t *testing.T, j farm.Job, tamper func(*cache.Entry), files ...string) (farm.Result, *cache.Entry) {
	t.Helper()
	j = f.put(t, j, tamper, files...).Job
	ctx := context.Background()
	if err := f.rdb.XAdd(ctx, &redis.XAddArgs{Stream: "offcc:farm:q:" + f.toolchain, Values: map[string]any{"job": j.ID, "kind": j.Kind}}).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := f.rdb.BLPop(ctx, 30*time.Second, "offcc:farm:done:"+j.ID).Result()
	if err != nil {
		t.Fatalf("job %s (%s %q): no worker finished it: %v", j.ID, j.Tool, j.Args, err)
	}
	e, err := f.store.Get(farmResultKey(j.ID))
	if err != nil {
		t.Fatalf("job %s: done by %s, but its result entry: %v", j.ID, res[1], err)
	}
	var r farm.Result
	if err := json.Unmarshal(e.Record, &r); err != nil {
		t.Fatalf("job %s: result record %q: %v", j.ID, e.Record, err)
	}
	return r, e
}

// put stores j (its ID, version, expiry, toolchain and kind filled in
// where it gives none) with files as its inputs, signed by f.key (unless
// nil) and passed through tamper (when not nil) before it is stored,
// without queueing it.
func (f *farmJobs) put(t *testing.T, j farm.Job, tamper func(*cache.Entry), files ...string) craftedJob {
	t.Helper()
	var rnd [12]byte
	rand.Read(rnd[:])
	j.Version, j.ID = farm.JobVersion, hex.EncodeToString(rnd[:])
	if j.Expires == 0 {
		j.Expires = time.Now().Add(time.Hour).UnixMilli()
	}
	if j.Toolchain == "" {
		j.Toolchain = f.toolchain
	}
	if j.Kind == "" {
		j.Kind, j.Client = "device-compile", "farm_test"
	}
	blobs := make([]cache.Blob, 0, len(files))
	for i, p := range files {
		b := farmBlobOf(t, p, fmt.Sprintf("f%d", i))
		blobs = append(blobs, b)
		j.Files = append(j.Files, farm.File{Path: p, Blob: b.Name, Mode: b.Mode})
	}
	f.preload(t, blobs)
	rec, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	e := &cache.Entry{Kind: "job", Record: rec, Blobs: blobs}
	if f.key != nil {
		cache.SignEntry(f.key, farmJobKey(j.ID), e)
	}
	if tamper != nil {
		tamper(e)
	}
	if err := f.store.Replace(farmJobKey(j.ID), e); err != nil {
		t.Fatal(err)
	}
	return craftedJob{j, e}
}

// TestFarmRefusesAndKeepsServing: jobs crafted in Redis that name another
// tool, a file they do not ship, a plugin, or read or write files by other
// spellings are refused by the worker (its result says why) without
// running anything; a well-formed crafted job runs; and afterwards a real
// build's job still runs on the worker.
func TestFarmRefusesAndKeepsServing(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	startWorker(t, c, srv.URL, "guard")
	st := waitWorkers(t, c, srv.URL, "guard")
	g, _ := st.worker("guard")
	jobs := newFarmJobs(t, srv.URL, g.Toolchain)

	dir := t.TempDir()
	src := filepath.Join(dir, "in.c")
	if err := os.WriteFile(src, []byte("int plus1(int x) { return x + 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.o")
	// A file a job must not be able to make on the worker.
	canary := filepath.Join(t.TempDir(), "written-by-a-job")
	clang := filepath.Join(llvmBin, "clang")
	flags := []string{"-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-O2"}
	cc1 := func(extra ...string) farm.Job {
		return farm.Job{Tool: "clang", ToolID: farmToolID(clang), Dir: dir, Outputs: []string{out},
			Args: args(flags, "-o", out, "-x", "c", src, extra)}
	}
	lld := filepath.Join(llvmBin, "lld")
	obj := filepath.Join(dir, "local.o")
	link := func(extra ...string) farm.Job {
		return farm.Job{Tool: "lld", ToolID: farmToolID(lld), Dir: dir, Outputs: []string{out},
			Args: args("-shared", "-o", out, obj, extra)}
	}

	// The control: a well-formed job runs, and its object is clang's here.
	res, e := jobs.run(t, cc1(), src)
	if res.Refused != "" || res.Code != 0 || res.Worker != "guard" {
		t.Fatalf("a well-formed crafted job: %+v (stderr %s)", res, res.Stderr)
	}
	if len(e.Blobs) != 1 || e.Blobs[0].Name != "o0" || e.Blobs[0].Size == 0 {
		t.Fatalf("a well-formed crafted job's result has blobs %+v, want o0", e.Blobs)
	}
	cmdSpec{dir: dir, name: clang, args: args(flags, "-o", obj, "-x", "c", src)}.mustRun(t)
	if want := farmBlobOf(t, obj, "o0"); want.Sum != e.Blobs[0].Sum {
		t.Errorf("the crafted job's object differs from clang -cc1's here")
	}
	// And a well-formed link.
	if res, e := jobs.run(t, link(), obj); res.Refused != "" || res.Code != 0 || len(e.Blobs) != 1 {
		t.Fatalf("a well-formed crafted link: %+v, blobs %+v (stderr %s)", res, e.Blobs, res.Stderr)
	}
	controls := 2

	passwd, _ := os.ReadFile("/etc/passwd")
	firstLine, _, _ := strings.Cut(string(passwd), "\n")
	refusals := 0
	for _, tc := range []struct {
		name string
		job  farm.Job
		// why, when set, is what the refusal must name; without it the
		// job may also run (and fail), but must read and write nothing
		// outside itself.
		why string
	}{
		{"tool sh", farm.Job{Tool: "sh", ToolID: farmToolID("/bin/sh"), Dir: dir, Args: []string{"-c", "cat /etc/passwd; touch " + canary}}, "sh"},
		{"unshipped input", cc1("-include", "/etc/passwd"), "/etc/passwd"},
		{"unshipped source", farm.Job{Tool: "clang", ToolID: farmToolID(clang), Dir: dir, Outputs: []string{out},
			Args: args(flags, "-o", out, "-x", "c", "/etc/passwd")}, "/etc/passwd"},
		{"pass plugin", cc1("-fpass-plugin=/x.so"), "-fpass-plugin"},
		{"plugin load", cc1("-load", "/x.so"), "-load"},
		{"another working directory", cc1("-working-directory", "/etc"), "-working-directory"},
		{"lld writing elsewhere", farm.Job{Tool: "lld", ToolID: farmToolID(lld), Dir: dir,
			Args: []string{"-shared", "-o", canary, obj}, Outputs: []string{out}}, "-o"},
		{"lld unshipped input", link("/etc/passwd"), "/etc/passwd"},
		// Other spellings of reads and writes outside the job: refused,
		// or run without reaching the worker's files.
		{"joined include", cc1("-include/etc/passwd"), ""},
		{"response file", cc1("@/etc/passwd"), ""},
		{"joined output", cc1("-o" + canary), ""},
		// clang -cc1 writes a relative output under -working-directory,
		// the client's directory: here text of the job's choosing.
		{"joined relative output", farm.Job{Tool: "clang", ToolID: farmToolID(clang), Dir: filepath.Dir(canary), Outputs: []string{out},
			Args: args(flags[:3], "-E", "-P", "-o", out, "-x", "c", src, "-o"+filepath.Base(canary))}, ""},
		{"lld response file", link("@/etc/passwd"), ""},
		{"lld joined output", link("-o" + canary), ""},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			var files []string
			switch tc.job.Tool {
			case "clang":
				files = []string{src}
			case "lld":
				files = []string{obj}
			}
			res, e := jobs.run(t, tc.job, files...)
			switch {
			case res.Refused != "":
				refusals++
				t.Logf("refused: %s", res.Refused)
				if tc.why != "" && !strings.Contains(res.Refused, tc.why) {
					t.Errorf("refused for another reason (want one naming %q): %s", tc.why, res.Refused)
				}
			case tc.why != "":
				t.Errorf("not refused: exit code %d, %d output blobs; stderr:\n%s", res.Code, len(e.Blobs), farmHead(res.Stderr))
			default:
				t.Logf("not refused: exit code %d; stderr:\n%s", res.Code, farmHead(res.Stderr))
			}
			if firstLine != "" && (bytes.Contains(res.Stderr, []byte(firstLine)) || bytes.Contains(res.Stdout, []byte(firstLine))) {
				t.Errorf("the job's output holds the worker's /etc/passwd:\n%s%s", farmHead(res.Stdout), farmHead(res.Stderr))
			}
			if _, err := os.Stat(canary); err == nil {
				t.Errorf("the job wrote %s on the worker", canary)
				os.Remove(canary)
			}
		})
	}

	// Status counts them (within its announcement period).
	st = waitStatus(t, c, srv.URL, fmt.Sprintf("the worker's status does not count %d refusals and %d done", refusals, controls), 10*time.Second,
		func(st farmStatusDoc) bool {
			g, ok := st.worker("guard")
			return ok && g.Refused == int64(refusals) && g.Done >= int64(controls)
		})
	g, _ = st.worker("guard")

	// The worker still serves real builds.
	a := args(farmHIPFlags(t, "gfx906"), "-c", srcPath(t, "../hip/kernels.hip"))
	b := newFarmBuild(t, c, srv.URL, nil, append(a, "-o", "k.o")...)
	r := b.mustRun(t, c)
	sameBytes(t, "the object built after the refusals", b.obj(), localObject(t, c, a...))
	if remote := remoteLines(r.stderr); len(remote) == 0 {
		t.Errorf("after refusing jobs, the worker ran none of a real build's:\n%s", r.stderr)
	}
	waitStatus(t, c, srv.URL, "the worker's done count did not grow with the build's jobs", 10*time.Second, func(st farmStatusDoc) bool {
		w, _ := st.worker("guard")
		return w.Done > g.Done
	})
}

// farmHead returns the first lines of a tool's output, for messages.
func farmHead(out []byte) string {
	lines := strings.SplitAfter(string(out), "\n")
	if len(lines) > 4 {
		lines = append(lines[:3], fmt.Sprintf("[%d more lines]\n", len(lines)-3))
	}
	return strings.Join(lines, "")
}

// TestFarmTamperedBlob: blobs changed in Redis after a build through the
// farm (same length, other bytes) do not reach an object: the second build
// gives the local build's object, and the build after it uses the farm
// again (bad blobs are removed, and sent again).
func TestFarmTamperedBlob(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	startWorker(t, c, srv.URL, "t1")
	startWorker(t, c, srv.URL, "t2")
	waitWorkers(t, c, srv.URL, "t1", "t2")
	a := args(farmHIPFlags(t, "gfx906,gfx90a"), "-c", srcPath(t, "../hip/kernels.hip"))
	want := localObject(t, c, a...)
	first := newFarmBuild(t, c, srv.URL, nil, append(a, "-o", "k.o")...)
	r := first.mustRun(t, c)
	sameBytes(t, "the first build's object", first.obj(), want)
	if len(remoteLines(r.stderr)) == 0 {
		t.Fatalf("the first build ran no job on a worker:\n%s", r.stderr)
	}
	before := waitStatus(t, c, srv.URL, "status: no worker finished a job of the first build", 10*time.Second, func(st farmStatusDoc) bool { return st.done() > 0 })

	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()
	blobs := remoteKeys(t, srv, "offcc:b:*")
	tampered := 0
	for _, k := range blobs {
		chunk, err := rdb.HGet(ctx, k, "0").Bytes()
		if err != nil || len(chunk) == 0 {
			continue
		}
		for i := range chunk {
			chunk[i] ^= 0x5a
		}
		if err := rdb.HSet(ctx, k, "0", chunk).Err(); err != nil {
			t.Fatal(err)
		}
		tampered++
	}
	if tampered == 0 {
		t.Fatalf("no blob in Redis to tamper with (keys %q)", blobs)
	}

	second := newFarmBuild(t, c, srv.URL, nil, append(a, "-o", "k.o")...)
	r = second.mustRun(t, c)
	sameBytes(t, "the object built from tampered blobs", second.obj(), want)
	after := farmStatus(t, c, srv.URL)
	// The tampered blobs were used: workers refused jobs whose inputs
	// did not verify, or the client's check of a worker's outputs failed
	// (workers keep their own verified copies of inputs, so they may not
	// read the tampered ones), or the client sent the bytes again and
	// jobs ran.
	remote := len(remoteLines(r.stderr))
	if remote == 0 && !strings.Contains(r.stderr, "does not match its digest") {
		after = waitStatus(t, c, srv.URL, "the second build ran no job on a worker, and no worker refused one", 10*time.Second,
			func(st farmStatusDoc) bool {
				var n int64
				for _, w := range st.Workers {
					n += w.Refused
				}
				return n > 0
			})
	}
	var refused, done int64
	for _, w := range after.Workers {
		b, _ := before.worker(w.Name)
		refused += w.Refused - b.Refused
		done += w.Done - b.Done
	}
	t.Logf("%d blobs tampered; the second build: %d jobs refused, %d done on workers, %d remote lines", tampered, refused, done, remote)
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("tampered blobs are no warning:\n%s", r.stderr)
	}

	// A blob that failed verification was removed: the next build sends
	// the right bytes again and its jobs run on the workers.
	third := newFarmBuild(t, c, srv.URL, nil, append(a, "-o", "k.o")...)
	r = third.mustRun(t, c)
	sameBytes(t, "the third build's object", third.obj(), want)
	if len(remoteLines(r.stderr)) == 0 {
		t.Errorf("after tampered blobs, the farm ran no job of the next build:\n%s", r.stderr)
	}
}

// TestFarmWorkerDrains: a worker sent SIGTERM while it runs a job finishes
// it (the build gets its output), exits 0 and leaves the status.
func TestFarmWorkerDrains(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	w, want, b, done, start := signalMidBuild(t, c, srv, "drainer", syscall.SIGTERM)
	// It says it drains (the announcement may lag by a moment).
	time.Sleep(300 * time.Millisecond)
	if info, ok := farmStatus(t, c, srv.URL).worker("drainer"); ok && info.Running > 0 && !info.Draining {
		t.Errorf("a worker running a job after SIGTERM does not say it drains: %+v", info)
	}
	if !w.wait(60 * time.Second) {
		t.Fatalf("the worker did not exit within a minute of SIGTERM")
	}
	t.Logf("worker exited %v into the build (%v)", time.Since(start), w.err)
	if w.err != nil {
		t.Errorf("the drained worker exited with %v, want 0", w.err)
	}
	r := mustSucceed(t, <-done)
	sameBytes(t, "the object built with its worker drained", b.obj(), want)
	ran := false
	for _, l := range remoteLines(r.stderr) {
		ran = ran || l.worker == "drainer" && l.tool == "clang"
	}
	if !ran {
		t.Errorf("the job the worker ran when told to stop did not come back from it:\n%s", r.stderr)
	}
	st := farmStatus(t, c, srv.URL)
	if _, ok := st.worker("drainer"); ok {
		t.Errorf("the drained worker is still listed: %s", st)
	}
}

// TestFarmCMakeProject builds the multi-TU CMake project (OpenMP offload to
// the host) with make -j through the farm: it builds, runs offloaded, and
// some of its jobs ran on the workers (the backends; CMake names the
// sources by absolute paths, and their OpenMP front ends go too because the
// toolchain file gives every compile a base directory).
func TestFarmCMakeProject(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	mk := buildTool(t, "make")
	srv := redistest.Start(t)
	startWorker(t, c, srv.URL, "m1")
	startWorker(t, c, srv.URL, "m2")
	waitWorkers(t, c, srv.URL, "m1", "m2")
	b := newCMakeBuild(t)
	b.configure(t, "Unix Makefiles", toolchainArgs(t, c)...)
	start := time.Now()
	env := append(slices.Clone(b.env), "OFFCC_CACHE=0", "OFFCC_REMOTE_CACHE=", "OFFCC_TRACE=1",
		"OFFCC_REMOTE_EXEC="+srv.URL, "OFFCC_REMOTE_EXEC_PICKUP=")
	env = append(env, farmKeyEnv(t)...)
	r := cmdSpec{dir: b.dir, env: env, name: mk, args: []string{"-j4"}}.mustRun(t)
	t.Logf("make -j4 through the farm: %v", time.Since(start))
	out := r.stdout + r.stderr
	if got := compiled(out); !slices.Equal(got, allObjects) {
		t.Errorf("the build compiled %q, want %q\n%s", got, allObjects, out)
	}
	b.run(t)
	remote := remoteLines(out)
	t.Logf("%d jobs ran on workers", len(remote))
	if len(remote) == 0 {
		t.Errorf("no job of the build ran on a worker (no OFFCC_TRACE line says worker=):\n%s", out)
	} else {
		waitStatus(t, c, srv.URL, "status: no worker finished a job", 10*time.Second, func(st farmStatusDoc) bool { return st.done() > 0 })
	}
	if strings.Contains(out, "warning") {
		t.Errorf("warnings:\n%s", out)
	}
}
