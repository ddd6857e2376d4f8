package farm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/internal/membudget"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/trust"
	"github.com/redis/go-redis/v9"
)

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Name identifies the worker (default: host name and process ID).
	Name string
	// Clang is the clang the worker runs; lld is taken from its
	// directory.
	Clang string
	// Release is the LLVM major version of Clang (toolchain.LLVM.Major):
	// the worker checks each job's command line with that release's
	// option tables (see ReleaseTables). 0 is the release found in
	// Clang's directory.
	Release int
	// CUDA is the directory of the CUDA toolkit's ptxas, fatbinary and
	// nvlink the worker runs (default: that of the ptxas on PATH, if
	// any; see ToolPath); NoCUDA runs none. The Sandbox must allow
	// them as it allows clang and lld.
	CUDA   string
	NoCUDA bool
	// Slots is how many jobs run at once (default 1).
	Slots int
	// Memory is what the worker's jobs may use together, in bytes, and
	// MemorySource where that comes from, for status (default: what
	// discoverMemory finds); a job is taken only while its expected peak
	// (Job.Peak, else Memory/Slots) fits beside those running.
	Memory       int64
	MemorySource string
	// Dir is where job directories are made (default os.TempDir()).
	Dir string
	// Lease is how long a job stays the worker's without a renewal
	// (default 3s); renewed every Lease/3.
	Lease time.Duration
	// JobTimeout bounds one job's run (default 10 minutes).
	JobTimeout time.Duration
	// BlobCache bounds the worker's copies of fetched inputs (default 1 GiB).
	BlobCache int64
	// NoTmpfs leaves jobs' working directories plain directories that
	// the worker measures, even as root (OFFCC_SANDBOX_DISABLE=tmpfs,
	// for benchmarks and debugging).
	NoTmpfs bool
	// MaxInputs and MaxInputBytes bound a job's inputs, their number and
	// their bytes together, checked before any is fetched (defaults
	// 20,000 and 1 GiB).
	MaxInputs     int
	MaxInputBytes int64
	// JobDisk and JobFiles bound a job's working directory, the only one
	// it writes: its bytes and its files and directories (defaults 1 GiB
	// and 256). A worker that is root mounts a tmpfs of that size per
	// job; another one measures the directory while the job runs.
	JobDisk  int64
	JobFiles int
	// MinFree is the space the blob cache and the outputs copied out of
	// jobs leave free on the file system of Dir (default 1 GiB; negative:
	// none).
	MinFree int64
	// Sandbox runs each job confined (see NewSandbox); required.
	Sandbox JobSandbox
	// Keys are the worker's signing key (its results) and the clients it
	// trusts (their jobs); see trust.Settings.
	Keys *trust.Settings
	// InsecureUnsigned runs jobs that no trusted client signed and
	// stores unsigned results: for a farm whose Redis only trusted
	// machines can write. It is announced in the registry.
	InsecureUnsigned bool
	// Log, when not nil, receives a line per job and event.
	Log *log.Logger
}

// JobSandbox confines a worker's jobs: *Sandbox is the real one.
type JobSandbox interface {
	// Layers names the confinement in use; none means jobs run
	// unconfined (--insecure-no-sandbox).
	Layers() []string
	// Command returns the command running tool with args as one job of
	// worker slot slot, in jobDir, which it alone may write, reading the
	// readOnly directories (in jobDir or beside it) but never writing
	// them.
	Command(ctx context.Context, slot int, jobDir string, readOnly []string, tool string, args []string, env []string) (*exec.Cmd, error)
	// CheckDir returns why jobs made in dir could not run, or nil.
	CheckDir(dir string) error
}

// maxCapture is the most of a job's stdout, and of its stderr, that a
// result carries: the rest is cut, with a note.
const maxCapture = 1 << 20

// maxJobRecord bounds the job record a worker reads (a job's command line
// and file list).
const maxJobRecord = 8 << 20

// Worker is the daemon of "offcc worker": it announces itself, takes jobs
// for its toolchain from the stream, runs them and stores their results.
type Worker struct {
	store     *redisstore.Store
	rdb       *redis.Client
	opt       WorkerOptions
	toolchain string
	// tables are the option tables of the release of opt.Clang, which
	// check the jobs' command lines.
	tables *options.Tables
	// cuda is the identity of the CUDA toolkit the worker runs (see
	// cudaToolchainOf), "" for none; cudaDir its directory.
	cuda    string
	cudaDir string
	tools   map[string]string // tool name -> path
	toolIDs map[string]string // tool name -> identity digest
	host    string
	started time.Time
	blobs   *blobCache // fetched inputs, by digest
	mem     *memoryGate
	seen    seenJobs // the jobs run, against replays
	// tmpfs: each job's working directory is a tmpfs (else why not).
	tmpfs   bool
	noTmpfs error
	// slotDirs hold the slots' tmpfs (work), by slot, while w.tmpfs:
	// see newSlotJobDir.
	slotDirs []*jobDir

	// handling holds the stream entries (queue and entry ID) this
	// worker is handling now, which reclaim leaves alone: a job running
	// longer than two leases is still pending in its stream.
	handling sync.Map

	running               atomic.Int32
	done, refused, failed atomic.Int64
	draining              atomic.Bool
}

// NewWorker returns a worker serving jobs from store's server. A release
// of LLVM offcc has no option tables of is an error.
func NewWorker(store *redisstore.Store, opt WorkerOptions) (*Worker, error) {
	if opt.Slots < 1 {
		opt.Slots = 1
	}
	if opt.Lease <= 0 {
		opt.Lease = 3 * time.Second
	}
	if opt.JobTimeout <= 0 {
		opt.JobTimeout = 10 * time.Minute
	}
	if opt.Dir == "" {
		opt.Dir = os.TempDir()
	}
	if opt.BlobCache <= 0 {
		opt.BlobCache = 1 << 30
	}
	opt.MaxInputs = orDefault(opt.MaxInputs, defaultJobInputs)
	opt.MaxInputBytes = orDefault(opt.MaxInputBytes, defaultJobInputBytes)
	opt.JobDisk = orDefault(opt.JobDisk, defaultJobDisk)
	opt.JobFiles = orDefault(opt.JobFiles, defaultJobFiles)
	if opt.MinFree == 0 {
		opt.MinFree = defaultMinFree
	}
	if opt.Memory <= 0 {
		opt.Memory, opt.MemorySource = discoverMemory()
	}
	host, _ := os.Hostname()
	if opt.Name == "" {
		opt.Name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if strings.ContainsAny(opt.Name, " \t\n") || opt.Name == clientOwner {
		return nil, fmt.Errorf("bad worker name %q", opt.Name)
	}
	if opt.Sandbox == nil {
		return nil, errors.New("no sandbox for the jobs")
	}
	if err := opt.Sandbox.CheckDir(opt.Dir); err != nil {
		return nil, err
	}
	if opt.Keys == nil {
		opt.Keys = &trust.Settings{}
	}
	if !opt.InsecureUnsigned {
		switch {
		case opt.Keys.SigningKey == nil:
			return nil, fmt.Errorf("no signing key for the results (%s or --signing-key; offcc key generate NAME makes one), and not --insecure-unsigned", trust.EnvSigningKey)
		case opt.Keys.Clients.Len() == 0:
			return nil, fmt.Errorf("no trusted client keys (%s or --trusted-clients), and not --insecure-unsigned", trust.EnvClients)
		}
	}
	w := &Worker{store: store, rdb: store.Client(), opt: opt, host: host, started: time.Now(),
		tools: map[string]string{}, mem: newMemoryGate(opt.Memory)}
	for _, t := range llvmToolNames {
		p := ToolPath(opt.Clang, t)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("the toolchain at %s has no %s", filepath.Dir(p), filepath.Base(p))
		}
		w.tools[t] = p
	}
	w.toolIDs, w.toolchain = toolchainOf(opt.Clang)
	tables, err := ReleaseTables(opt.Clang, opt.Release)
	if err != nil {
		return nil, err
	}
	w.tables = tables
	if err := w.findCUDA(); err != nil {
		return nil, err
	}
	return w, nil
}

// findCUDA sets up the worker's CUDA toolkit: opt.CUDA's, else that of
// the ptxas on PATH, unless opt.NoCUDA. A toolkit given must have all of
// cudaTools; one found on PATH without them all is none.
func (w *Worker) findCUDA() error {
	if w.opt.NoCUDA {
		return nil
	}
	dir := w.opt.CUDA
	if dir == "" {
		dir = cudaDirOnPath()
	}
	if dir == "" {
		return nil
	}
	paths := map[string]string{}
	for _, t := range cudaTools {
		p := cudaToolPath(dir, t)
		if p == "" {
			if w.opt.CUDA != "" {
				return fmt.Errorf("the CUDA toolkit at %s has no %s", dir, t)
			}
			return nil
		}
		paths[t] = p
	}
	ids, tc := cudaToolchainOf(dir)
	for t, p := range paths {
		w.tools[t], w.toolIDs[t] = p, ids[t]
	}
	w.cuda, w.cudaDir = tc, dir
	return nil
}

// toolchainOfTool returns the identity of the toolchain the worker runs
// tool from: its LLVM's, or its CUDA toolkit's ("" for none).
func (w *Worker) toolchainOfTool(tool string) string {
	if isCUDATool(tool) {
		return w.cuda
	}
	return w.toolchain
}

// queues returns the worker's job streams: its LLVM toolchain's, then its
// CUDA toolkit's if it has one.
func (w *Worker) queues() []string {
	q := []string{queueKey(w.prefix(), w.toolchain)}
	if w.cuda != "" {
		q = append(q, queueKey(w.prefix(), w.cuda))
	}
	return q
}

// orDefault returns v, or def when v is not positive.
func orDefault[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// toolExec names the executable a worker runs for a tool, where it is not
// the tool's name: lld as ld.lld, whose name selects lld's ELF driver.
var toolExec = map[string]string{"lld": "ld.lld"}

// ToolPath returns the executable a worker with clang at clang runs for
// tool (one of Tools): ld.lld for lld, in the directory of clang after
// symbolic links. The tool's identity (toolchainOf) is that of the file it
// leads to. For a CUDA tool (ptxas, fatbinary, nvlink) it is the one in
// the directory of the ptxas on PATH, as a worker without
// WorkerOptions.CUDA finds it, or "" where there is none: a sandbox leaves
// such a tool out (SandboxOptions.Tools).
func ToolPath(clang, tool string) string {
	if isCUDATool(tool) {
		return cudaToolPath(cudaDirOnPath(), tool)
	}
	name := tool
	if e, ok := toolExec[tool]; ok {
		name = e
	}
	return filepath.Join(toolDir(clang), name)
}

// Toolchain returns the identity of the toolchain the worker serves.
func (w *Worker) Toolchain() string { return w.toolchain }

// Name returns the worker's name.
func (w *Worker) Name() string { return w.opt.Name }

func (w *Worker) logf(format string, args ...any) {
	if w.opt.Log != nil {
		w.opt.Log.Printf(format, args...)
	}
}

func (w *Worker) prefix() string { return w.store.Prefix() }

// Serve takes and runs jobs until ctx is done, then drains: running jobs
// finish (their results are stored), no new ones are taken, and the
// worker leaves the registry. It returns an error only when the server
// cannot be reached at the start.
func (w *Worker) Serve(ctx context.Context) error {
	bg := context.Background()
	qs := w.queues()
	for _, q := range qs {
		cctx, cancel := context.WithTimeout(bg, 5*time.Second)
		err := w.rdb.XGroupCreateMkStream(cctx, q, Group, "0").Err()
		cancel()
		if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
			return fmt.Errorf("build farm %s: %s", w.store.Name(), redisstore.Describe(err))
		}
	}
	if n, err := removeStale(w.opt.Dir); err != nil {
		w.logf("worker %s: cannot remove what a worker that died left in %s: %v", w.opt.Name, w.opt.Dir, err)
	} else if n > 0 {
		w.logf("worker %s: removed %d job directories, blob caches and outputs of workers that died from %s", w.opt.Name, n, w.opt.Dir)
	}
	blobDir, err := os.MkdirTemp(w.opt.Dir, fmt.Sprintf("%s%d-", blobDirPrefix, os.Getpid()))
	if err != nil {
		return fmt.Errorf("cannot make the worker's blob directory: %v", err)
	}
	defer os.RemoveAll(blobDir)
	w.blobs = newBlobCache(w.store, blobDir, w.opt.BlobCache, w.opt.MinFree)
	w.noTmpfs = canMountTmpfs(w.opt.Dir)
	if w.opt.NoTmpfs {
		w.noTmpfs = errors.New("switched off by OFFCC_SANDBOX_DISABLE")
	}
	w.tmpfs = w.noTmpfs == nil
	if w.tmpfs {
		// One tmpfs per slot, the reclaimer's (slot Slots) too.
		for range w.opt.Slots + 1 {
			sd, err := newNamedJobDir(w.opt.Dir, slotDirPrefix, true, w.opt.JobDisk, w.opt.JobFiles)
			if err != nil {
				w.tmpfs, w.noTmpfs = false, err
				break
			}
			os.Remove(sd.in) // made for each job
			w.slotDirs = append(w.slotDirs, sd)
		}
		defer func() {
			for _, sd := range w.slotDirs {
				sd.remove()
			}
		}()
	}
	// Without bubblewrap's read-only mount of the inputs, a job could
	// write the cached copy it was given: every reuse is checked.
	w.blobs.verify = !w.hasLayer("bubblewrap")
	w.announce(bg)
	w.logf("worker %s: serving toolchain %s (%s, LLVM %d) with %d slots on %s", w.opt.Name, w.toolchain, w.opt.Clang, w.tables.Major, w.opt.Slots, w.store.Name())
	if w.cuda != "" {
		w.logf("worker %s: serving CUDA toolkit %s (ptxas, fatbinary, nvlink in %s)", w.opt.Name, w.cuda, w.cudaDir)
	}
	if w.opt.Memory > 0 {
		w.logf("worker %s: jobs may use %d MiB together (%s)", w.opt.Name, w.opt.Memory>>20, w.opt.MemorySource)
	}
	if layers := w.opt.Sandbox.Layers(); len(layers) > 0 {
		w.logf("worker %s: jobs run confined by %s", w.opt.Name, strings.Join(layers, " and "))
	} else {
		w.logf("worker %s: INSECURE: jobs run unconfined (--insecure-no-sandbox)", w.opt.Name)
	}
	w.logBounds()
	if w.opt.InsecureUnsigned {
		w.logf("worker %s: INSECURE: runs jobs no trusted client signed (--insecure-unsigned)", w.opt.Name)
	} else {
		w.logf("worker %s: runs jobs signed by %s; signs results as %s (%s)", w.opt.Name,
			strings.Join(w.opt.Keys.Clients.Names(), ", "), w.opt.Keys.SigningKey.Name, w.opt.Keys.SigningKey.ID)
	}

	stopAnnounce := make(chan struct{})
	var annWG sync.WaitGroup
	annWG.Add(1)
	go func() {
		defer annWG.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopAnnounce:
				return
			case <-t.C:
				w.announce(bg)
			}
		}
	}()

	var wg sync.WaitGroup
	for i := 0; i < w.opt.Slots; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.slot(ctx, qs, i)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.reclaim(ctx, qs, w.opt.Slots) // a slot of its own
	}()
	<-ctx.Done()
	w.draining.Store(true)
	w.announce(bg)
	w.logf("worker %s: draining (%d running)", w.opt.Name, w.running.Load())
	wg.Wait()
	close(stopAnnounce)
	annWG.Wait()
	cctx, cancel := context.WithTimeout(bg, 2*time.Second)
	w.rdb.HDel(cctx, workersKey(w.prefix()), w.opt.Name)
	for _, q := range qs {
		w.rdb.XGroupDelConsumer(cctx, q, Group, w.opt.Name)
	}
	cancel()
	w.logf("worker %s: stopped after %d jobs", w.opt.Name, w.done.Load())
	return nil
}

// hasLayer reports whether the sandbox has the named layer.
func (w *Worker) hasLayer(name string) bool {
	for _, l := range w.opt.Sandbox.Layers() {
		if l == name {
			return true
		}
	}
	return false
}

// insecure lists what the worker runs without: "no-sandbox",
// "unsigned".
func (w *Worker) insecure() []string {
	var in []string
	if len(w.opt.Sandbox.Layers()) == 0 {
		in = append(in, "no-sandbox")
	}
	if w.opt.InsecureUnsigned {
		in = append(in, "unsigned")
	}
	return in
}

// announce writes the worker's registration.
func (w *Worker) announce(ctx context.Context) {
	info := WorkerInfo{Name: w.opt.Name, Host: w.host, PID: os.Getpid(), Toolchain: w.toolchain,
		LLVM: w.opt.Clang, CUDA: w.cuda, CUDAPath: w.cudaDir, Slots: w.opt.Slots, Running: int(w.running.Load()),
		Done: w.done.Load(), Refused: w.refused.Load(), Failed: w.failed.Load(),
		Draining: w.draining.Load(), Started: w.started.UnixMilli(), Seen: time.Now().UnixMilli(),
		Sandbox: w.opt.Sandbox.Layers(), Insecure: w.insecure(),
		Memory: w.opt.Memory, MemorySource: w.opt.MemorySource, Reserved: w.mem.load()}
	if k := w.opt.Keys.SigningKey; k != nil {
		info.Key = k.Name + " " + k.ID
	}
	data, _ := json.Marshal(info)
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	w.rdb.HSet(cctx, workersKey(w.prefix()), w.opt.Name, data)
}

// slot takes one job at a time from the streams qs until ctx is done, as
// worker slot n. A read of several streams may deliver an entry of each:
// the slot runs the first and puts the others back at the end of their
// streams, for another slot or worker.
func (w *Worker) slot(ctx context.Context, qs []string, n int) {
	streams := slices.Clone(qs)
	for range qs {
		streams = append(streams, ">")
	}
	for ctx.Err() == nil {
		res, err := w.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: Group, Consumer: w.opt.Name, Streams: streams,
			Count: 1, Block: time.Second,
		}).Result()
		if err != nil {
			if !errors.Is(err, redis.Nil) && ctx.Err() == nil {
				if strings.Contains(err.Error(), "NOGROUP") {
					cctx, cancel := context.WithTimeout(context.Background(), time.Second)
					for _, q := range qs {
						w.rdb.XGroupCreateMkStream(cctx, q, Group, "0")
					}
					cancel()
				}
				time.Sleep(200 * time.Millisecond)
			}
			continue
		}
		taken := false
		for _, s := range res {
			for _, m := range s.Messages {
				if taken {
					w.putBack(s.Stream, m)
					continue
				}
				taken = true
				if freed := w.handle(s.Stream, m, n); freed != nil {
					// Not taken for want of memory: read no more
					// until a running job ends.
					select {
					case <-freed:
					case <-ctx.Done():
					}
				}
			}
		}
	}
}

// putBack puts the stream entry m of q, delivered to this worker, back at
// the end of q, unless its client took its job back meanwhile.
func (w *Worker) putBack(q string, m redis.XMessage) {
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	id, _ := m.Values["job"].(string)
	if validJobID(id) && w.rdb.Exists(cctx, claimKey(w.prefix(), id)).Val() == 0 {
		if err := w.rdb.XAdd(cctx, &redis.XAddArgs{Stream: q, Values: m.Values}).Err(); err != nil {
			// Lost: its client takes it back after the pickup time.
			w.logf("worker %s: job %s: cannot put it back: %s", w.opt.Name, id, redisstore.Describe(err))
		}
	}
	w.rdb.XAck(cctx, q, Group, m.ID)
	w.rdb.XDel(cctx, q, m.ID)
}

// reclaim takes over stream entries left pending by workers that died
// (XAUTOCLAIM after two leases idle) and handles them like new ones: the
// claim key decides whether anyone still wants them.
func (w *Worker) reclaim(ctx context.Context, qs []string, n int) {
	t := time.NewTicker(w.opt.Lease)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, q := range qs {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			msgs, _, err := w.rdb.XAutoClaim(cctx, &redis.XAutoClaimArgs{
				Stream: q, Group: Group, Consumer: w.opt.Name,
				MinIdle: 2 * w.opt.Lease, Start: "0-0", Count: 8,
			}).Result()
			cancel()
			if err != nil {
				continue
			}
			for _, m := range msgs {
				if ctx.Err() != nil {
					return
				}
				if _, mine := w.handling.Load(q + " " + m.ID); mine {
					continue // this worker's, still running
				}
				w.logf("worker %s: reclaimed stream entry %s", w.opt.Name, m.ID)
				w.handle(q, m, n)
			}
		}
	}
}

// Lua scripts for the claim protocol.
var (
	// claimScript: SET key owner NX PX lease; 1 if taken.
	renewScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`)
)

// handle runs one stream entry in slot n: claims its job, runs it, stores
// the result, and acknowledges the entry. A job whose expected peak does
// not fit beside the running ones is not claimed but put back at the end
// of the stream, for another worker or this one later: handle then
// returns a channel closed when a running job ends.
func (w *Worker) handle(q string, m redis.XMessage, n int) (freed <-chan struct{}) {
	bg := context.Background()
	entry := q + " " + m.ID
	if _, taken := w.handling.LoadOrStore(entry, true); taken {
		return nil // handled already, by another slot
	}
	defer w.handling.Delete(entry)
	defer func() {
		cctx, cancel := context.WithTimeout(bg, 2*time.Second)
		w.rdb.XAck(cctx, q, Group, m.ID)
		w.rdb.XDel(cctx, q, m.ID)
		cancel()
	}()
	id, _ := m.Values["job"].(string)
	if !validJobID(id) {
		return nil
	}
	e, getErr := w.getJob(id)
	peak := w.expectedPeak(e)
	ok, freed := w.mem.reserve(peak)
	if !ok {
		cctx, cancel := context.WithTimeout(bg, 2*time.Second)
		defer cancel()
		if getErr != nil || w.rdb.Exists(cctx, claimKey(w.prefix(), id)).Val() != 0 {
			return nil // its client took it back (or is gone): drop it
		}
		if err := w.rdb.XAdd(cctx, &redis.XAddArgs{Stream: q, Values: m.Values}).Err(); err != nil {
			// Lost: its client takes it back after the pickup time.
			w.logf("worker %s: job %s: cannot put it back: %s", w.opt.Name, id, redisstore.Describe(err))
			return freed
		}
		w.logf("worker %s: job %s expects %d MiB, %d MiB of %d MiB taken: left for later", w.opt.Name, id, peak>>20, w.mem.load()>>20, w.opt.Memory>>20)
		return freed
	}
	defer w.mem.release(peak)
	// The claim names the job entry this worker read: its client waits
	// for no other (see makeClaim).
	sum := ""
	if getErr == nil {
		sum = jobSum(e)
	}
	claim := makeClaim(w.opt.Keys.SigningKey, id, sum, w.opt.Name)
	cctx, cancel := context.WithTimeout(bg, 2*time.Second)
	ok, err := w.rdb.SetNX(cctx, claimKey(w.prefix(), id), claim, w.opt.Lease).Result()
	cancel()
	if err != nil || !ok {
		return nil // taken back by its client, or by another worker
	}
	w.running.Add(1)
	defer w.running.Add(-1)

	jobCtx, stop := context.WithTimeout(bg, w.opt.JobTimeout)
	defer stop()
	// Keep the lease while the job runs; losing it (the client took the
	// job back) cancels the run.
	renewDone := make(chan struct{})
	go func() {
		defer close(renewDone)
		t := time.NewTicker(w.opt.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-jobCtx.Done():
				return
			case <-t.C:
				cctx, cancel := context.WithTimeout(bg, time.Second)
				n, err := renewScript.Run(cctx, w.rdb, []string{claimKey(w.prefix(), id)}, claim, w.opt.Lease.Milliseconds()).Int()
				cancel()
				if err == nil && n == 0 {
					stop()
					return
				}
			}
		}
	}()
	claimed := time.Now()
	res, outs, keep := w.run(jobCtx, w.queueToolchain(q), id, e, sum, getErr, n)
	res.WorkMS = time.Since(claimed).Milliseconds()
	stop()
	<-renewDone
	defer func() {
		for _, o := range outs {
			os.Remove(o.Path)
		}
	}()
	if !keep {
		// A replay: its first run's result stays as it is.
		w.refused.Add(1)
		w.logf("worker %s: job %s dropped: %s", w.opt.Name, id, res.Refused)
		return nil
	}
	switch {
	case res.Refused != "":
		w.refused.Add(1)
		w.logf("worker %s: job %s refused: %s", w.opt.Name, id, res.Refused)
	case res.Code != 0:
		w.failed.Add(1)
		w.logf("worker %s: job %s failed with exit code %d", w.opt.Name, id, res.Code)
	default:
		w.done.Add(1)
		w.logf("worker %s: job %s done in %d ms", w.opt.Name, id, res.RunMS)
	}
	rec, _ := json.Marshal(res)
	re := &cache.Entry{Kind: kindResult, Record: rec, Blobs: outs}
	if k := w.opt.Keys.SigningKey; k != nil {
		cache.SignEntry(k, resultEntry(id), re)
	}
	err = w.store.Replace(resultEntry(id), re)
	for _, o := range outs {
		os.Remove(o.Path) // uploaded (or lost): nothing of the job stays
	}
	if err != nil {
		w.logf("worker %s: job %s: cannot store the result: %s", w.opt.Name, id, redisstore.Describe(err))
		return nil
	}
	cctx, cancel = context.WithTimeout(bg, 2*time.Second)
	defer cancel()
	pipe := w.rdb.TxPipeline()
	pipe.Expire(cctx, w.prefix()+"e:"+resultEntry(id).String(), time.Hour)
	pipe.RPush(cctx, doneKey(w.prefix(), id), w.opt.Name)
	pipe.Expire(cctx, doneKey(w.prefix(), id), 10*time.Minute)
	pipe.Exec(cctx)
	return nil
}

// entryPerInput is the bytes an input may add to a job entry as a worker
// accepts it (its line in the blob list and in the record: some 200 bytes
// with a path of 50), and maxJobEntry what the rest may take (a real
// job's entry is about 300 bytes an input; 70,000 inputs make 14 MiB).
const (
	entryPerInput = 256
	maxJobEntry   = 1 << 20
)

// getJob returns the entry of job id, unless it is larger than an entry
// of as many inputs as the worker takes may be: decoding it would cost the
// worker some ten times its size in memory. The bound is on the index as
// decoded (a compressed one is stored in a fifth of that, or less).
func (w *Worker) getJob(id string) (*cache.Entry, error) {
	limit := int64(maxJobEntry) + int64(w.opt.MaxInputs)*entryPerInput
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	n, err := w.rdb.StrLen(cctx, w.prefix()+"e:"+jobEntry(id).String()).Result()
	cancel()
	if err == nil && n > limit {
		return nil, fmt.Errorf("an entry of %s, more than the %s of a job with the most inputs this worker takes (--job-inputs)", humanSize(n), humanSize(limit))
	}
	e, err := w.store.GetWithin(jobEntry(id), int(limit))
	if err == cache.ErrNotFound && n > 0 {
		return nil, fmt.Errorf("an entry that does not decode within %s, the most a job with the most inputs this worker takes may have (--job-inputs)", humanSize(limit))
	}
	return e, err
}

// expectedPeak returns the memory a job is expected to take: the peak
// its record gives, else an equal share of the worker's memory per slot
// (so that jobs without one are taken by slots, as before), 0 with no
// memory known. The record is read before it is verified: what it says
// only decides when the job is taken, and run refuses it unless a
// trusted client signed it.
func (w *Worker) expectedPeak(e *cache.Entry) int64 {
	var j struct {
		Peak int64 `json:"peak"`
	}
	if e != nil && e.Kind == kindJob && len(e.Record) <= maxJobRecord && len(e.Blobs) <= w.opt.MaxInputs &&
		json.Unmarshal(e.Record, &j) == nil && j.Peak > 0 {
		return j.Peak
	}
	return w.opt.Memory / int64(w.opt.Slots)
}

// queueToolchain returns the toolchain whose stream q is.
func (w *Worker) queueToolchain(q string) string {
	return strings.TrimPrefix(q, w.prefix()+"farm:q:")
}

// run fetches the files of job id, taken from the stream of toolchain,
// whose entry (or the error getting it) is e and whose digest (jobSum,
// computed once for its claim) is sum, into a private directory, runs its
// tool in the sandbox as slot n and returns the result and the output
// blobs (files to remove afterwards). keep is false for a job whose result
// must not be stored: one this worker ran before its expiry (a replay),
// whose result is its first run's.
func (w *Worker) run(ctx context.Context, toolchain, id string, e *cache.Entry, sum string, err error, n int) (res Result, outs []cache.Blob, keep bool) {
	res = Result{Worker: w.opt.Name, Job: id, Toolchain: toolchain}
	refuse := func(format string, args ...any) (Result, []cache.Blob, bool) {
		res.Refused = fmt.Sprintf(format, args...)
		return res, nil, true
	}
	res.JobSum = sum
	j, p, why := w.accept(toolchain, id, e, err, &res)
	if why != "" {
		return refuse("%s", why)
	}
	if why, replay := w.seen.add(id, j.Expires, time.Now()); why != "" {
		res.Refused = why
		return res, nil, !replay
	}
	tool := w.tools[j.Tool]
	// The inputs go in a directory of their own, beside the job's
	// working directory (see jobDir): the job reads them and never
	// writes them, and they belong to the worker, not to the job's user.
	var d *jobDir
	if w.tmpfs {
		d, err = newSlotJobDir(w.slotDirs[n])
	} else {
		d, err = newJobDir(w.opt.Dir, false, w.opt.JobDisk, w.opt.JobFiles)
	}
	if err != nil {
		return refuse("cannot make a job directory: %v", err)
	}
	defer func() {
		if err := d.remove(); err != nil {
			w.logf("worker %s: job %s: cannot remove its directory: %v", w.opt.Name, id, err)
		}
	}()
	fetchStart := time.Now()
	local, why := w.fetch(ctx, j, e, d.in)
	if why != "" {
		return refuse("%s", why)
	}
	res.FetchMS = time.Since(fetchStart).Milliseconds()
	outPaths := map[string]string{}
	outNames := map[string]bool{}
	for i, o := range j.Outputs {
		name := fmt.Sprintf("o%d-%s", i, filepath.Base(o))
		outPaths[o], outNames[name] = filepath.Join(d.work, name), true
	}
	args := p.command(outPaths, local)
	if j.Tool == "clang" {
		overlay := filepath.Join(d.in, "overlay.yaml")
		if err := writeOverlay(overlay, j.Files, local); err != nil {
			return refuse("cannot write the overlay: %v", err)
		}
		args = append(args, "-ivfsoverlay", overlay, "-working-directory", j.Dir)
	}
	env := []string{"PATH=/usr/bin:/bin", "TMPDIR=" + d.work, "LC_ALL=C"}
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	cmd, err := w.opt.Sandbox.Command(runCtx, n, d.work, []string{d.in}, tool, args, env)
	if err != nil {
		return refuse("cannot confine the job: %v", err)
	}
	cmd.Dir = d.work
	stdout, stderr := &cappedBuffer{max: maxCapture}, &cappedBuffer{max: maxCapture}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	watch := watchDisk(d, w.opt.JobDisk, w.opt.JobFiles, cancelRun)
	start := time.Now()
	err = cmd.Run()
	full := watch.finish()
	res.RunMS = time.Since(start).Milliseconds()
	res.PeakRSS = membudget.PeakRSS(cmd.ProcessState)
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	// Diagnostics name the worker's copies where clang did not see the
	// client's paths (lld): give them the client's names back.
	for orig, p := range local {
		if strings.HasPrefix(orig, "/") {
			res.Stderr = bytes.ReplaceAll(res.Stderr, []byte(p), []byte(orig))
		}
	}
	for orig, p := range outPaths {
		res.Stderr = bytes.ReplaceAll(res.Stderr, []byte(p), []byte(orig))
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || runCtx.Err() != nil {
			return refuse("%s", w.stopped(runCtx, "running "+j.Tool, err))
		}
		res.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Code = 128 + int(ws.Signal())
		}
		if why := w.overLimit(res, full || (d.mounted && bytes.Contains(res.Stderr, []byte("No space left on device")))); why != "" {
			return refuse("%s", why)
		}
	}
	extra, lerr := undeclared(d.work, outNames)
	switch {
	case lerr != nil:
		return refuse("cannot list the job's directory: %v", lerr)
	case len(extra) > 0:
		return refuse("the job wrote undeclared files: %s", nameList(extra))
	case err != nil:
		return res, nil, true
	}
	for i, o := range j.Outputs {
		b, err := w.keepOutput(outPaths[o], fmt.Sprintf("o%d", i))
		if errors.Is(err, fs.ErrNotExist) {
			continue // not written (a depfile the tool skipped)
		}
		if err != nil {
			for _, b := range outs {
				os.Remove(b.Path)
			}
			return refuse("output %s: %v", o, err)
		}
		outs = append(outs, b)
	}
	w.logf("worker %s: job %s: %d inputs (%s) fetched in %d ms, %d outputs (%s) written", w.opt.Name, id,
		len(j.Files), humanSize(inputBytes(j.Files, e)), res.FetchMS, len(outs), humanSize(blobBytes(outs)))
	return res, outs, true
}

// inputBytes returns the bytes of the job's files, whose entry is e.
func inputBytes(files []File, e *cache.Entry) int64 {
	size := map[string]int64{}
	for _, b := range e.Blobs {
		size[b.Name] = b.Size
	}
	var n int64
	for _, f := range files {
		n += size[f.Blob]
	}
	return n
}

// blobBytes returns the bytes of blobs together.
func blobBytes(blobs []cache.Blob) int64 {
	var n int64
	for _, b := range blobs {
		n += b.Size
	}
	return n
}

// accept checks the job entry e of job id (or the error getting it),
// taken from the stream of toolchain, before anything is fetched: a
// record a trusted client signed (its name goes in res), of that
// toolchain, which must be the worker's for the job's tool (its LLVM's
// for clang and lld, its CUDA toolkit's for ptxas, fatbinary and nvlink),
// of the worker's tools, a command line check allows, unexpired, and
// inputs within the worker's bounds. It returns the job and its plan, or
// why the worker refuses it.
func (w *Worker) accept(toolchain, id string, e *cache.Entry, err error, res *Result) (*Job, *plan, string) {
	if err != nil || e.Kind != kindJob {
		return nil, nil, fmt.Sprintf("job %s: no job record (%v)", id, err)
	}
	if len(e.Record) > maxJobRecord {
		return nil, nil, fmt.Sprintf("job record of %d bytes, more than %d", len(e.Record), maxJobRecord)
	}
	// Before anything decodes the record: a job over the bound costs the
	// worker no more than its entry.
	if len(e.Blobs) > w.opt.MaxInputs {
		return nil, nil, w.checkInputs(nil, nil, len(e.Blobs))
	}
	if !w.opt.InsecureUnsigned {
		k, err := cache.VerifyEntry(w.opt.Keys.Clients, jobEntry(id), e)
		if err != nil {
			return nil, nil, fmt.Sprintf("job %s: %v", id, err)
		}
		res.Client = k.Name
	}
	j, err := decodeJob(e.Record)
	if err != nil {
		return nil, nil, err.Error()
	}
	switch {
	case j.ID != id:
		return nil, nil, fmt.Sprintf("the record of job %s is job %.40q's", id, j.ID)
	case w.tools[j.Tool] == "" && isCUDATool(j.Tool):
		return nil, nil, fmt.Sprintf("tool %q: this worker has no CUDA toolkit", j.Tool)
	case w.tools[j.Tool] == "":
		return nil, nil, fmt.Sprintf("tool %q is not one a worker runs", j.Tool)
	case j.Toolchain != toolchain || j.Toolchain != w.toolchainOfTool(j.Tool):
		return nil, nil, fmt.Sprintf("toolchain %s for %s, from the stream of %s; this worker runs %s with %s", j.Toolchain, j.Tool, toolchain, j.Tool, w.toolchainOfTool(j.Tool))
	case j.ToolID != w.toolIDs[j.Tool]:
		return nil, nil, fmt.Sprintf("the job's %s differs from this worker's", j.Tool)
	}
	if why := expiryProblem(j.Expires, time.Now()); why != "" {
		return nil, nil, why
	}
	p, why := check(j, w.tables)
	if why != "" {
		return nil, nil, why
	}
	blobs := make(map[string]cache.Blob, len(e.Blobs))
	for _, b := range e.Blobs {
		blobs[b.Name] = b
	}
	if why := w.checkInputs(j.Files, blobs, len(e.Blobs)); why != "" {
		return nil, nil, why
	}
	return j, p, ""
}

// fetch places the files of job j, whose entry is e, in dir, checking
// ctx between them (and a blob's download between its chunks). It
// returns where each file went, by client path and by argument, or why
// the job cannot run.
func (w *Worker) fetch(ctx context.Context, j *Job, e *cache.Entry, dir string) (map[string]string, string) {
	blobs := make(map[string]cache.Blob, len(e.Blobs))
	for _, b := range e.Blobs {
		blobs[b.Name] = b
	}
	local := make(map[string]string, len(j.Files))
	var fetchErr error
	for i, f := range j.Files {
		if ctx.Err() != nil {
			return nil, w.stopped(ctx, fmt.Sprintf("fetching its inputs (%d of %d)", i, len(j.Files)), nil)
		}
		b, ok := blobs[f.Blob]
		if !ok {
			return nil, fmt.Sprintf("file %s: no blob %q", f.Path, f.Blob)
		}
		dst := filepath.Join(dir, fmt.Sprintf("f%d-%s", i, filepath.Base(f.Path)))
		if err := w.blobs.place(ctx, b, dst); err != nil {
			if ctx.Err() != nil {
				return nil, w.stopped(ctx, fmt.Sprintf("fetching its inputs (%d of %d)", i, len(j.Files)), nil)
			}
			if errors.Is(err, errLowDisk) {
				return nil, fmt.Sprintf("file %s: %v", f.Path, err)
			}
			// Go on: the store removes every damaged blob it reads,
			// so the client's next upload repairs them all at once.
			if fetchErr == nil {
				fetchErr = fmt.Errorf("file %s: %v", f.Path, err)
			}
			continue
		}
		local[f.Path] = dst
		if f.Arg != "" {
			local[f.Arg] = dst
		}
	}
	if fetchErr != nil {
		return nil, fetchErr.Error()
	}
	return local, ""
}

// stopped says why a job whose context ctx ended was stopped while doing
// what (with the error that gave, if any): its wall time ran out, it
// wrote too much, or its client took it back.
func (w *Worker) stopped(ctx context.Context, what string, err error) string {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, context.DeadlineExceeded):
		return fmt.Sprintf("the job ran out of its wall time (%v, --job-wall) %s", w.opt.JobTimeout, what)
	case errors.Is(cause, errJobDisk):
		return w.diskMessage()
	case cause != nil:
		return fmt.Sprintf("the job was taken back %s", what)
	}
	return fmt.Sprintf("cannot run the job (%s): %v", what, err)
}

// diskMessage is the refusal of a job that filled its directory.
func (w *Worker) diskMessage() string {
	return fmt.Sprintf("the job wrote more than its directory holds (%s in %d files, --job-disk and --job-files)", humanSize(w.opt.JobDisk), w.opt.JobFiles)
}

// The signals of RLIMIT_FSIZE and RLIMIT_CPU (Linux's numbers).
const sigXCPU, sigXFSZ = 24, 25

// overLimit returns why a run that failed with res was the worker's
// bounds and not the job's own failure, or "": its directory filled
// (full), or a signal of a resource limit ended it.
func (w *Worker) overLimit(res Result, full bool) string {
	switch {
	case full:
		return w.diskMessage()
	case res.Code == 128+sigXFSZ:
		return "the job wrote a file larger than its limit (--job-output)"
	case res.Code == 128+sigXCPU:
		return "the job used more than its CPU time (--job-cpu)"
	}
	return ""
}

// keepOutput copies the output the job wrote at path out of its directory
// (which goes with the job) into a file of the worker's, and describes it
// as the blob name. The job chose what is at path: only a regular file is
// read, never through a symbolic link.
func (w *Worker) keepOutput(path, name string) (cache.Blob, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return cache.Blob{}, errors.New("a symbolic link, not a file")
		}
		return cache.Blob{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return cache.Blob{}, err
	}
	if !fi.Mode().IsRegular() {
		return cache.Blob{}, errors.New("not a regular file")
	}
	if err := w.blobs.room(fi.Size()); err != nil {
		return cache.Blob{}, err
	}
	keep, err := os.CreateTemp(w.opt.Dir, fmt.Sprintf("%s%d-", outPrefix, os.Getpid()))
	if err != nil {
		return cache.Blob{}, err
	}
	h := newHash()
	// What the job wrote is all there: its processes are gone.
	n, err := io.Copy(io.MultiWriter(keep, h), io.LimitReader(f, fi.Size()))
	if cerr := keep.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(keep.Name())
		return cache.Blob{}, err
	}
	var sum cache.Sum
	copy(sum[:], h.Sum(nil))
	return cache.Blob{Name: name, Size: n, Sum: sum, Mode: uint32(fi.Mode().Perm()), Path: keep.Name()}, nil
}

// cappedBuffer keeps the first max bytes written to it and counts the
// rest: a job's diagnostics are kept whole up to a size, then cut with a
// note, so that a flood neither grows the worker nor its result record.
type cappedBuffer struct {
	max     int
	buf     bytes.Buffer
	dropped int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.buf.Write(p[:max(room, 0)])
		c.dropped += int64(len(p) - max(room, 0))
		return len(p), nil
	}
	return c.buf.Write(p)
}

// Bytes returns what was kept, and the note of what was cut.
func (c *cappedBuffer) Bytes() []byte {
	if c.dropped == 0 {
		return c.buf.Bytes()
	}
	return fmt.Appendf(c.buf.Bytes(), "\n[offcc worker: output cut at %d bytes; %d more bytes dropped]\n", c.max, c.dropped)
}

// validJobID accepts the IDs clients make: 24 lower-case hex digits.
func validJobID(id string) bool {
	if len(id) != 24 {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// jobSum is the digest of a job's entry as stored (its record, blob list
// and signature): what a result says it answers.
func jobSum(e *cache.Entry) string { return cache.SumBytes(cache.EncodeIndex(e)).String() }

// writeOverlay writes clang's VFS overlay: each shipped file under its
// client path, nothing else visible (no fall-through to this machine's
// files), names as the client sees them.
func writeOverlay(path string, files []File, local map[string]string) error {
	type root struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		External string `json:"external-contents"`
	}
	ov := struct {
		Version          int    `json:"version"`
		CaseSensitive    string `json:"case-sensitive"`
		UseExternalNames bool   `json:"use-external-names"`
		Fallthrough      bool   `json:"fallthrough"`
		Roots            []root `json:"roots"`
	}{Version: 0, CaseSensitive: "true"}
	for _, f := range files {
		ov.Roots = append(ov.Roots, root{Type: "file", Name: f.Path, External: local[f.Path]})
	}
	data, err := json.Marshal(ov)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// blobOf describes the file at path as a blob named name.
func blobOf(path, name string) (cache.Blob, error) {
	f, err := os.Open(path)
	if err != nil {
		return cache.Blob{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return cache.Blob{}, err
	}
	h := newHash()
	n, err := io.Copy(h, f)
	if err != nil {
		return cache.Blob{}, err
	}
	if n != fi.Size() {
		return cache.Blob{}, fmt.Errorf("%s changed while read", path)
	}
	var sum cache.Sum
	copy(sum[:], h.Sum(nil))
	return cache.Blob{Name: name, Size: n, Sum: sum, Mode: uint32(fi.Mode().Perm()), Path: path}, nil
}
