package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// genKernels writes a C file with n OpenMP target regions: enough device
// work that a build takes a while.
func genKernels(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	for k := 0; k < n; k++ {
		fmt.Fprintf(&b, "void k%d(float *a, float *c, float s) {\n#pragma omp target teams distribute parallel for map(to: a[0:4096]) map(from: c[0:4096])\n  for (int i = 0; i < 4096; i++) c[i] = a[i] * s + %d.0f;\n}\n", k, k)
	}
	p := filepath.Join(dir, "kernels.c")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func dumpOffloading(t *testing.T, obj string) []byte {
	t.Helper()
	out := obj + ".offloading"
	cmd := exec.Command(filepath.Join(llvmBin, "llvm-objcopy"), "--dump-section=.llvm.offloading="+out, obj, obj+".copy")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("llvm-objcopy --dump-section on %s: %v\n%s", obj, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestEmbeddedSectionMatchesClang checks that the .llvm.offloading section
// offcc adds after the host backend holds the same bytes as the one clang
// embeds, and that clang's own link stage accepts offcc's object.
func TestEmbeddedSectionMatchesClang(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	src := srcPath(t, "basic.c")
	ours := filepath.Join(dir, "ours.o")
	theirs := filepath.Join(dir, "theirs.o")
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(openmpHost, c.clangNames(), "-c", src, "-o", ours)}.mustRun(t)
	cmdSpec{dir: dir, env: []string{tmp}, name: refClang, args: args(openmpHost, "-c", src, "-o", theirs)}.mustRun(t)
	if a, b := dumpOffloading(t, ours), dumpOffloading(t, theirs); !bytes.Equal(a, b) {
		t.Fatalf(".llvm.offloading differs from clang's: %d bytes vs %d", len(a), len(b))
	}
	prog := filepath.Join(dir, "linked-by-clang")
	cmdSpec{dir: dir, env: []string{tmp}, name: refClang, args: args(openmpHost, ours, "-o", prog)}.mustRun(t)
	runOffloadProgram(t, prog)
}

// TestParallelMatchesSerial checks that running the jobs at once changes
// nothing in the output: -j1 and -j4 objects are byte-identical.
func TestParallelMatchesSerial(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "-j is an offcc option")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	var objs [][]byte
	for _, j := range []string{"-j1", "-j4"} {
		obj := filepath.Join(dir, "k"+j+".o")
		cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
			args: args(j, "-fopenmp", "--offload-arch=gfx906,gfx90a", "-nogpulib", "-O2", "-c", srcPath(t, "basic.c"), "-o", obj)}.mustRun(t)
		data, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, data)
	}
	if !bytes.Equal(objs[0], objs[1]) {
		t.Error("-j1 and -j4 built different objects")
	}
}

// TestInterruptLeavesNothing interrupts a build with SIGINT while its device
// compiles run: offcc must exit 130, leave nothing at -o and no temporaries,
// and take its compilers down with it.
func TestInterruptLeavesNothing(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "clang is not the subject here")
	dir := t.TempDir()
	tmpDir, tmp := tmpEnv(t)
	src := genKernels(t, dir, 60)
	out := filepath.Join(dir, "kernels.o")
	cmd := exec.Command(c.cc, "-fopenmp", "--offload-arch=gfx906,gfx90a,gfx1030", "-nogpulib", "-O2", "-c", src, "-o", out)
	cmd.Env = append(os.Environ(), tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until a compiler runs with this build's temporaries.
	deadline := time.Now().Add(30 * time.Second)
	for len(processesMentioning(tmpDir)) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no compiler job started within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if err == nil || code != 130 {
		t.Fatalf("exit status %d after SIGINT, want 130\n%s", code, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("interrupted build left %s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".kernels.o*")); len(left) > 0 {
		t.Errorf("interrupted build left temporaries beside the output: %v", left)
	}
	if entries, _ := os.ReadDir(tmpDir); len(entries) > 0 {
		t.Errorf("interrupted build left %d entries in TMPDIR", len(entries))
	}
	if procs := processesMentioning(tmpDir); len(procs) > 0 {
		t.Errorf("compilers still running after offcc exited: %v", procs)
	}
}

// TestJobserverBoundsCompilers builds two translation units for three
// devices each under make -j2: with make's jobserver, offcc never runs
// more compilers than make allows in total.
func TestJobserverBoundsCompilers(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "clang runs its jobs one at a time")
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("GNU make not installed")
	}
	dir := t.TempDir()
	tmpDir, tmp := tmpEnv(t)
	src := genKernels(t, dir, 20)
	data, _ := os.ReadFile(src)
	os.WriteFile(filepath.Join(dir, "a.c"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "b.c"), bytes.ReplaceAll(data, []byte("void k"), []byte("void b")), 0o644)
	mk := fmt.Sprintf("all: a.o b.o\n%%.o: %%.c\n\t+%s -fopenmp --offload-arch=gfx906,gfx90a,gfx1030 -nogpulib -O1 -c $< -o $@\n", c.cc)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
	cmd := exec.Command(makePath, "-j2")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), tmp)
	var outb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &outb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	peak := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("make -j2 failed: %v\n%s", err, outb.String())
			}
			if peak > 2 {
				t.Errorf("saw %d compilers at once under make -j2", peak)
			}
			if peak == 0 {
				t.Error("never saw a compiler running")
			}
			t.Logf("peak compilers at once: %d", peak)
			return
		case <-tick.C:
			if n := len(processesMentioning(tmpDir)); n > peak {
				peak = n
			}
		}
	}
}

// processesMentioning lists the clang -cc1 processes whose command line
// names path (this test's TMPDIR).
func processesMentioning(path string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Contains(cmdline, []byte("\x00-cc1\x00")) && bytes.Contains(cmdline, []byte(path)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
