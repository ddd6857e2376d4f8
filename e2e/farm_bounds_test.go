package e2e

// The bounds a worker sets on a job that a trusted client signed but an
// attacker (a compromised client, or anyone replaying its records in
// Redis) chose: its wall time (fetching its inputs included), its inputs'
// number and bytes, what it writes, the worker's blob cache and disk, and
// replays. Each test judges by what the worker did (time, bytes, files,
// processes, its status counters), then checks that an honest job still
// runs.

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/offcc/offcc/farm"
)

// boundsTarget is one worker with bounds of a test's choosing, the
// crafted-job submitter, and a C source with its compile.
type boundsTarget struct {
	*farmTarget
	w       *farmWorker
	workDir string // the worker's --dir
}

// newBoundsTarget starts worker name with flags (which may give another
// --dir: the last one counts) on a server of its own.
func newBoundsTarget(t *testing.T, name, dir string, flags ...string) *boundsTarget {
	t.Helper()
	c := offccOnly(t, "the build farm is offcc's")
	if dir == "" {
		dir = workerDir(t)
	}
	srv := redistest.Start(t)
	w := startWorkerFlags(t, c, srv.URL, name, append(flags, "--dir", dir))
	st := waitWorkers(t, c, srv.URL, name)
	info, _ := st.worker(name)
	ft := &farmTarget{c: c, srv: srv, worker: info, jobs: newFarmJobs(t, srv.URL, info.Toolchain), dir: t.TempDir(),
		clang: filepath.Join(llvmBin, "clang"), lld: filepath.Join(llvmBin, "lld"),
		flags: []string{"-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-O2"}}
	ft.src = filepath.Join(ft.dir, "in.c")
	ft.out = filepath.Join(ft.dir, "out.o")
	ft.obj = filepath.Join(ft.dir, "local.o")
	if err := os.WriteFile(ft.src, []byte("int plus1(int x) { return x + 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmdSpec{dir: ft.dir, name: ft.clang, args: args(ft.flags, "-o", ft.obj, "-x", "c", ft.src)}.mustRun(t)
	return &boundsTarget{farmTarget: ft, w: w, workDir: dir}
}

// honest runs a well-formed compile and a link, which must succeed.
func (bt *boundsTarget) honest(t *testing.T) {
	t.Helper()
	if res, e := bt.jobs.run(t, bt.cc1(), bt.src); res.Refused != "" || res.Code != 0 || len(e.Blobs) != 1 {
		t.Errorf("an honest compile after the attack: refused %q, code %d, %d outputs\n%s", res.Refused, res.Code, len(e.Blobs), res.Stderr)
	}
	if res, e := bt.jobs.run(t, bt.link(), bt.obj); res.Refused != "" || res.Code != 0 || len(e.Blobs) != 1 {
		t.Errorf("an honest link after the attack: refused %q, code %d, %d outputs\n%s", res.Refused, res.Code, len(e.Blobs), res.Stderr)
	}
}

// left returns what is in the worker's --dir besides its blob cache, and
// the mounts beneath it: none once a job is over.
func (bt *boundsTarget) left(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(bt.workDir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	slotWork := map[string]bool{}
	for _, e := range ents {
		switch {
		case strings.HasPrefix(e.Name(), "offcc-worker-blobs-"):
		case strings.HasPrefix(e.Name(), "offcc-worker-slot-"):
			// A slot's tmpfs, mounted for the worker's life: emptied
			// after each job, its inputs gone.
			slot := filepath.Join(bt.workDir, e.Name())
			slotWork["mount "+filepath.Join(slot, "work")] = true
			in, _ := os.ReadDir(slot)
			work, _ := os.ReadDir(filepath.Join(slot, "work"))
			for _, f := range in {
				if f.Name() != "work" {
					left = append(left, e.Name()+"/"+f.Name())
				}
			}
			for _, f := range work {
				left = append(left, e.Name()+"/work/"+f.Name())
			}
		default:
			left = append(left, e.Name())
		}
	}
	for _, m := range mountsBeneath(t, bt.workDir) {
		if !slotWork[m] {
			left = append(left, m)
		}
	}
	return left
}

// blobDir returns the worker's blob cache directory.
func (bt *boundsTarget) blobDir(t *testing.T) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(bt.workDir, "offcc-worker-blobs-*"))
	if len(m) != 1 {
		t.Fatalf("blob directories of the worker: %q", m)
	}
	return m[0]
}

// mountsBeneath returns the mount points under dir, each as "mount PATH"
// (beside file names in the tests' lists of what is left).
func mountsBeneath(t *testing.T, dir string) []string {
	t.Helper()
	var m []string
	for _, p := range mountsUnder(dir) {
		m = append(m, "mount "+p)
	}
	return m
}

// peakRSS returns the peak resident memory of process pid (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// dirBytes returns the bytes of the regular files beneath dir, each inode
// once.
func dirBytes(dir string) int64 {
	seen := map[uint64]bool{}
	var n int64
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
		}
		n += fi.Size()
		return nil
	})
	return n
}

// craftedJob is a job stored in Redis, signed, not yet queued.
type craftedJob struct {
	farm.Job
	entry *cache.Entry
}

// prepare stores j (its ID, version, expiry and toolchain filled in)
// with files as its inputs, signed by the client key, without queueing it.
func (f *farmJobs) prepare(t *testing.T, j farm.Job, files ...string) craftedJob {
	t.Helper()
	return f.put(t, j, nil, files...)
}

// preload stores many small blobs in a few pipelined round trips (a
// job's entry uploads its missing blobs one by one, a few round trips
// each: over a minute for 70,000), as redisstore lays a blob of one chunk
// out: a hash with "m" = "SIZE CHUNKSIZE" and "0" = the bytes. The
// worker reads and verifies them as any other.
func (f *farmJobs) preload(t *testing.T, blobs []cache.Blob) {
	t.Helper()
	const batch = 5000
	if len(blobs) <= 1000 {
		return
	}
	ctx := context.Background()
	for i := 0; i < len(blobs); i += batch {
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, b := range blobs[i:min(i+batch, len(blobs))] {
				data, err := os.ReadFile(b.Path)
				if err != nil || len(data) > 1<<20 {
					return fmt.Errorf("preload %s: %v (%d bytes)", b.Path, err, len(data))
				}
				p.HSet(ctx, "offcc:b:"+b.Sum.String(), "m", fmt.Sprintf("%d %d", len(data), 1<<20), "0", data)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// raceBuilt reports whether the executable exe was built with -race.
func raceBuilt(exe string) bool {
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

func farmJobKey(id string) cache.Sum    { return cache.SumBytes([]byte("offcc farm job\x00" + id)) }
func farmResultKey(id string) cache.Sum { return cache.SumBytes([]byte("offcc farm result\x00" + id)) }

// queue puts job id on the toolchain's stream, as its client does.
func (f *farmJobs) queue(t *testing.T, id string) {
	t.Helper()
	err := f.rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: "offcc:farm:q:" + f.toolchain,
		Values: map[string]any{"job": id, "kind": "device-compile"}}).Err()
	if err != nil {
		t.Fatal(err)
	}
}

// result waits up to d for job id's result.
func (f *farmJobs) result(t *testing.T, id string, d time.Duration) farm.Result {
	t.Helper()
	if _, err := f.rdb.BLPop(context.Background(), d, "offcc:farm:done:"+id).Result(); err != nil {
		t.Fatalf("job %s: no result within %v: %v", id, d, err)
	}
	e, err := f.store.Get(farmResultKey(id))
	if err != nil {
		t.Fatalf("job %s: its result entry: %v", id, err)
	}
	var r farm.Result
	if err := json.Unmarshal(e.Record, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// manyFiles writes n distinct files of size bytes (at least 16) in a new
// directory and returns their paths.
func manyFiles(t *testing.T, n, size int) []string {
	t.Helper()
	dir := t.TempDir()
	paths := make([]string, n)
	buf := make([]byte, size)
	for i := range n {
		copy(buf, fmt.Sprintf("/* %12d */\n", i))
		paths[i] = filepath.Join(dir, fmt.Sprintf("h%d.h", i))
		if err := os.WriteFile(paths[i], buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// TestFarmBoundsManyInputs: a job shipping 70,000 inputs is stopped by
// the wall time while the worker fetches them (within a second or two of
// --job-wall 1s, the worker's memory bounded), and refused before any
// fetch by a worker taking fewer inputs (--job-inputs, the default); the
// next honest jobs run.
func TestFarmBoundsManyInputs(t *testing.T) {
	t.Parallel()
	bt := newBoundsTarget(t, "wall", "", "--job-wall", "1s", "--job-inputs", "100000")
	headers := manyFiles(t, 70000, 16)
	start := time.Now()
	j := bt.jobs.prepare(t, bt.cc1(), append([]string{bt.src}, headers...)...)
	size, _ := bt.jobs.rdb.StrLen(context.Background(), "offcc:e:"+farmJobKey(j.ID).String()).Result()
	t.Logf("70,001 inputs stored in %v, an entry of %d KiB", time.Since(start).Round(time.Millisecond), size>>10)
	rss0 := peakRSS(t, bt.w.cmd.Process.Pid)
	start = time.Now()
	bt.jobs.queue(t, j.ID)
	res := bt.jobs.result(t, j.ID, 30*time.Second)
	took := time.Since(start)
	rss := peakRSS(t, bt.w.cmd.Process.Pid)
	t.Logf("queued to refused in %v (fetch %d ms, work %d ms); worker peak RSS %d MiB before, %d MiB after: %s",
		took.Round(time.Millisecond), res.FetchMS, res.WorkMS, rss0>>20, rss>>20, res.Refused)
	if res.Refused == "" || !strings.Contains(res.Refused, "--job-wall") {
		t.Errorf("not stopped by its wall time: refused %q, code %d", res.Refused, res.Code)
	}
	// The worker decodes and verifies the job (some 14 MB of entry)
	// before the wall time can stop anything: a -race offcc (make test's)
	// does that several times slower, in several times the memory, and
	// on a CI machine busy with the other tests slower again (23 s seen).
	bound, work, maxRSS := 3*time.Second, int64(2000), int64(256<<20)
	if raceBuilt(bt.c.cc) {
		bound, work, maxRSS = 45*time.Second, 30000, 1<<30
	}
	if took > bound || res.WorkMS > work {
		t.Errorf("stopped %v after queueing (worked %d ms), with --job-wall 1s", took, res.WorkMS)
	}
	// Told to take 100,000 inputs, the worker decodes the job: that
	// much memory, and no more as it fetches.
	if rss > maxRSS {
		t.Errorf("the worker's peak RSS reached %d MiB", rss>>20)
	}
	// The fetch stopped: most inputs never reached the worker.
	if ents, _ := os.ReadDir(bt.blobDir(t)); len(ents) > 35000 {
		t.Errorf("the worker fetched %d of the 70,001 inputs with --job-wall 1s", len(ents))
	}
	if left := bt.left(t); len(left) != 0 {
		t.Errorf("left in the worker's directory: %q", left)
	}
	bt.honest(t)

	// A worker taking the default 20,000 inputs: refused at once.
	bt.w.cmd.Process.Signal(syscall.SIGTERM)
	if !bt.w.wait(20 * time.Second) {
		t.Fatal("the first worker did not stop")
	}
	dir := workerDir(t)
	w2 := startWorkerFlags(t, bt.c, bt.srv.URL, "inputs", []string{"--dir", dir})
	waitWorkers(t, bt.c, bt.srv.URL, "inputs")
	bt.w, bt.workDir = w2, dir
	j = bt.jobs.prepare(t, bt.cc1(), append([]string{bt.src}, headers...)...)
	start = time.Now()
	bt.jobs.queue(t, j.ID)
	res = bt.jobs.result(t, j.ID, 30*time.Second)
	took = time.Since(start)
	rss = peakRSS(t, w2.cmd.Process.Pid)
	t.Logf("queued to refused in %v, worker peak RSS %d MiB: %s", took.Round(time.Millisecond), rss>>20, res.Refused)
	if rss > 64<<20 {
		t.Errorf("the worker's peak RSS reached %d MiB refusing the job", rss>>20)
	}
	if !strings.Contains(res.Refused, "--job-inputs") || took > 3*time.Second {
		t.Errorf("70,001 inputs against the default --job-inputs: refused %q after %v", res.Refused, took)
	}
	if ents, _ := os.ReadDir(bt.blobDir(t)); len(ents) != 0 {
		t.Errorf("the worker fetched %d blobs of a job it refused", len(ents))
	}
	bt.honest(t)
}

// TestFarmBoundsInputBytes: a job whose inputs pass --job-input-bytes is
// refused before anything is fetched.
func TestFarmBoundsInputBytes(t *testing.T) {
	t.Parallel()
	bt := newBoundsTarget(t, "bytes", "", "--job-input-bytes", "1M")
	big := manyFiles(t, 3, 512<<10)
	j := bt.jobs.prepare(t, bt.cc1(), append([]string{bt.src}, big...)...)
	start := time.Now()
	bt.jobs.queue(t, j.ID)
	res := bt.jobs.result(t, j.ID, 30*time.Second)
	took := time.Since(start)
	t.Logf("1.5 MiB of inputs refused %v after queueing: %s", took.Round(time.Millisecond), res.Refused)
	if !strings.Contains(res.Refused, "--job-input-bytes") || took > time.Second || res.FetchMS != 0 {
		t.Errorf("refused %q after %v (fetch %d ms)", res.Refused, took, res.FetchMS)
	}
	if ents, _ := os.ReadDir(bt.blobDir(t)); len(ents) != 0 {
		t.Errorf("the worker fetched %d blobs of a job it refused", len(ents))
	}
	if left := bt.left(t); len(left) != 0 {
		t.Errorf("left in the worker's directory: %q", left)
	}
	bt.honest(t)
}

// TestFarmBoundsDisk: a real compile whose object is larger than
// --job-disk, and one writing more files than --job-files, fail and
// leave nothing behind (no file, no mount); honest jobs run after.
func TestFarmBoundsDisk(t *testing.T) {
	t.Parallel()
	bt := newBoundsTarget(t, "disk", "", "--job-disk", "1M", "--job-files", "1")
	bigSrc := filepath.Join(bt.dir, "big.c")
	// A 3 MiB object: initialised data.
	if err := os.WriteFile(bigSrc, []byte("char big[3 << 20] = {1};\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, e := bt.jobs.run(t, farm.Job{Tool: "clang", ToolID: farmToolID(bt.clang), Dir: bt.dir, Outputs: []string{bt.out},
		Args: args(bt.flags, "-o", bt.out, "-x", "c", bigSrc)}, bigSrc)
	t.Logf("a 3 MiB object: refused %q, code %d, %d outputs; stderr %s", res.Refused, res.Code, len(e.Blobs), farmHead(res.Stderr))
	if !strings.Contains(res.Refused, "--job-disk") || len(e.Blobs) != 0 {
		t.Errorf("a 3 MiB object with --job-disk 1M: refused %q, code %d, %d outputs", res.Refused, res.Code, len(e.Blobs))
	}
	if left := bt.left(t); len(left) != 0 {
		t.Errorf("left in the worker's directory: %q", left)
	}
	// Two outputs (an object and its dependency file) where one file fits.
	dep := filepath.Join(bt.dir, "out.d")
	j := bt.cc1("-dependency-file", dep, "-MT", "out.o")
	j.Outputs = append(j.Outputs, dep)
	res, e = bt.jobs.run(t, j, bt.src)
	t.Logf("two files: refused %q, code %d; stderr %s", res.Refused, res.Code, farmHead(res.Stderr))
	if res.Refused == "" && res.Code == 0 || len(e.Blobs) != 0 {
		t.Errorf("two files with --job-files 1: refused %q, code %d, %d outputs", res.Refused, res.Code, len(e.Blobs))
	}
	if left := bt.left(t); len(left) != 0 {
		t.Errorf("left in the worker's directory: %q", left)
	}
	bt.honest(t)
}

// TestFarmBoundsUndeclared: a compile that writes a file besides its
// declared outputs (clang's -ftime-trace, next to the object) is refused,
// returns no output and leaves nothing.
func TestFarmBoundsUndeclared(t *testing.T) {
	t.Parallel()
	bt := newBoundsTarget(t, "undeclared", "")
	res, e := bt.jobs.run(t, bt.cc1("-ftime-trace"), bt.src)
	t.Logf("refused %q, code %d", res.Refused, res.Code)
	switch {
	case strings.Contains(res.Refused, "is not run on workers"), strings.Contains(res.Refused, "has no option"):
		t.Skip("check refuses -ftime-trace: the undeclared-file check is tested with a fake sandbox (farm.TestWorkerRefusesUndeclaredFiles)")
	case !strings.Contains(res.Refused, "undeclared files: o0-out.json") || len(e.Blobs) != 0:
		t.Errorf("a job writing an undeclared file: refused %q, code %d, %d outputs", res.Refused, res.Code, len(e.Blobs))
	}
	if left := bt.left(t); len(left) != 0 {
		t.Errorf("left in the worker's directory: %q", left)
	}
	bt.honest(t)
}

// TestFarmBoundsBlobFlood: 1,000 distinct 16 KiB inputs against a small
// --blob-cache leave the cache within its bound; as root, on a 48 MiB
// file system with --min-free 40M, the worker empties its cache and
// refuses the job rather than go below the floor. Honest jobs run after.
func TestFarmBoundsBlobFlood(t *testing.T) {
	t.Parallel()
	flood := manyFiles(t, 1000, 16<<10)
	t.Run("cache", func(t *testing.T) {
		bt := newBoundsTarget(t, "flood", "", "--blob-cache", "1M")
		j := bt.jobs.prepare(t, bt.cc1(), append([]string{bt.src}, flood...)...)
		stop := make(chan struct{})
		peak := make(chan int64)
		go func() { // the --dir's bytes, as the job runs
			var most int64
			for {
				select {
				case <-stop:
					peak <- most
					return
				case <-time.After(5 * time.Millisecond):
					most = max(most, dirBytes(bt.workDir))
				}
			}
		}()
		bt.jobs.queue(t, j.ID)
		res := bt.jobs.result(t, j.ID, time.Minute)
		close(stop)
		most := <-peak
		cached := dirBytes(bt.blobDir(t))
		t.Logf("16 MiB of inputs: refused %q, code %d; --dir peaked at %d KiB, the cache holds %d KiB after", res.Refused, res.Code, most>>10, cached>>10)
		if res.Refused != "" || res.Code != 0 {
			t.Errorf("the job did not run: refused %q, code %d\n%s", res.Refused, res.Code, res.Stderr)
		}
		if cached > 1<<20 {
			t.Errorf("the cache holds %d KiB, more than --blob-cache 1M", cached>>10)
		}
		if most > 18<<20 {
			t.Errorf("the worker's directory reached %d KiB for 16 MiB of inputs and a 1 MiB cache", most>>10)
		}
		if left := bt.left(t); len(left) != 0 {
			t.Errorf("left in the worker's directory: %q", left)
		}
		bt.honest(t)
	})
	t.Run("floor", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("mounting a small file system for --dir takes root")
		}
		dir := workerDir(t)
		if err := syscall.Mount("offcc-test", dir, "tmpfs", 0, "size=48m,mode=0711"); err != nil {
			t.Fatalf("mount: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
		bt := newBoundsTarget(t, "floor", dir, "--min-free", "40M")
		j := bt.jobs.prepare(t, bt.cc1(), append([]string{bt.src}, flood...)...)
		stop := make(chan struct{})
		low := make(chan int64)
		go func() { // the least free space, as the job runs
			least := int64(1 << 62)
			for {
				var st syscall.Statfs_t
				if syscall.Statfs(dir, &st) == nil {
					least = min(least, int64(st.Bavail)*st.Bsize)
				}
				select {
				case <-stop:
					low <- least
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		bt.jobs.queue(t, j.ID)
		res := bt.jobs.result(t, j.ID, time.Minute)
		close(stop)
		least := <-low
		t.Logf("16 MiB of inputs on 48 MiB with 40 MiB kept free: refused %q; at least %d KiB stayed free", res.Refused, least>>10)
		if !strings.Contains(res.Refused, "--min-free") {
			t.Errorf("not refused for the floor: refused %q, code %d", res.Refused, res.Code)
		}
		if least < 40<<20 {
			t.Errorf("free space went down to %d KiB, below --min-free 40M", least>>10)
		}
		if left := bt.left(t); len(left) != 0 {
			t.Errorf("left in the worker's directory: %q", left)
		}
		bt.honest(t)
	})
}

// TestFarmBoundsReplay: a signed job put back on the stream after it ran
// is not run again (the worker's done count stays, no result comes
// back), nor is an expired job or one expiring too far ahead; a link
// without -flavor runs (the worker runs lld as ld.lld).
func TestFarmBoundsReplay(t *testing.T) {
	t.Parallel()
	bt := newBoundsTarget(t, "replay", "")
	ctx := context.Background()
	j := bt.jobs.prepare(t, bt.cc1(), bt.src)
	bt.jobs.queue(t, j.ID)
	if res := bt.jobs.result(t, j.ID, 30*time.Second); res.Refused != "" || res.Code != 0 {
		t.Fatalf("the first run: refused %q, code %d", res.Refused, res.Code)
	}
	st := waitStatus(t, bt.c, bt.srv.URL, "the worker's done count is not 1", 10*time.Second, func(st farmStatusDoc) bool {
		w, _ := st.worker("replay")
		return w.Done == 1
	})
	before, _ := st.worker("replay")
	// The attacker removes the result and the claim, and puts the signed
	// job back.
	if err := bt.jobs.rdb.Del(ctx, "offcc:e:"+farmResultKey(j.ID).String(), "offcc:farm:done:"+j.ID, "offcc:farm:claim:"+j.ID).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := bt.jobs.store.Get(farmResultKey(j.ID)); err == nil {
		t.Fatal("the result entry is still there")
	}
	bt.jobs.queue(t, j.ID)
	st = waitStatus(t, bt.c, bt.srv.URL, "the worker did not count the replay", 10*time.Second, func(st farmStatusDoc) bool {
		w, _ := st.worker("replay")
		return w.Refused == before.Refused+1
	})
	after, _ := st.worker("replay")
	if after.Done != before.Done || after.Failed != before.Failed {
		t.Errorf("the replay ran: done %d -> %d, failed %d -> %d", before.Done, after.Done, before.Failed, after.Failed)
	}
	if _, err := bt.jobs.store.Get(farmResultKey(j.ID)); err == nil {
		t.Errorf("the replay stored a result")
	}
	if n, _ := bt.jobs.rdb.LLen(ctx, "offcc:farm:done:"+j.ID).Result(); n != 0 {
		t.Errorf("the replay was announced done")
	}
	if left := bt.left(t); len(left) != 0 {
		t.Errorf("left in the worker's directory: %q", left)
	}

	for _, tc := range []struct {
		name    string
		expires time.Time
		want    string
	}{
		{"expired", time.Now().Add(-time.Minute), "expired"},
		{"too far ahead", time.Now().Add(2 * time.Hour), "a worker accepts"},
	} {
		j := bt.cc1()
		j.Expires = tc.expires.UnixMilli()
		if res, _ := bt.jobs.run(t, j, bt.src); !strings.Contains(res.Refused, tc.want) {
			t.Errorf("a job %s: refused %q, code %d", tc.name, res.Refused, res.Code)
		}
	}
	// lld's ELF driver by its name: no -flavor needed.
	link := farm.Job{Tool: "lld", ToolID: farmToolID(bt.lld), Dir: bt.dir, Outputs: []string{bt.out},
		Args: []string{"-shared", "-o", bt.out, bt.obj}}
	if res, e := bt.jobs.run(t, link, bt.obj); res.Refused != "" || res.Code != 0 || len(e.Blobs) != 1 {
		t.Errorf("a link without -flavor: refused %q, code %d\n%s", res.Refused, res.Code, res.Stderr)
	}
	bt.honest(t)
}

// TestFarmBoundsStale: a worker killed mid-job leaves its job directory
// and tmpfs; the next worker on the same --dir removes them at its start.
func TestFarmBoundsStale(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("per-job tmpfs mounts take root")
	}
	bt := newBoundsTarget(t, "stale", "")
	// A job that takes a while: 20,000 inputs to fetch.
	j := bt.jobs.prepare(t, bt.cc1(), append([]string{bt.src}, manyFiles(t, 19000, 16)...)...)
	bt.jobs.queue(t, j.ID)
	// The job runs once its inputs' directory is beside its slot's tmpfs.
	deadline := time.Now().Add(20 * time.Second)
	for m, _ := filepath.Glob(filepath.Join(bt.workDir, "offcc-worker-slot-*", "in")); len(m) == 0; m, _ = filepath.Glob(filepath.Join(bt.workDir, "offcc-worker-slot-*", "in")) {
		if time.Now().After(deadline) {
			t.Fatal("the job never started")
		}
		time.Sleep(time.Millisecond)
	}
	dead := fmt.Sprintf("-%d-", bt.w.cmd.Process.Pid)
	bt.w.cmd.Process.Kill()
	bt.w.wait(10 * time.Second)
	// Its job is not to run again when the next worker reclaims it.
	bt.jobs.rdb.Del(context.Background(), "offcc:e:"+farmJobKey(j.ID).String())
	// deadOnes lists what the killed worker made that is still there:
	// its directories, and the tmpfs mounted in them.
	deadOnes := func() []string {
		var l []string
		ents, _ := os.ReadDir(bt.workDir)
		for _, e := range ents {
			if strings.Contains(e.Name(), dead) {
				l = append(l, e.Name())
			}
		}
		for _, m := range mountsBeneath(t, bt.workDir) {
			if strings.Contains(m, dead) {
				l = append(l, m)
			}
		}
		return l
	}
	left := deadOnes()
	if len(mountsBeneath(t, bt.workDir)) == 0 || len(left) == 0 {
		t.Fatalf("the killed worker left nothing: %q", left)
	}
	t.Logf("left by the killed worker: %q", left)
	startWorkerFlags(t, bt.c, bt.srv.URL, "stale2", []string{"--dir", bt.workDir})
	waitWorkers(t, bt.c, bt.srv.URL, "stale2")
	if left := deadOnes(); len(left) != 0 {
		t.Errorf("left after the next worker started: %q", left)
	}
	if left := bt.left(t); len(left) != 0 {
		t.Errorf("the new worker's directory holds: %q", left)
	}
	if m, _ := filepath.Glob(filepath.Join(bt.workDir, "offcc-worker-blobs-*")); len(m) != 1 {
		t.Errorf("blob directories: %q, want the new worker's alone", m)
	}
}
