package farm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/redis/go-redis/v9"
)

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Name identifies the worker (default: host name and process ID).
	Name string
	// Clang is the clang the worker runs; lld is taken from its
	// directory.
	Clang string
	// Slots is how many jobs run at once (default 1).
	Slots int
	// Dir is where job directories are made (default os.TempDir()).
	Dir string
	// Lease is how long a job stays the worker's without a renewal
	// (default 3s); renewed every Lease/3.
	Lease time.Duration
	// JobTimeout bounds one job's run (default 10 minutes).
	JobTimeout time.Duration
	// BlobCache bounds the worker's copies of fetched inputs (default 1 GiB).
	BlobCache int64
	// Self is the offcc executable, run as "offcc __farm-sandbox DIR --
	// TOOL ARGS..." to confine each job's writes to its directory with
	// Landlock where the kernel has it; "" runs tools directly.
	Self string
	// Log, when not nil, receives a line per job and event.
	Log *log.Logger
}

// Worker is the daemon of "offcc worker": it announces itself, takes jobs
// for its toolchain from the stream, runs them and stores their results.
type Worker struct {
	store     *redisstore.Store
	rdb       *redis.Client
	opt       WorkerOptions
	toolchain string
	tools     map[string]string // tool name -> path
	toolIDs   map[string]string // tool name -> identity digest
	host      string
	started   time.Time
	blobs     *blobCache // fetched inputs, by digest
	sandbox   int        // the Landlock ABI jobs run under, 0 for none

	running               atomic.Int32
	done, refused, failed atomic.Int64
	draining              atomic.Bool
}

// NewWorker returns a worker serving jobs from store's server.
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
	host, _ := os.Hostname()
	if opt.Name == "" {
		opt.Name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if strings.ContainsAny(opt.Name, " \t\n") || opt.Name == clientOwner {
		return nil, fmt.Errorf("bad worker name %q", opt.Name)
	}
	w := &Worker{store: store, rdb: store.Client(), opt: opt, host: host, started: time.Now(),
		tools: map[string]string{}}
	dir := toolDir(opt.Clang)
	for _, t := range Tools {
		p := filepath.Join(dir, t)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("the toolchain at %s has no %s", dir, t)
		}
		w.tools[t] = p
	}
	w.toolIDs, w.toolchain = toolchainOf(opt.Clang)
	if opt.Self != "" {
		w.sandbox = SandboxABI()
	}
	return w, nil
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
	q := queueKey(w.prefix(), w.toolchain)
	cctx, cancel := context.WithTimeout(bg, 5*time.Second)
	err := w.rdb.XGroupCreateMkStream(cctx, q, Group, "0").Err()
	cancel()
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("cannot reach %s: %v", w.store.Name(), err)
	}
	blobDir, err := os.MkdirTemp(w.opt.Dir, "offcc-worker-blobs-")
	if err != nil {
		return fmt.Errorf("cannot make the worker's blob directory: %v", err)
	}
	defer os.RemoveAll(blobDir)
	w.blobs = newBlobCache(w.store, blobDir, w.opt.BlobCache)
	w.announce(bg)
	w.logf("worker %s: serving toolchain %s (%s) with %d slots on %s", w.opt.Name, w.toolchain, w.opt.Clang, w.opt.Slots, w.store.Name())
	if w.sandbox > 0 {
		w.logf("worker %s: jobs may write only in their directories (Landlock ABI %d)", w.opt.Name, w.sandbox)
	} else {
		w.logf("worker %s: no Landlock here: jobs are confined by their command-line checks and clang's overlay only", w.opt.Name)
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
			w.slot(ctx, q)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.reclaim(ctx, q)
	}()
	<-ctx.Done()
	w.draining.Store(true)
	w.announce(bg)
	w.logf("worker %s: draining (%d running)", w.opt.Name, w.running.Load())
	wg.Wait()
	close(stopAnnounce)
	annWG.Wait()
	cctx, cancel = context.WithTimeout(bg, 2*time.Second)
	w.rdb.HDel(cctx, workersKey(w.prefix()), w.opt.Name)
	w.rdb.XGroupDelConsumer(cctx, q, Group, w.opt.Name)
	cancel()
	w.logf("worker %s: stopped after %d jobs", w.opt.Name, w.done.Load())
	return nil
}

// announce writes the worker's registration.
func (w *Worker) announce(ctx context.Context) {
	info := WorkerInfo{Name: w.opt.Name, Host: w.host, PID: os.Getpid(), Toolchain: w.toolchain,
		LLVM: w.opt.Clang, Slots: w.opt.Slots, Running: int(w.running.Load()),
		Done: w.done.Load(), Refused: w.refused.Load(), Failed: w.failed.Load(),
		Draining: w.draining.Load(), Started: w.started.UnixMilli(), Seen: time.Now().UnixMilli()}
	data, _ := json.Marshal(info)
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	w.rdb.HSet(cctx, workersKey(w.prefix()), w.opt.Name, data)
}

// slot takes one job at a time from the stream until ctx is done.
func (w *Worker) slot(ctx context.Context, q string) {
	for ctx.Err() == nil {
		res, err := w.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: Group, Consumer: w.opt.Name, Streams: []string{q, ">"},
			Count: 1, Block: time.Second,
		}).Result()
		if err != nil {
			if !errors.Is(err, redis.Nil) && ctx.Err() == nil {
				if strings.Contains(err.Error(), "NOGROUP") {
					cctx, cancel := context.WithTimeout(context.Background(), time.Second)
					w.rdb.XGroupCreateMkStream(cctx, q, Group, "0")
					cancel()
				}
				time.Sleep(200 * time.Millisecond)
			}
			continue
		}
		for _, s := range res {
			for _, m := range s.Messages {
				w.handle(q, m)
			}
		}
	}
}

// reclaim takes over stream entries left pending by workers that died
// (XAUTOCLAIM after two leases idle) and handles them like new ones: the
// claim key decides whether anyone still wants them.
func (w *Worker) reclaim(ctx context.Context, q string) {
	t := time.NewTicker(w.opt.Lease)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
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
			w.logf("worker %s: reclaimed stream entry %s", w.opt.Name, m.ID)
			w.handle(q, m)
		}
	}
}

// Lua scripts for the claim protocol.
var (
	// claimScript: SET key owner NX PX lease; 1 if taken.
	renewScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`)
)

// handle runs one stream entry: claims its job, runs it, stores the
// result, and acknowledges the entry.
func (w *Worker) handle(q string, m redis.XMessage) {
	bg := context.Background()
	defer func() {
		cctx, cancel := context.WithTimeout(bg, 2*time.Second)
		w.rdb.XAck(cctx, q, Group, m.ID)
		w.rdb.XDel(cctx, q, m.ID)
		cancel()
	}()
	id, _ := m.Values["job"].(string)
	if id == "" || strings.ContainsAny(id, " /") {
		return
	}
	cctx, cancel := context.WithTimeout(bg, 2*time.Second)
	ok, err := w.rdb.SetNX(cctx, claimKey(w.prefix(), id), w.opt.Name, w.opt.Lease).Result()
	cancel()
	if err != nil || !ok {
		return // taken back by its client, or by another worker
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
				n, err := renewScript.Run(cctx, w.rdb, []string{claimKey(w.prefix(), id)}, w.opt.Name, w.opt.Lease.Milliseconds()).Int()
				cancel()
				if err == nil && n == 0 {
					stop()
					return
				}
			}
		}
	}()
	claimed := time.Now()
	res, outs := w.run(jobCtx, id)
	res.WorkMS = time.Since(claimed).Milliseconds()
	stop()
	<-renewDone
	defer func() {
		for _, o := range outs {
			os.Remove(o.Path)
		}
	}()
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
	if err := w.store.Replace(resultEntry(id), &cache.Entry{Kind: kindResult, Record: rec, Blobs: outs}); err != nil {
		w.logf("worker %s: job %s: cannot store the result: %v", w.opt.Name, id, err)
		return
	}
	cctx, cancel = context.WithTimeout(bg, 2*time.Second)
	defer cancel()
	pipe := w.rdb.TxPipeline()
	pipe.Expire(cctx, w.prefix()+"e:"+resultEntry(id).String(), time.Hour)
	pipe.RPush(cctx, doneKey(w.prefix(), id), w.opt.Name)
	pipe.Expire(cctx, doneKey(w.prefix(), id), 10*time.Minute)
	pipe.Exec(cctx)
}

// run fetches a job's files into a private directory, runs its tool and
// returns the result and the output blobs (files to remove afterwards).
func (w *Worker) run(ctx context.Context, id string) (Result, []cache.Blob) {
	res := Result{Worker: w.opt.Name}
	refuse := func(format string, args ...any) (Result, []cache.Blob) {
		res.Refused = fmt.Sprintf(format, args...)
		return res, nil
	}
	e, err := w.store.Get(jobEntry(id))
	if err != nil || e.Kind != kindJob {
		return refuse("job %s: no job record (%v)", id, err)
	}
	j, err := decodeJob(e.Record)
	if err != nil {
		return refuse("%v", err)
	}
	if j.Toolchain != w.toolchain {
		return refuse("toolchain %s, this worker serves %s", j.Toolchain, w.toolchain)
	}
	tool, ok := w.tools[j.Tool]
	if !ok {
		return refuse("tool %q is not one a worker runs", j.Tool)
	}
	if j.ToolID != w.toolIDs[j.Tool] {
		return refuse("the job's %s differs from this worker's", j.Tool)
	}
	if why := check(j); why != "" {
		return refuse("%s", why)
	}
	dir, err := os.MkdirTemp(w.opt.Dir, "offcc-job-")
	if err != nil {
		return refuse("cannot make a job directory: %v", err)
	}
	defer os.RemoveAll(dir)
	blobs := map[string]cache.Blob{}
	for _, b := range e.Blobs {
		blobs[b.Name] = b
	}
	local := map[string]string{} // client path or argument -> file here
	fetchStart := time.Now()
	var fetchErr error
	for i, f := range j.Files {
		b, ok := blobs[f.Blob]
		if !ok {
			return refuse("file %s: no blob %q", f.Path, f.Blob)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%d-%s", i, filepath.Base(f.Path)))
		if err := w.blobs.place(b, p); err != nil {
			// Go on: the store removes every damaged blob it reads,
			// so the client's next upload repairs them all at once.
			if fetchErr == nil {
				fetchErr = fmt.Errorf("file %s: %v", f.Path, err)
			}
			continue
		}
		local[f.Path] = p
		if f.Arg != "" {
			local[f.Arg] = p
		}
	}
	if fetchErr != nil {
		return refuse("%v", fetchErr)
	}
	res.FetchMS = time.Since(fetchStart).Milliseconds()
	outPaths := map[string]string{}
	for i, o := range j.Outputs {
		outPaths[o] = filepath.Join(dir, fmt.Sprintf("o%d-%s", i, filepath.Base(o)))
	}
	args := make([]string, 0, len(j.Args)+4)
	for i := 0; i < len(j.Args); i++ {
		a := j.Args[i]
		if outputOptions[a] && i+1 < len(j.Args) {
			args = append(args, a, outPaths[j.Args[i+1]])
			i++
			continue
		}
		if j.Tool == "lld" {
			if p, ok := local[a]; ok {
				a = p
			}
		}
		args = append(args, a)
	}
	if j.Tool == "clang" {
		overlay := filepath.Join(dir, "overlay.yaml")
		if err := writeOverlay(overlay, j.Files, local); err != nil {
			return refuse("cannot write the overlay: %v", err)
		}
		args = append(args, "-ivfsoverlay", overlay, "-working-directory", j.Dir)
	}
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o700)
	cmd := exec.CommandContext(ctx, tool, args...)
	if w.sandbox > 0 {
		cmd = exec.CommandContext(ctx, w.opt.Self, append([]string{"__farm-sandbox", dir, "--", tool}, args...)...)
	}
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmp, "LC_ALL=C"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	err = cmd.Run()
	res.RunMS = time.Since(start).Milliseconds()
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
		if !errors.As(err, &ee) || ctx.Err() != nil {
			return refuse("cannot run %s: %v", j.Tool, err)
		}
		res.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Code = 128 + int(ws.Signal())
		}
		return res, nil
	}
	var outs []cache.Blob
	for i, o := range j.Outputs {
		p := outPaths[o]
		// Keep the output beyond the job directory's removal: move it
		// beside it until the result is stored.
		keep, err := os.CreateTemp(w.opt.Dir, "offcc-out-")
		if err != nil {
			return refuse("cannot keep output: %v", err)
		}
		keep.Close()
		if err := os.Rename(p, keep.Name()); err != nil {
			os.Remove(keep.Name())
			if os.IsNotExist(err) {
				continue // not written (a depfile the tool skipped)
			}
			return refuse("output %s: %v", o, err)
		}
		b, err := blobOf(keep.Name(), fmt.Sprintf("o%d", i))
		if err != nil {
			os.Remove(keep.Name())
			return refuse("output %s: %v", o, err)
		}
		outs = append(outs, b)
	}
	return res, outs
}

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
