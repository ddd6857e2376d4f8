package farm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/offcc/offcc/cache"
)

// Bounds on one job, besides the sandbox's Limits (memory, CPU time, file
// size, processes) and the wall time (WorkerOptions.JobTimeout): a signed
// job is still a stranger's, and must not exhaust the worker's time,
// memory or disk.
//
//   - Its inputs: how many (MaxInputs) and their bytes together
//     (MaxInputBytes), from its signed record, before anything is fetched.
//   - What it writes: its working directory is a tmpfs of JobDisk bytes
//     and JobFiles files when the worker is root (the kernel enforces
//     both); otherwise a plain directory that a watcher measures while
//     the job runs, killing it past either bound. Its inputs are not on
//     the tmpfs: they are hard links into the blob cache, beside it.
//   - What it leaves: nothing but its declared outputs (anything else
//     fails it), and the whole directory goes with the job.
//   - The worker's disk: the blob cache and the outputs it copies out keep
//     MinFree bytes free on the file system of Dir (see blobCache.room).
const (
	// defaultJobInputs: the real jobs measured ship at most a few
	// hundred files (an OpenMP offload compile with the C++ library's
	// headers), so 20,000 leaves room for any honest one.
	defaultJobInputs = 20000
	// defaultJobInputBytes: their inputs are a few MiB (device links
	// of bitcode included); 1 GiB is twice the largest blob a store takes.
	defaultJobInputBytes = 1 << 30
	// defaultJobDisk: what a job writes is its objects (a few MiB each)
	// and clang's temporary copy of one.
	defaultJobDisk = 1 << 30
	// defaultJobFiles: a job writes its outputs (one or two) and one
	// temporary file per output.
	defaultJobFiles = 256
	// defaultMinFree is the space the worker leaves free on its disk.
	defaultMinFree = 1 << 30
)

// jobDirPrefix begins the name of every job directory, followed by the
// worker's process ID and a dash: a worker that starts removes those of
// workers that died (removeStale).
const jobDirPrefix = "offcc-job-"

// jobDir is one job's directories under the worker's Dir:
//
//	base       offcc-job-PID-RANDOM, the worker's (mode 0711)
//	base/in    the inputs and the overlay, which the job reads but never
//	           writes (hard links into the blob cache, on Dir's disk)
//	base/work  the job's working directory, the only one it may write: a
//	           tmpfs of JobDisk bytes and JobFiles files when mounted
type jobDir struct {
	base, in, work string
	mounted        bool
	// slot: work is a worker slot's tmpfs (slotDir), which outlives the
	// job: remove empties it rather than unmount it.
	slot bool
}

// newSlotJobDir returns the directories of a job that worker slot's
// directories slot run (made by newJobDir with a tmpfs): the slot's tmpfs,
// which must be empty, and a new inputs directory beside it. A slot's
// tmpfs is mounted once for all its jobs (a slot runs one job at a time,
// and its bounds are a job's): a mount and an unmount per job cost each
// job's sandbox some 30 ms more (the kernel's mount namespaces), where
// emptying a tmpfs costs next to nothing.
func newSlotJobDir(slot *jobDir) (*jobDir, error) {
	if ents, err := os.ReadDir(slot.work); err != nil || len(ents) != 0 {
		return nil, fmt.Errorf("the slot's directory %s is not empty (%d entries, %v)", slot.work, len(ents), err)
	}
	os.RemoveAll(slot.in)
	if err := os.Mkdir(slot.in, 0o755); err != nil {
		return nil, err
	}
	return &jobDir{base: slot.base, in: slot.in, work: slot.work, mounted: true, slot: true}, nil
}

// newJobDir makes a job's directories under dir, with a tmpfs on its
// work directory when tmpfs (of size bytes and files files).
func newJobDir(dir string, tmpfs bool, size int64, files int) (*jobDir, error) {
	return newNamedJobDir(dir, jobDirPrefix, tmpfs, size, files)
}

// newNamedJobDir is newJobDir with base's name beginning with prefix
// (jobDirPrefix, or slotDirPrefix for a slot's directories).
func newNamedJobDir(dir, prefix string, tmpfs bool, size int64, files int) (*jobDir, error) {
	base, err := os.MkdirTemp(dir, fmt.Sprintf("%s%d-", prefix, os.Getpid()))
	if err != nil {
		return nil, err
	}
	d := &jobDir{base: base, in: filepath.Join(base, "in"), work: filepath.Join(base, "work")}
	// Searchable, not listable: the job reaches its two directories.
	err = os.Chmod(base, 0o711)
	if err == nil {
		err = os.Mkdir(d.in, 0o755)
	}
	if err == nil {
		err = os.Mkdir(d.work, 0o700)
	}
	if err == nil && tmpfs {
		if err = mountJobTmpfs(d.work, size, files); err == nil {
			d.mounted = true
		}
	}
	if err != nil {
		d.remove()
		return nil, err
	}
	return d, nil
}

// remove unmounts the job's tmpfs and removes its directories.
func (d *jobDir) remove() error {
	var err error
	if d.slot {
		// The slot's tmpfs stays, emptied for its next job; the
		// inputs go.
		if err = emptyDir(d.work); err == nil {
			err = os.Chmod(d.work, 0o700)
		}
		if rerr := os.RemoveAll(d.in); err == nil {
			err = rerr
		}
		return err
	}
	if d.mounted {
		if err = unmountJobTmpfs(d.work); err == nil {
			d.mounted = false
		}
	}
	if rerr := os.RemoveAll(d.base); err == nil {
		err = rerr
	}
	return err
}

// emptyDir removes everything in dir, keeping dir.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if rerr := os.RemoveAll(filepath.Join(dir, e.Name())); err == nil {
			err = rerr
		}
	}
	return err
}

// canMountTmpfs reports whether the worker can mount a tmpfs per job in
// dir (it is root, with the right to mount), or why not.
func canMountTmpfs(dir string) error {
	if os.Geteuid() != 0 {
		return errors.New("the worker is not root")
	}
	d, err := newJobDir(dir, true, 1<<20, 16)
	if err != nil {
		return err
	}
	return d.remove()
}

// removeStale removes what workers that died left in dir: their job
// directories (unmounting their tmpfs first), blob caches and outputs,
// found by the process ID in their names. It returns how many it
// removed, and the first error.
func removeStale(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	var first error
	for _, e := range entries {
		pid, ok := stalePID(e.Name())
		if !ok || processAlive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		err := unmountStale(p)
		if err == nil {
			err = os.RemoveAll(p)
		}
		if err != nil && first == nil {
			first = err
		}
		if err == nil {
			n++
		}
	}
	return n, first
}

// stalePID returns the worker process ID in the name of one of a
// worker's files in its Dir (offcc-job-PID-..., offcc-worker-blobs-PID-...,
// offcc-out-PID-...).
func stalePID(name string) (int, bool) {
	for _, prefix := range []string{jobDirPrefix, slotDirPrefix, blobDirPrefix, outPrefix} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			digits, _, found := strings.Cut(rest, "-")
			pid, err := strconv.Atoi(digits)
			return pid, found && err == nil && pid > 0
		}
	}
	return 0, false
}

// processAlive reports whether process pid exists (this process counts:
// nothing it made is stale, but a dead worker with its PID left some).
func processAlive(pid int) bool {
	if pid == os.Getpid() {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// checkInputs returns why a job with files must not be fetched, or "":
// more inputs or input bytes than the worker takes. blobs are the job
// entry's blobs by name (listed of them in its entry); a file's bytes
// count once per file, as each is placed in the job.
func (w *Worker) checkInputs(files []File, blobs map[string]cache.Blob, listed int) string {
	if n := max(len(files), listed); n > w.opt.MaxInputs {
		return fmt.Sprintf("the job has %d inputs, more than the %d this worker takes (--job-inputs)", n, w.opt.MaxInputs)
	}
	var total int64
	for _, f := range files {
		total += max(blobs[f.Blob].Size, 0)
		if total > w.opt.MaxInputBytes {
			return fmt.Sprintf("the job's inputs are more than the %s this worker takes (--job-input-bytes)", humanSize(w.opt.MaxInputBytes))
		}
	}
	return ""
}

// undeclared returns the names in dir other than those of want, sorted.
func undeclared(dir string, want map[string]bool) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var extra []string
	for {
		// In batches: a directory of many files costs no more memory.
		names, err := f.Readdirnames(1024)
		for _, n := range names {
			if !want[n] {
				extra = append(extra, n)
			}
		}
		if err != nil || len(extra) > 1000 {
			break
		}
	}
	slices.Sort(extra)
	return extra, nil
}

// nameList writes names for a message: the first few, and how many more.
func nameList(names []string) string {
	const shown = 5
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}

// errJobDisk is the cause of a job cancelled for writing too much.
var errJobDisk = errors.New("the job wrote more than its directory may hold")

// diskWatch watches a running job's working directory. On a tmpfs, whose
// bounds the kernel enforces, it notes whether it ever fills (a tool may
// remove what it wrote when a write fails); on a plain directory it
// measures the files and bytes beneath it and cancels the job past the
// bounds.
type diskWatch struct {
	dir      string
	tmpfs    bool
	maxBytes int64
	maxFiles int
	cancel   context.CancelCauseFunc

	mu   sync.Mutex
	full bool
	stop chan struct{}
	done chan struct{}
}

// watchDisk starts watching d's work directory until stopped.
func watchDisk(d *jobDir, maxBytes int64, maxFiles int, cancel context.CancelCauseFunc) *diskWatch {
	dw := &diskWatch{dir: d.work, tmpfs: d.mounted, maxBytes: maxBytes, maxFiles: maxFiles, cancel: cancel,
		stop: make(chan struct{}), done: make(chan struct{})}
	go dw.loop()
	return dw
}

// loop checks the directory every few tens of milliseconds.
func (dw *diskWatch) loop() {
	defer close(dw.done)
	every := 200 * time.Millisecond
	if dw.tmpfs {
		every = 20 * time.Millisecond // one statfs
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-dw.stop:
			return
		case <-t.C:
			if dw.check() {
				return
			}
		}
	}
}

// check looks once and reports whether the job was stopped.
func (dw *diskWatch) check() bool {
	if dw.tmpfs {
		if fsFull(dw.dir) {
			dw.setFull()
		}
		return false
	}
	if dirOver(dw.dir, dw.maxBytes, dw.maxFiles) {
		dw.setFull()
		dw.cancel(errJobDisk)
		return true
	}
	return false
}

func (dw *diskWatch) setFull() {
	dw.mu.Lock()
	dw.full = true
	dw.mu.Unlock()
}

// finish stops the watch and reports whether the directory was ever full
// (or is now).
func (dw *diskWatch) finish() bool {
	close(dw.stop)
	<-dw.done
	if dw.tmpfs && fsFull(dw.dir) {
		dw.setFull()
	}
	dw.mu.Lock()
	defer dw.mu.Unlock()
	return dw.full
}

// dirOver reports whether there are more than maxFiles files and
// directories beneath dir, or more than maxBytes in them; it stops
// counting there.
func dirOver(dir string, maxBytes int64, maxFiles int) bool {
	var bytes int64
	files := 0
	over := false
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		files++
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			bytes += fi.Size()
		}
		if files > maxFiles || bytes > maxBytes {
			over = true
			return filepath.SkipAll
		}
		return nil
	})
	return over
}

// Name prefixes of the worker's other files in its Dir, followed by its
// process ID and a dash (see removeStale).
const (
	blobDirPrefix = "offcc-worker-blobs-"
	// slotDirPrefix begins the name of a slot's directories (see
	// newSlotJobDir), which live as long as their worker.
	slotDirPrefix = "offcc-worker-slot-"
	outPrefix     = "offcc-out-"
)

// logBounds logs the bounds on a job, and how its disk use is bounded.
func (w *Worker) logBounds() {
	o := w.opt
	w.logf("worker %s: a job may ship %d inputs of %s together (--job-inputs, --job-input-bytes), run %v with fetching them (--job-wall), and write %s in %d files (--job-disk, --job-files); the blob cache holds %s (--blob-cache) and %s stay free on %s (--min-free)",
		o.Name, o.MaxInputs, humanSize(o.MaxInputBytes), o.JobTimeout, humanSize(o.JobDisk), o.JobFiles,
		humanSize(o.BlobCache), humanSize(max(o.MinFree, 0)), o.Dir)
	if w.tmpfs {
		w.logf("worker %s: each job writes in a tmpfs of its own, which the kernel bounds", o.Name)
	} else {
		w.logf("worker %s: jobs write in plain directories that the worker measures every 200 ms, which the kernel does not bound (no tmpfs per job: %v)", o.Name, w.noTmpfs)
	}
}
