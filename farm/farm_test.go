package farm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/trust"
	"github.com/redis/go-redis/v9"
)

// farmSetup starts a redis-server and returns a store on it and LLVM 22's
// clang.
func farmSetup(t *testing.T) (*redistest.Server, *redisstore.Store, string) {
	t.Helper()
	clang := llvmtest.Tool(t, "clang")
	srv := redistest.Start(t)
	store, err := redisstore.Open(srv.URL, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return srv, store, clang
}

// clientWithWorker starts a redis-server with one worker, w1, and returns
// its store, LLVM 22's clang and a client (closed when the test ends) that
// sees the worker's slot.
func clientWithWorker(t *testing.T) (*redisstore.Store, string, *Client) {
	t.Helper()
	srv, store, clang := farmSetup(t)
	startWorker(t, srv, clang, "w1")
	c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir()})
	waitSlots(t, c, 1)
	return store, clang, c
}

// testKeys are the keys of this package's tests: one client's and one
// worker's, each trusting the other.
var testKeys = sync.OnceValue(func() (k struct{ client, worker *trust.Settings }) {
	ck, _ := trust.Generate("test-client")
	wk, _ := trust.Generate("test-worker")
	k.client = &trust.Settings{SigningKey: ck, Workers: trust.NewKeyring(&wk.PublicKey)}
	k.worker = &trust.Settings{SigningKey: wk, Clients: trust.NewKeyring(&ck.PublicKey)}
	return k
})

// newTestClient returns a client with the test client's keys (unless opt
// has keys), closed when the test ends.
func newTestClient(t *testing.T, store *redisstore.Store, opt ClientOptions) *Client {
	t.Helper()
	if opt.Keys == nil && !opt.Insecure {
		opt.Keys = testKeys().client
	}
	c, err := NewClient(store, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// unconfined runs jobs directly: for the tests of the protocol (the
// sandbox has tests of its own).
type unconfined struct{}

func (unconfined) Layers() []string { return nil }

func (unconfined) CheckDir(string) error { return nil }

func (unconfined) Command(ctx context.Context, slot int, dir string, ro []string, tool string, args, env []string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Env = env
	return cmd, nil
}

// startWorker runs an in-process worker until the test ends.
func startWorker(t *testing.T, srv *redistest.Server, clang, name string) *Worker {
	t.Helper()
	return startWorkerWith(t, srv, WorkerOptions{Name: name, Clang: clang, Slots: 1})
}

// deviceCompile returns an amdgcn compile of dir/k.c, which includes
// k.h, writing out and a dependency file.
func deviceCompile(t *testing.T, clang, dir, out string) *actions.Action {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "k.h"), []byte("#define SCALE 3\n#include <stddef.h>\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "opt.h"), []byte("#error only tested, never included\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "k.c"), []byte("#include \"k.h\"\nconst char *f(void) { return __FILE__; }\nint g(int x) { return x * SCALE + (int)sizeof(size_t); }\n"+
		"#if __has_include(\"opt.h\")\nint has_opt = 1;\n#else\nint has_opt = 2;\n#endif\n"), 0o644)
	src := filepath.Join(dir, "k.c")
	dep := out + ".d"
	return &actions.Action{
		Kind: actions.DeviceCompile, Offload: actions.HIP, Device: true,
		Command: []string{clang, "-cc1", "-triple", "amdgcn-amd-amdhsa", "-target-cpu", "gfx90a", "-O2",
			"-emit-obj", "-main-file-name", "k.c", "-resource-dir", filepath.Join(filepath.Dir(clang), "..", "lib", "clang", "22"),
			"-o", out, "-dependency-file", dep, "-MT", out, "-sys-header-deps", "-x", "c", src},
		Inputs:  []*actions.Artifact{actions.NewArtifact(src)},
		Outputs: []*actions.Artifact{actions.NewArtifact(out)},
		DepFile: dep,
	}
}

// runLocally runs a's command here, as a build without the farm would.
func runLocally(t *testing.T, a *actions.Action) {
	t.Helper()
	if out, err := exec.Command(a.Command[0], a.Command[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("local run of %s: %v\n%s", a.Label(), err, out)
	}
}

// waitSlots waits until the client sees n worker slots.
func waitSlots(t *testing.T, c *Client, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); c.Slots() < n; {
		if time.Now().After(deadline) {
			t.Fatalf("the client sees %d worker slots, want %d", c.Slots(), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRoundTrip: a device compile that reads a header, and tests another
// with __has_include, runs on a worker and writes the object and
// dependency file a local run writes, byte for byte.
func TestRoundTrip(t *testing.T) {
	store, clang, c := clientWithWorker(t)
	dir := t.TempDir()

	localOut := filepath.Join(dir, "local.o")
	la := deviceCompile(t, clang, dir, localOut)
	runLocally(t, la)
	a := deviceCompile(t, clang, dir, filepath.Join(dir, "remote.o"))
	if !c.Accepts(a) {
		t.Fatal("the client does not accept a HIP device compile")
	}
	var stdout, stderr bytes.Buffer
	info, err := c.Run(context.Background(), a, &stdout, &stderr)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}
	if info.Worker != "w1" || info.BytesUp == 0 || info.BytesDown == 0 {
		t.Errorf("info = %+v, want worker w1 and bytes both ways", info)
	}
	want, _ := os.ReadFile(localOut)
	got, err := os.ReadFile(filepath.Join(dir, "remote.o"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("the worker's object differs from the local one (%d vs %d bytes, %v)", len(got), len(want), err)
	}
	deps, err := actions.ReadDepFile(a.DepFile)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(deps, " ")
	if !strings.Contains(joined, filepath.Join(dir, "k.h")) || !strings.Contains(joined, "stddef.h") {
		t.Errorf("the dependency file lists %q; want k.h and stddef.h under their client paths", deps)
	}
	// Nothing of the job stays in Redis but blobs and the claim.
	keys, _ := store.Client().Keys(context.Background(), "offcc:e:*").Result()
	if len(keys) != 0 {
		t.Errorf("job records left behind: %q", keys)
	}
}

// TestNoWorkerTakesIt: a registered worker that takes nothing: the job
// comes back to the client after the pickup time, nothing written.
func TestNoWorkerTakesIt(t *testing.T) {
	_, store, clang := farmSetup(t)
	c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir(), Pickup: 300 * time.Millisecond})
	defer c.Close()
	info, _ := json.Marshal(WorkerInfo{Name: "ghost", Toolchain: c.Toolchain(), Slots: 1, Seen: time.Now().Add(time.Hour).UnixMilli()})
	store.Client().HSet(context.Background(), workersKey(store.Prefix()), "ghost", info)
	c.refresh()
	waitSlots(t, c, 1)
	dir := t.TempDir()
	a := deviceCompile(t, clang, dir, filepath.Join(dir, "x.o"))
	start := time.Now()
	_, err := c.Run(context.Background(), a, new(bytes.Buffer), new(bytes.Buffer))
	if !errors.Is(err, actions.ErrRunLocally) || !strings.Contains(err.Error(), "no worker took it") {
		t.Fatalf("Run = %v, want ErrRunLocally: no worker took it", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("giving the job back took %v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.o")); err == nil {
		t.Error("an output was written")
	}
	// The abandoned job is the client's: a worker that comes later does
	// not run it.
	keys, _ := store.Client().Keys(context.Background(), claimKey(store.Prefix(), "*")).Result()
	for _, k := range keys {
		if v, _ := store.Client().Get(context.Background(), k).Result(); v != clientOwner {
			t.Errorf("%s = %q, want %q", k, v, clientOwner)
		}
	}
	if len(keys) != 1 {
		t.Errorf("claims: %q, want one", keys)
	}
	// Nobody will take it: it left the queue.
	if n, _ := store.Client().XLen(context.Background(), queueKey(store.Prefix(), c.Toolchain())).Result(); n != 0 {
		t.Errorf("%d entries left in the queue", n)
	}
}

// TestRefusedJobRunsLocally: a job the client cannot ship whole is never
// sent.
func TestRefusedJobRunsLocally(t *testing.T) {
	_, clang, c := clientWithWorker(t)
	dir := t.TempDir()
	a := deviceCompile(t, clang, dir, filepath.Join(dir, "x.o"))
	a.Command = append(a.Command, "-fprofile-instrument-use=clang", "-fprofile-instrument-use-path=/etc/hostname")
	_, err := c.Run(context.Background(), a, new(bytes.Buffer), new(bytes.Buffer))
	if !errors.Is(err, actions.ErrRunLocally) || !strings.Contains(err.Error(), "does not ship") {
		t.Fatalf("Run = %v, want ErrRunLocally: does not ship", err)
	}
}

// TestAccepts: which actions the client sends.
func TestAccepts(t *testing.T) {
	_, store, clang := farmSetup(t)
	c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir()})
	defer c.Close()
	dir := filepath.Dir(clang)
	real, _ := filepath.EvalSymlinks(clang)
	dir = filepath.Dir(real)
	mk := func(kind actions.Kind, off actions.OffloadKind, cmd ...string) *actions.Action {
		return &actions.Action{Kind: kind, Offload: off, Command: cmd}
	}
	for _, tc := range []struct {
		name string
		a    *actions.Action
		want bool
	}{
		{"HIP device compile", mk(actions.DeviceCompile, actions.HIP, dir+"/clang", "-cc1"), true},
		{"backend", mk(actions.Backend, actions.OpenMP, dir+"/clang", "-cc1"), true},
		{"lld device link", mk(actions.DeviceLink, actions.HIP, dir+"/lld", "-flavor", "gnu"), true},
		{"OpenMP device compile", mk(actions.DeviceCompile, actions.OpenMP, dir+"/clang", "-cc1"), false},
		{"host link", mk(actions.HostLink, actions.None, dir+"/clang", "-cc1"), false},
		{"HIP host compile", mk(actions.Compile, actions.HIP, dir+"/clang", "-cc1"), true},
		{"plain compile", mk(actions.Compile, actions.None, dir+"/clang", "-cc1"), false},
		{"OpenMP host front end", mk(actions.HostFrontend, actions.OpenMP, dir+"/clang", "-cc1"), false},
		{"clang driver", mk(actions.DeviceLink, actions.OpenMP, dir+"/clang", "--target=amdgcn-amd-amdhsa"), false},
		{"another clang", mk(actions.Backend, actions.None, "/opt/llvm/bin/clang", "-cc1"), false},
		{"ptxas", mk(actions.DeviceAssemble, actions.CUDA, "/usr/bin/ptxas", "-m64"), false},
		{"unknown reads", &actions.Action{Kind: actions.Backend, Command: []string{dir + "/clang", "-cc1"}, UnknownReads: "-MMD"}, false},
	} {
		if got := c.Accepts(tc.a); got != tc.want {
			t.Errorf("%s: Accepts = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSlotsShareTheFarm: jobs other clients have waiting in the queue take
// from the slots a client sees; jobs workers run do not.
func TestSlotsShareTheFarm(t *testing.T) {
	_, store, clang := farmSetup(t)
	c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir()})
	defer c.Close()
	ctx := context.Background()
	info, _ := json.Marshal(WorkerInfo{Name: "big", Toolchain: c.Toolchain(), Slots: 3, Seen: time.Now().Add(time.Hour).UnixMilli()})
	store.Client().HSet(ctx, workersKey(store.Prefix()), "big", info)
	c.refresh()
	if got := c.Slots(); got != 3 {
		t.Fatalf("Slots = %d with an idle 3-slot worker, want 3", got)
	}
	for i := 0; i < 2; i++ {
		store.Client().XAdd(ctx, &redis.XAddArgs{Stream: queueKey(store.Prefix(), c.Toolchain()), Values: map[string]any{"job": "other"}})
	}
	c.refresh()
	if got := c.Slots(); got != 1 {
		t.Errorf("Slots = %d with two other clients' jobs queued, want 1", got)
	}
	for i := 0; i < 2; i++ {
		store.Client().XAdd(ctx, &redis.XAddArgs{Stream: queueKey(store.Prefix(), c.Toolchain()), Values: map[string]any{"job": "other"}})
	}
	c.refresh()
	if got := c.Slots(); got != 0 {
		t.Errorf("Slots = %d with a full farm, want 0", got)
	}
	// A worker takes three of them: one still waits.
	store.Client().XGroupCreateMkStream(ctx, queueKey(store.Prefix(), c.Toolchain()), Group, "0")
	store.Client().XReadGroup(ctx, &redis.XReadGroupArgs{Group: Group, Consumer: "big",
		Streams: []string{queueKey(store.Prefix(), c.Toolchain()), ">"}, Count: 3})
	c.refresh()
	if got := c.Slots(); got != 2 {
		t.Errorf("Slots = %d with three jobs running and one waiting, want 2", got)
	}
}

// TestComputedInclude: a header named by a macro, which the include
// scanner cannot resolve, is found by clang's own preprocessor pass and
// shipped: the worker's object is the local one.
func TestComputedInclude(t *testing.T) {
	_, clang, c := clientWithWorker(t)
	dir := t.TempDir()
	compile := func(out string) *actions.Action {
		a := deviceCompile(t, clang, dir, out)
		os.WriteFile(filepath.Join(dir, "gen.h"), []byte("int generated = 42;\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "k.c"), []byte("#define GEN \"gen.h\"\n#include GEN\nint g(void) { return generated; }\n"), 0o644)
		return a
	}
	la := compile(filepath.Join(dir, "local.o"))
	runLocally(t, la)
	if _, ok, why := c.includes.Scan(la.Command[1:], dir); ok || !strings.Contains(why, "computed") {
		t.Fatalf("the include scanner resolved a computed include (ok=%v, %q)", ok, why)
	}
	a := compile(filepath.Join(dir, "remote.o"))
	var stderr bytes.Buffer
	info, err := c.Run(context.Background(), a, new(bytes.Buffer), &stderr)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}
	if info.Worker != "w1" {
		t.Errorf("ran on %q, want w1", info.Worker)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "local.o"))
	if got, _ := os.ReadFile(filepath.Join(dir, "remote.o")); !bytes.Equal(got, want) {
		t.Error("the worker's object differs from the local one")
	}
}

// answerJobs runs an in-process stand-in for a worker that answers each
// job of the client's toolchain with answer's result entry (nil: none),
// registered as a live worker with one slot.
func answerJobs(t *testing.T, store *redisstore.Store, toolchain string, answer func(id string, job *cache.Entry) *cache.Entry) {
	t.Helper()
	rdb := store.Client()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	q := queueKey(store.Prefix(), toolchain)
	rdb.XGroupCreateMkStream(ctx, q, Group, "0")
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			info, _ := json.Marshal(WorkerInfo{Name: "stand-in", Toolchain: toolchain, Slots: 1, Seen: time.Now().UnixMilli()})
			rdb.HSet(ctx, workersKey(store.Prefix()), "stand-in", info)
			res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: Group, Consumer: "stand-in", Streams: []string{q, ">"}, Count: 1, Block: 100 * time.Millisecond}).Result()
			if err != nil {
				continue
			}
			for _, s := range res {
				for _, m := range s.Messages {
					id := m.Values["job"].(string)
					je, err := store.Get(jobEntry(id))
					if err != nil {
						continue
					}
					// Claimed as the trusted worker would: what the
					// tests reject is its result.
					rdb.SetNX(ctx, claimKey(store.Prefix(), id), makeClaim(testKeys().worker.SigningKey, id, jobSum(je), "stand-in"), 3*time.Second)
					if e := answer(id, je); e != nil {
						store.Replace(resultEntry(id), e)
					}
					rdb.RPush(ctx, doneKey(store.Prefix(), id), "stand-in")
				}
			}
		}
	}()
}

// TestClientRejectsResults: a result the client did not ask for is not
// believed, even signed by the trusted worker key: one signed for another
// job (a replay), one naming another job, toolchain or job digest. Each
// job runs locally, the rejections are counted, and one warning is given.
func TestClientRejectsResults(t *testing.T) {
	_, store, clang := farmSetup(t)
	wk := testKeys().worker.SigningKey
	toolchain := Toolchain(clang)
	forged := filepath.Join(t.TempDir(), "forged.o")
	os.WriteFile(forged, []byte("FORGED"), 0o644)
	fb, err := blobOf(forged, "o0")
	if err != nil {
		t.Fatal(err)
	}
	result := func(res Result, key cache.Sum) *cache.Entry {
		rec, _ := json.Marshal(res)
		e := &cache.Entry{Kind: kindResult, Record: rec, Blobs: []cache.Blob{fb}}
		cache.SignEntry(wk, key, e)
		return e
	}
	for _, tc := range []struct {
		name   string
		answer func(id string, je *cache.Entry) *cache.Entry
	}{
		{"signed for another job", func(id string, je *cache.Entry) *cache.Entry {
			return result(Result{Worker: "w", Job: id, Toolchain: toolchain, JobSum: jobSum(je)}, resultEntry("000000000000000000000000"))
		}},
		{"naming another job", func(id string, je *cache.Entry) *cache.Entry {
			return result(Result{Worker: "w", Job: "000000000000000000000000", Toolchain: toolchain, JobSum: jobSum(je)}, resultEntry(id))
		}},
		{"another job's digest", func(id string, je *cache.Entry) *cache.Entry {
			return result(Result{Worker: "w", Job: id, Toolchain: toolchain, JobSum: strings.Repeat("0", 64)}, resultEntry(id))
		}},
		{"another toolchain", func(id string, je *cache.Entry) *cache.Entry {
			return result(Result{Worker: "w", Job: id, Toolchain: "0123456789abcdef", JobSum: jobSum(je)}, resultEntry(id))
		}},
		{"unsigned", func(id string, je *cache.Entry) *cache.Entry {
			e := result(Result{Worker: "w", Job: id, Toolchain: toolchain, JobSum: jobSum(je)}, resultEntry(id))
			e.Signature = nil
			return e
		}},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			store.Client().FlushAll(context.Background())
			answerJobs(t, store, toolchain, tc.answer)
			var warnings []string
			var mu sync.Mutex
			c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir(),
				Warn: func(m string) { mu.Lock(); warnings = append(warnings, m); mu.Unlock() }})
			waitSlots(t, c, 1)
			dir := t.TempDir()
			for i := 0; i < 2; i++ {
				a := deviceCompile(t, clang, dir, filepath.Join(dir, "k.o"))
				var stdout, stderr bytes.Buffer
				_, err := c.Run(context.Background(), a, &stdout, &stderr)
				if !errors.Is(err, actions.ErrRunLocally) {
					t.Fatalf("Run = %v, want ErrRunLocally", err)
				}
				if got, _ := os.ReadFile(filepath.Join(dir, "k.o")); bytes.Contains(got, []byte("FORGED")) {
					t.Fatal("the forged output was written")
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if c.Rejected() != 2 || len(warnings) != 1 {
				t.Errorf("rejected %d, warnings %q; want 2 and one", c.Rejected(), warnings)
			}
		})
	}
}
