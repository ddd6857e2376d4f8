package farm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// startWorkerWith runs an in-process worker with opt (the test's keys, a
// directory unless opt has one, and a short lease added) until the test
// ends.
func startWorkerWith(t *testing.T, srv *redistest.Server, opt WorkerOptions) *Worker {
	t.Helper()
	store, err := redisstore.Open(srv.URL, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if opt.Dir == "" {
		opt.Dir = t.TempDir()
	}
	opt.Lease, opt.Keys = time.Second, testKeys().worker
	if opt.Sandbox == nil {
		opt.Sandbox = unconfined{}
	}
	w, err := NewWorker(store, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		store.Close()
	})
	return w
}

// waitWorker returns the worker name's record in the farm's status once
// it is there.
func waitWorker(t *testing.T, store *redisstore.Store, name string) WorkerInfo {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		st, err := GetStatus(context.Background(), store)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range st.Workers {
			if w.Name == name {
				return w
			}
		}
	}
	t.Fatalf("worker %s never appeared in the farm's status", name)
	return WorkerInfo{}
}

// TestWorkerAdvertisesMemory: the memory a worker's jobs may use, given
// or found, and where it comes from, are in the farm's status.
func TestWorkerAdvertisesMemory(t *testing.T) {
	srv, store, clang := farmSetup(t)
	startWorkerWith(t, srv, WorkerOptions{Name: "given", Clang: clang, Slots: 2, Memory: 3 << 30, MemorySource: "--memory"})
	startWorkerWith(t, srv, WorkerOptions{Name: "found", Clang: clang, Slots: 1})
	if w := waitWorker(t, store, "given"); w.Memory != 3<<30 || w.MemorySource != "--memory" || w.Reserved != 0 {
		t.Errorf("status of a worker given 3 GiB: memory %d from %q, %d reserved", w.Memory, w.MemorySource, w.Reserved)
	}
	w := waitWorker(t, store, "found")
	if runtime.GOOS == "linux" && (w.Memory <= 0 || w.MemorySource != "MemAvailable") {
		t.Errorf("status of a worker left to find its memory: %d from %q, want MemAvailable", w.Memory, w.MemorySource)
	}
}

// timedSandbox runs jobs unconfined, each after half a second's sleep,
// and writes when each started and ended (Unix nanoseconds) to a file of
// its own in dir.
type timedSandbox struct{ dir string }

func (timedSandbox) Layers() []string { return nil }

func (timedSandbox) CheckDir(string) error { return nil }

func (s timedSandbox) Command(ctx context.Context, slot int, dir string, ro []string, tool string, args, env []string) (*exec.Cmd, error) {
	script := `log=$1; shift; s=$(date +%s%N); sleep 0.5; "$@"; rc=$?; echo "$s $(date +%s%N)" > "$log/$$"; exit $rc`
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, "sh", s.dir, tool}, args...)...)
	cmd.Env = env
	return cmd, nil
}

// intervals returns the runs the sandbox logged.
func (s timedSandbox) intervals(t *testing.T) [][2]int64 {
	t.Helper()
	names, _ := os.ReadDir(s.dir)
	var runs [][2]int64
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(s.dir, n.Name()))
		var r [2]int64
		if _, serr := fmt.Sscan(string(data), &r[0], &r[1]); err != nil || serr != nil {
			t.Fatalf("run log %s: %q (%v %v)", n.Name(), data, err, serr)
		}
		runs = append(runs, r)
	}
	return runs
}

// sendJob sends a as a job expecting peak bytes (0: none said), signed by
// the test client, as Client.Run does, and waits for its result.
func sendJob(t *testing.T, c *Client, store *redisstore.Store, a *actions.Action, peak int64) Result {
	t.Helper()
	ctx := context.Background()
	j, blobs, err := c.job(ctx, a)
	if err != nil {
		t.Error(err)
		return Result{}
	}
	j.Peak = peak
	return putJob(t, store, j, blobs)
}

// putJob sends the job j with blobs to its toolchain's stream, signed by
// the test client, whatever it holds, and waits for its result.
func putJob(t *testing.T, store *redisstore.Store, j *Job, blobs []cache.Blob) Result {
	t.Helper()
	ctx := context.Background()
	rec, _ := json.Marshal(j)
	je := &cache.Entry{Kind: kindJob, Record: rec, Blobs: blobs}
	cache.SignEntry(testKeys().client.SigningKey, jobEntry(j.ID), je)
	if _, err := store.ReplaceCounted(jobEntry(j.ID), je); err != nil {
		t.Error(err)
		return Result{}
	}
	rdb := store.Client()
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: queueKey(store.Prefix(), j.Toolchain), Values: map[string]any{"job": j.ID, "kind": j.Kind}}).Err(); err != nil {
		t.Error(err)
		return Result{}
	}
	if _, err := rdb.BLPop(ctx, 30*time.Second, doneKey(store.Prefix(), j.ID)).Result(); err != nil {
		t.Errorf("job %s: no result in 30s: %v", j.ID, err)
		return Result{}
	}
	e, err := store.Get(resultEntry(j.ID))
	var res Result
	if err != nil || json.Unmarshal(e.Record, &res) != nil {
		t.Errorf("job %s: result unreadable: %v", j.ID, err)
	}
	return res
}

// TestWorkerAdmitsByMemory: a worker with two slots runs two jobs at once
// only where their expected peaks fit its memory together; jobs that say
// none share it by slots.
func TestWorkerAdmitsByMemory(t *testing.T) {
	for _, tc := range []struct {
		name        string
		memory      int64
		peak        int64
		wantOverlap bool
	}{
		{"memory for one 300M job", 400 << 20, 300 << 20, false},
		{"memory for two 300M jobs", 1000 << 20, 300 << 20, true},
		{"no peak said", 400 << 20, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, store, clang := farmSetup(t)
			sb := timedSandbox{t.TempDir()}
			startWorkerWith(t, srv, WorkerOptions{Name: "w1", Clang: clang, Slots: 2, Memory: tc.memory, MemorySource: "test", Sandbox: sb})
			c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir()})
			waitSlots(t, c, 2)
			var wg sync.WaitGroup
			for i := 0; i < 2; i++ {
				dir := t.TempDir()
				a := deviceCompile(t, clang, dir, filepath.Join(dir, "k.o"))
				wg.Add(1)
				go func() {
					defer wg.Done()
					if res := sendJob(t, c, store, a, tc.peak); res.Code != 0 || res.Refused != "" {
						t.Errorf("job: code %d, refused %q\n%s", res.Code, res.Refused, res.Stderr)
					} else if res.PeakRSS <= 0 {
						t.Errorf("the result gives no peak memory")
					}
				}()
			}
			wg.Wait()
			runs := sb.intervals(t)
			if len(runs) != 2 {
				t.Fatalf("%d runs logged, want 2", len(runs))
			}
			overlap := runs[0][0] < runs[1][1] && runs[1][0] < runs[0][1]
			if overlap != tc.wantOverlap {
				t.Errorf("%d MiB of memory, jobs expecting %d MiB: ran at once = %v, want %v (runs %v)",
					tc.memory>>20, tc.peak>>20, overlap, tc.wantOverlap, runs)
			}
		})
	}
}

// fakePeaks is a build's memory governor as the client sees it.
type fakePeaks struct {
	mu      sync.Mutex
	expect  int64
	learned map[*actions.Action]int64
	times   map[*actions.Action]time.Duration
	expectT time.Duration
}

func (p *fakePeaks) ExpectTime(*actions.Action) time.Duration { return p.expectT }

func (p *fakePeaks) LearnTime(a *actions.Action, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.times != nil {
		p.times[a] = d
	}
}

func (p *fakePeaks) Expect(*actions.Action) int64 { return p.expect }

func (p *fakePeaks) Learn(a *actions.Action, peak int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.learned[a] = peak
}

// TestClientSendsAndLearnsPeaks: a job the client sends carries the peak
// the build's governor expects (so a worker admits it by memory), and the
// peak the worker measured comes back to the governor.
func TestClientSendsAndLearnsPeaks(t *testing.T) {
	srv, store, clang := farmSetup(t)
	sb := timedSandbox{t.TempDir()}
	startWorkerWith(t, srv, WorkerOptions{Name: "w1", Clang: clang, Slots: 1, Memory: 1 << 30, MemorySource: "test", Sandbox: sb})
	peaks := &fakePeaks{expect: 300 << 20, learned: map[*actions.Action]int64{}, times: map[*actions.Action]time.Duration{}}
	c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir(), Peaks: peaks})
	waitSlots(t, c, 1)
	dir := t.TempDir()
	a := deviceCompile(t, clang, dir, filepath.Join(dir, "k.o"))
	j, _, err := c.job(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if j.Peak != 300<<20 {
		t.Errorf("the job expects %d bytes, want the governor's %d", j.Peak, 300<<20)
	}
	var stderr bytes.Buffer
	info, err := c.Run(context.Background(), a, io.Discard, &stderr)
	if err != nil || info.Worker == "" {
		t.Fatalf("Run: worker %q, %v\n%s", info.Worker, err, stderr.String())
	}
	peaks.mu.Lock()
	defer peaks.mu.Unlock()
	if p := peaks.learned[a]; p <= 1<<20 {
		t.Errorf("learned %d bytes from the worker's run, want its measured peak", p)
	}
	if d := peaks.times[a]; d <= 0 {
		t.Errorf("learned a run time of %v from the worker's run, want the time it ran", d)
	}
}

// slowSandbox runs jobs unconfined, each after a sleep of seconds, and
// counts the runs in the file runs.
type slowSandbox struct {
	runs    string
	seconds string
}

func (slowSandbox) Layers() []string { return nil }

func (slowSandbox) CheckDir(string) error { return nil }

func (s slowSandbox) Command(ctx context.Context, slot int, dir string, ro []string, tool string, args, env []string) (*exec.Cmd, error) {
	script := `runs=$1; secs=$2; shift 2; echo run >> "$runs"; sleep "$secs"; exec "$@"`
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, "sh", s.runs, s.seconds, tool}, args...)...)
	cmd.Env = env
	return cmd, nil
}

// TestWorkerKeepsItsLongJob: a job running longer than two leases is
// still pending in its stream, where the worker's reclaim finds it; the
// worker leaves its own running entry alone (it neither decodes the job
// again nor reserves its memory twice nor puts a second entry on the
// stream), and the job runs once.
func TestWorkerKeepsItsLongJob(t *testing.T) {
	srv, store, clang := farmSetup(t)
	sb := slowSandbox{runs: filepath.Join(t.TempDir(), "runs"), seconds: "3.5"}
	var logged bytes.Buffer
	var mu sync.Mutex
	w := startWorkerWith(t, srv, WorkerOptions{Name: "w1", Clang: clang, Slots: 1, Memory: 400 << 20, MemorySource: "test", Sandbox: sb,
		Log: log.New(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logged.Write(p)
		}), "", 0)})
	c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir()})
	waitSlots(t, c, 1)
	dir := t.TempDir()
	if res := sendJob(t, c, store, deviceCompile(t, clang, dir, filepath.Join(dir, "k.o")), 300<<20); res.Code != 0 || res.Refused != "" {
		t.Fatalf("job: code %d, refused %q\n%s", res.Code, res.Refused, res.Stderr)
	}
	time.Sleep(1500 * time.Millisecond) // a reclaim tick after the job
	mu.Lock()
	out := logged.String()
	mu.Unlock()
	for _, bad := range []string{"reclaimed stream entry", "left for later", "a replay"} {
		if strings.Contains(out, bad) {
			t.Errorf("the worker's log says %q of its own running job:\n%s", bad, out)
		}
	}
	if runs, _ := os.ReadFile(sb.runs); string(runs) != "run\n" {
		t.Errorf("the job ran %d times, want once", bytes.Count(runs, []byte("run")))
	}
	if n, err := store.Client().XLen(context.Background(), queueKey(store.Prefix(), w.Toolchain())).Result(); err == nil && n != 0 {
		t.Errorf("%d entries left on the stream after the job", n)
	}
}

// writerFunc is an io.Writer of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
