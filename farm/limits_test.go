package farm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/offcc/offcc/cache"
)

// TestCheckInputs: a job over the number of inputs or their bytes is
// refused, whatever its entry lists beside them.
func TestCheckInputs(t *testing.T) {
	w := &Worker{opt: WorkerOptions{MaxInputs: 3, MaxInputBytes: 1000}}
	blobs := map[string]cache.Blob{"a": {Size: 400}, "b": {Size: 501}, "neg": {Size: -1 << 40}}
	for _, tc := range []struct {
		name   string
		files  []string
		listed int
		want   string
	}{
		{"within", []string{"a", "b"}, 2, ""},
		{"too many files", []string{"a", "a", "a", "a"}, 1, "4 inputs, more than the 3"},
		{"too many blobs listed", []string{"a"}, 4, "4 inputs"},
		{"too many bytes", []string{"a", "b", "b"}, 2, "more than the 1000 B"},
		{"a blob twice counts twice", []string{"b", "b", "b"}, 1, "--job-input-bytes"},
		{"a negative size counts nothing", []string{"neg", "b", "b"}, 2, "--job-input-bytes"},
	} {
		var files []File
		for _, b := range tc.files {
			files = append(files, File{Blob: b})
		}
		got := w.checkInputs(files, blobs, tc.listed)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestUndeclared: everything but the declared names is listed, and
// messages show a few names.
func TestUndeclared(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"o0-k.o", "o1-k.d", "extra", "k.o-1234.tmp"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	got, err := undeclared(dir, map[string]bool{"o0-k.o": true, "o1-k.d": true, "o2-missing": true})
	if err != nil || strings.Join(got, ",") != "extra,k.o-1234.tmp,sub" {
		t.Errorf("undeclared: %q, %v", got, err)
	}
	if s := nameList([]string{"a", "b", "c", "d", "e", "f", "g"}); s != "a, b, c, d, e and 2 more" {
		t.Errorf("nameList: %q", s)
	}
}

// TestStale: the files of a worker that died (by the process ID in their
// names) go, with any tmpfs mounted in them; a live worker's stay.
func TestStale(t *testing.T) {
	for name, want := range map[string]int{
		"offcc-job-123-abc": 123, "offcc-worker-blobs-9-x": 9, "offcc-out-77-1": 77,
	} {
		if pid, ok := stalePID(name); !ok || pid != want {
			t.Errorf("stalePID(%q) = %d, %v", name, pid, ok)
		}
	}
	for _, name := range []string{"offcc-job-abc", "offcc-job-12", "offcc-job--1-x", "other-1-x", "offcc-job-0-x"} {
		if _, ok := stalePID(name); ok {
			t.Errorf("stalePID(%q) found a worker", name)
		}
	}
	dir := t.TempDir()
	// A process that has exited: its ID is free (for a while).
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	deadJob := filepath.Join(dir, fmt.Sprintf("offcc-job-%d-x", dead))
	os.MkdirAll(filepath.Join(deadJob, "work"), 0o700)
	os.MkdirAll(filepath.Join(dir, fmt.Sprintf("offcc-worker-blobs-%d-y", dead)), 0o700)
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("offcc-out-%d-z", dead)), nil, 0o600)
	live := filepath.Join(dir, fmt.Sprintf("offcc-job-%d-x", os.Getppid()))
	os.Mkdir(live, 0o700)
	other := filepath.Join(dir, "unrelated")
	os.Mkdir(other, 0o700)
	mounted := false
	if os.Geteuid() == 0 {
		mounted = mountJobTmpfs(filepath.Join(deadJob, "work"), 1<<20, 8) == nil
	}
	n, err := removeStale(dir)
	if err != nil || n != 3 {
		t.Errorf("removeStale: %d removed, %v; want 3", n, err)
	}
	ents, _ := os.ReadDir(dir)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{filepath.Base(live), "unrelated"}; strings.Join(left, ",") != strings.Join(want, ",") {
		t.Errorf("left %q, want %q", left, want)
	}
	if mounted {
		if m, _ := mountsUnder(dir); len(m) != 0 {
			t.Errorf("mounts left: %q", m)
		}
	}
}

// TestJobDir: a job directory holds in and work; as root work is a tmpfs
// that refuses more bytes or files than its bounds, and removing the
// directory unmounts it and leaves nothing.
func TestJobDir(t *testing.T) {
	dir := t.TempDir()
	root := os.Geteuid() == 0
	d, err := newJobDir(dir, root, 1<<20, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{d.in, d.work} {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", p, err)
		}
	}
	if fi, _ := os.Stat(d.base); fi.Mode().Perm() != 0o711 {
		t.Errorf("the job's base directory has mode %v, want 0711", fi.Mode().Perm())
	}
	if root {
		if !d.mounted {
			t.Fatal("no tmpfs as root")
		}
		var st syscall.Statfs_t
		syscall.Statfs(d.work, &st)
		if st.Type != 0x01021994 { // TMPFS_MAGIC
			t.Errorf("the work directory is not a tmpfs (type %x)", st.Type)
		}
		err := os.WriteFile(filepath.Join(d.work, "big"), make([]byte, 2<<20), 0o600)
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("2 MiB in a 1 MiB tmpfs: %v", err)
		}
		if !fsFull(d.work) {
			t.Errorf("a full tmpfs is not full")
		}
		os.Remove(filepath.Join(d.work, "big"))
		for i := range 5 {
			err = os.WriteFile(filepath.Join(d.work, fmt.Sprint(i)), nil, 0o600)
		}
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("5 files where 4 fit: %v", err)
		}
	}
	if err := d.remove(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d entries left", len(ents))
	}
	if m, _ := mountsUnder(dir); len(m) != 0 {
		t.Errorf("mounts left: %q", m)
	}
}

// TestDiskWatch: on a plain directory (a worker that is not root), the
// watch cancels a job past its bytes or files.
func TestDiskWatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(dir string)
	}{
		{"bytes", func(dir string) { os.WriteFile(filepath.Join(dir, "big"), make([]byte, 200<<10), 0o600) }},
		{"files", func(dir string) {
			for i := range 20 {
				os.Mkdir(filepath.Join(dir, fmt.Sprint(i)), 0o700)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := newJobDir(t.TempDir(), false, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer d.remove()
			ctx, cancel := context.WithCancelCause(context.Background())
			dw := watchDisk(d, 100<<10, 10, cancel)
			os.WriteFile(filepath.Join(d.work, "small"), []byte("x"), 0o600)
			time.Sleep(300 * time.Millisecond)
			if ctx.Err() != nil {
				t.Fatalf("cancelled within the bounds")
			}
			tc.write(d.work)
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
				t.Fatal("not cancelled past the bounds")
			}
			if !errors.Is(context.Cause(ctx), errJobDisk) || !dw.finish() {
				t.Errorf("cause %v, full %v", context.Cause(ctx), dw.full)
			}
		})
	}
}

// extraFileSandbox runs jobs unconfined, after writing a file no job
// declares in their directory.
type extraFileSandbox struct{}

func (extraFileSandbox) Layers() []string { return nil }

func (extraFileSandbox) CheckDir(string) error { return nil }

func (extraFileSandbox) Command(ctx context.Context, slot int, dir string, ro []string, tool string, args, env []string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `echo x > stray.txt && exec "$@"`, "sh", tool}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	return cmd, nil
}

// TestWorkerRefusesUndeclaredFiles: a job that succeeds but leaves a file
// other than its outputs is refused, and its directory goes.
func TestWorkerRefusesUndeclaredFiles(t *testing.T) {
	srv, store, clang := farmSetup(t)
	w := startWorkerWith(t, srv, WorkerOptions{Name: "w1", Clang: clang, Slots: 1, Sandbox: extraFileSandbox{}})
	c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir()})
	waitSlots(t, c, 1)
	dir := t.TempDir()
	res := sendJob(t, c, store, deviceCompile(t, clang, dir, filepath.Join(dir, "k.o")), 0)
	if res.Refused != "the job wrote undeclared files: stray.txt" {
		t.Errorf("refused %q, code %d; want the undeclared file named", res.Refused, res.Code)
	}
	ents, _ := os.ReadDir(w.opt.Dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), slotDirPrefix) {
			// A slot's directories: its tmpfs, emptied, and no inputs.
			in, _ := os.ReadDir(filepath.Join(w.opt.Dir, e.Name()))
			work, _ := os.ReadDir(filepath.Join(w.opt.Dir, e.Name(), "work"))
			if len(in) != 1 || len(work) != 0 {
				t.Errorf("left in the slot directory %s: %v, %d in its work directory", e.Name(), in, len(work))
			}
			continue
		}
		if !strings.HasPrefix(e.Name(), blobDirPrefix) {
			t.Errorf("left in the worker's directory: %s", e.Name())
		}
	}
}

// BenchmarkJobDir measures making and removing a job directory, plain
// and (as root) with its tmpfs (ms/job).
func BenchmarkJobDir(b *testing.B) {
	for _, tmpfs := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "tmpfs"}[tmpfs], func(b *testing.B) {
			if tmpfs && os.Geteuid() != 0 {
				b.Skip("mounting a tmpfs takes root")
			}
			dir := b.TempDir()
			start := time.Now()
			for b.Loop() {
				d, err := newJobDir(dir, tmpfs, 1<<30, 256)
				if err != nil {
					b.Fatal(err)
				}
				if err := d.remove(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/job")
		})
	}
}

// TestSlotJobDir: two jobs of one slot share its working directory one
// after the other, and the second never sees what the first wrote (its
// outputs under the same names included): the directory is emptied after
// each job, its inputs go, and a slot found not empty runs no job.
func TestSlotJobDir(t *testing.T) {
	slot, err := newNamedJobDir(t.TempDir(), slotDirPrefix, false, 1<<20, 16)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(slot.in)
	first, err := newSlotJobDir(slot)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(first.work, "o0-k.o"), []byte("first job's object"), 0o644)
	os.MkdirAll(filepath.Join(first.work, "sub", "deeper"), 0o755)
	os.WriteFile(filepath.Join(first.in, "f0-k.c"), []byte("int x;"), 0o644)
	if err := first.remove(); err != nil {
		t.Fatal(err)
	}
	second, err := newSlotJobDir(slot)
	if err != nil {
		t.Fatalf("the slot after its first job: %v", err)
	}
	for _, d := range []string{second.work, second.in} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("the second job finds %d entries in %s", len(ents), d)
		}
	}
	os.WriteFile(filepath.Join(second.work, "left"), nil, 0o644)
	if _, err := newSlotJobDir(slot); err == nil {
		t.Error("a slot whose directory is not empty got a job")
	}
}
