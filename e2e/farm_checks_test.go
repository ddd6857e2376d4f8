//go:build linux

package e2e

// The worker's check against a trusted client key (a compromised laptop):
// lld jobs that would switch lld to another driver than ld.lld's ELF
// driver, and LLVM options that write files the job does not declare, are
// refused without running, leave nothing on the worker, and the worker
// goes on serving.

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/offcc/offcc/farm"
)

// filesNamed returns the paths under dir of the files named one of names
// or ending in one of suffixes.
func filesNamed(t *testing.T, dir string, names []string, suffixes ...string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		for _, n := range names {
			if d.Name() == n {
				found = append(found, p)
			}
		}
		for _, s := range suffixes {
			if strings.HasSuffix(d.Name(), s) {
				found = append(found, p)
			}
		}
		return nil
	})
	return found
}

// dirWatch sees what is made in a directory (not below it), by inotify:
// a worker makes each job's directory in its --dir once the job passed
// its check, so a job refused by the check makes nothing there.
type dirWatch struct{ fd int }

func watchDir(t *testing.T, dir string) *dirWatch {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_CREATE|syscall.IN_MOVED_TO); err != nil {
		t.Fatalf("inotify %s: %v", dir, err)
	}
	return &dirWatch{fd: fd}
}

// made returns the names made in the directory since the last call.
func (w *dirWatch) made(t *testing.T) []string {
	t.Helper()
	var names []string
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(w.fd, buf)
		if err == syscall.EAGAIN || n <= 0 {
			return names
		}
		if err != nil {
			t.Fatalf("inotify: %v", err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			names = append(names, strings.TrimRight(string(name), "\x00"))
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// TestFarmChecks: with the trusted client key, lld jobs with -flavor
// (link, darwin, wasm, and gnu, which clients no longer send) or with a
// word that switches lld to its MinGW driver (-m i386pep), and jobs with
// the LLVM options that write files (-amdgpu-module-splitting-print-
// partition-summaries=F, -amdgpu-module-splitting-print-module-dotcfg=F,
// -x86-lvi-load-dot-only with +lvi-load-hardening), as -mllvm of clang
// -cc1 and of lld and as lld's -plugin-opt, are refused: the result says
// why, has no output, the job took no run time, the worker's status counts
// a refusal more, the canary is absent, nothing was made in the worker's
// --dir while the job was handled (not even its job directory: inotify),
// and no file of the option's is anywhere under it. A well-formed compile
// runs before and after (and makes its job directory there, which the
// watch sees), and a real build's jobs run on the worker afterwards.
func TestFarmChecks(t *testing.T) {
	t.Parallel()
	ft, wdir := newFarmTargetDir(t, "checks")
	watch := watchDir(t, wdir)
	refused := int64(0)
	status := func(t *testing.T) farm.WorkerInfo {
		t.Helper()
		st := waitStatus(t, ft.c, ft.srv.URL, "the worker's status does not count the refusals", 10*time.Second, func(st farmStatusDoc) bool {
			w, ok := st.worker("checks")
			return ok && w.Refused >= refused
		})
		w, _ := st.worker("checks")
		return w
	}

	// The control: a well-formed compile runs, and the status counts it
	// done, not refused.
	control := func(t *testing.T) {
		t.Helper()
		watch.made(t)
		res, e := ft.jobs.run(t, ft.cc1(), ft.src)
		if res.Refused != "" || res.Code != 0 || len(e.Blobs) != 1 {
			t.Fatalf("a well-formed compile: refused %q, exit code %d, %d blobs; stderr:\n%s", res.Refused, res.Code, len(e.Blobs), farmHead(res.Stderr))
		}
		if len(watch.made(t)) == 0 {
			t.Errorf("a well-formed compile made nothing in the worker's directory: the watch does not see job directories")
		}
	}
	control(t)
	if w := status(t); w.Refused != 0 {
		t.Fatalf("the worker counts %d refusals before any", w.Refused)
	}
	// A well-formed link as clients send it now (no -flavor) passes the
	// check. (It runs once the worker runs lld as ld.lld; before, lld's
	// generic driver fails it.)
	if res, _ := ft.jobs.run(t, ft.link(), ft.obj); res.Refused != "" {
		t.Errorf("a well-formed link without -flavor is refused: %s", res.Refused)
	} else if res.Code != 0 {
		t.Logf("a well-formed link without -flavor ran and failed (exit code %d): %s", res.Code, farmHead(res.Stderr))
	}

	link := func(a ...string) farm.Job {
		j := ft.link()
		j.Args = a
		return j
	}
	type attack struct {
		name  string
		job   farm.Job
		files []string
		why   string   // what the refusal names
		left  []string // names of files the job would leave, if run
	}
	canary := ft.canary
	attacks := []attack{
		// One lld flavour.
		{"-flavor link", link("-flavor", "link", "-mllvm:-version", "-out:"+canary, "-lldmap:"+canary, ft.obj), []string{ft.obj},
			"-flavor is not run on workers (lld runs only as ld.lld", nil},
		{"-flavor darwin", link("-flavor", "darwin", "-arch", "x86_64", "-dylib", "-o", ft.out, "-map", canary, ft.obj), []string{ft.obj},
			"-flavor is not run on workers (lld runs only as ld.lld", nil},
		{"-flavor wasm", link("-flavor", "wasm", "-o", ft.out, ft.obj), []string{ft.obj},
			"-flavor is not run on workers (lld runs only as ld.lld", nil},
		{"-flavor gnu", link("-flavor", "gnu", "-shared", "-o", ft.out, ft.obj), []string{ft.obj},
			"-flavor is not run on workers (lld runs only as ld.lld", nil},
		{"-m i386pep", ft.link("-m", "i386pep", "--out-implib", canary), []string{ft.obj},
			"-m i386pep switches lld to its MinGW driver", nil},
		{"-m i386pep first", link("-m", "i386pep", "-shared", "-o", ft.out, ft.obj), []string{ft.obj},
			"-m i386pep switches lld to its MinGW driver", nil},
	}
	// The LLVM options that write files, each spelling.
	for _, w := range []struct {
		name string
		cc1  []string // extra arguments of the compile
		lld  []string // and of the link
		opt  string   // the option, with its leading dash
		left []string
	}{
		{"summaries", nil, []string{"--lto-partitions=2"}, "-amdgpu-module-splitting-print-partition-summaries=F-summaries", []string{"F-summaries"}},
		{"dotcfg", nil, []string{"--lto-partitions=2"}, "-amdgpu-module-splitting-print-module-dotcfg=F-dotcfg", []string{"F-dotcfg"}},
		// The compile is for x86_64: run, it would write lvi.plus1.dot.
		{"lvi", []string{"-target-feature", "+lvi-load-hardening"}, []string{"-plugin-opt=-mattr=+lvi-load-hardening"},
			"-x86-lvi-load-dot-only", []string{"lvi.plus1.dot"}},
	} {
		why := "an LLVM option outside the allow-list"
		attacks = append(attacks,
			attack{"cc1 -mllvm " + w.name, ft.cc1(args(w.cc1, "-mllvm", w.opt)...), []string{ft.src}, why, w.left},
			attack{"lld -mllvm " + w.name, ft.link(args(w.lld, "-mllvm", w.opt)...), []string{ft.obj}, why, w.left},
			attack{"lld -mllvm= " + w.name, ft.link(args(w.lld, "-mllvm="+w.opt)...), []string{ft.obj}, why, w.left},
			attack{"lld -plugin-opt=- " + w.name, ft.link(args(w.lld, "-plugin-opt="+w.opt)...), []string{ft.obj}, why, w.left},
			attack{"lld -plugin-opt - " + w.name, ft.link(args(w.lld, "-plugin-opt", w.opt)...), []string{ft.obj}, why, w.left},
		)
	}
	for _, a := range attacks {
		t.Run(strings.ReplaceAll(a.name, " ", "_"), func(t *testing.T) {
			watch.made(t)
			res, e := ft.jobs.run(t, a.job, a.files...)
			if made := watch.made(t); len(made) != 0 {
				t.Errorf("while the job was handled, %q were made in the worker's directory", made)
			}
			if res.Refused == "" || !strings.Contains(res.Refused, a.why) {
				t.Errorf("want a refusal naming %q; got refused %q, exit code %d, stderr:\n%s", a.why, res.Refused, res.Code, farmHead(res.Stderr))
			}
			if res.Refused != "" {
				refused++
			}
			if len(e.Blobs) != 0 || res.RunMS != 0 {
				t.Errorf("the refused job ran: %d output blobs, %d ms", len(e.Blobs), res.RunMS)
			}
			ft.harmless(t, res, e)
			if w := status(t); w.Refused != refused {
				t.Errorf("the worker's status counts %d refusals, want %d", w.Refused, refused)
			}
			if left := filesNamed(t, wdir, append(a.left, filepath.Base(canary)), ".dot"); len(left) != 0 {
				t.Errorf("the job left %q under the worker's directory", left)
			}
			if _, err := os.Stat(canary); err == nil {
				t.Errorf("the job wrote %s", canary)
			}
		})
	}
	control(t)
	ft.stillServes(t)
}
