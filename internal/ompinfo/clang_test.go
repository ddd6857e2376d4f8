package ompinfo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/llvmtest"
)

// The source of the clang tests. hostOnly is code that no target region
// uses; the target regions stay on the same lines whatever it is.
const clangSrc = `#include <stdio.h>
#include "host.h"
#pragma omp declare target
int gcount = 3;
int dev_helper(int x) { return x + gcount; }
#pragma omp end declare target
void k1(float *a, int n) {
#pragma omp target teams distribute parallel for map(tofrom: a[0:n])
  for (int i = 0; i < n; i++) a[i] = dev_helper((int)a[i]);
}
void k2(float *a, int n, float s) {
#pragma omp target map(tofrom: a[0:n])
  for (int i = 0; i < n; i++) a[i] += s;
}
%s
int main(void) { float a[16] = {0}; k1(a, 16); k2(a, 16, 1.0f); HOST(a); return 0; }
`

const (
	host1   = "static inline void host_only(float *a) { a[0] += 1; }\n#define HOST(a) host_only(a)\n"
	host2   = "#include <stdlib.h>\nstatic inline void host_only(float *a) { a[0] = a[0] * 7 + abs((int)a[1]); puts(\"changed\"); }\ndouble extra = 1.5;\n#define HOST(a) host_only(a)\n"
	tail1   = "int host_fn(int x) { return x * 3; }"
	tail2   = "int host_fn(int x) { return x * 5 + 2; }\nstatic double more(double d) { return d * d; }\ndouble use_more(double d) { return more(d); }"
	tailTgt = "void k3(int *b, int n) {\n#pragma omp target map(tofrom: b[0:n])\n  for (int i = 0; i < n; i++) b[i] += 1;\n}"
)

// offloadFlags are the offload targets the clang tests compile for: a GPU
// (device IR) and the host itself (a device object file).
var offloadFlags = map[string][]string{
	"amdgcn": {"--offload-arch=gfx906", "-nogpulib"},
	"x86_64": {"-fopenmp-targets=x86_64-pc-linux-gnu"},
}

// clangTU is one translation unit in a temporary directory.
type clangTU struct {
	t     *testing.T
	clang string
	dir   string
	flags []string
}

func newClangTU(t *testing.T, flags []string) *clangTU {
	return &clangTU{t: t, clang: llvmtest.Clang(t), dir: t.TempDir(), flags: flags}
}

// write rewrites a.c and host.h in place: the target regions' metadata
// holds the source file's device and inode numbers, so a new file (as an
// editor's rename would make) is a different file to clang.
func (u *clangTU) write(tail, header string) {
	u.t.Helper()
	for name, text := range map[string]string{
		"a.c":    fmt.Sprintf(clangSrc, tail),
		"host.h": header,
	} {
		if err := os.WriteFile(filepath.Join(u.dir, name), []byte(text), 0o644); err != nil {
			u.t.Fatal(err)
		}
	}
}

func (u *clangTU) run(args ...string) {
	u.t.Helper()
	cmd := exec.Command(u.clang, args...)
	cmd.Dir = u.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		u.t.Fatalf("%s %s: %v\n%s", u.clang, strings.Join(args, " "), err, out)
	}
}

// hostIR builds the host front end's bitcode (unoptimised, as in a normal
// offload compile) and returns its path.
func (u *clangTU) hostIR(name string) string {
	u.t.Helper()
	args := append([]string{"-fopenmp"}, u.flags...)
	args = append(args, "-O2", "--offload-host-only", "-c", "-emit-llvm",
		"-Xclang", "-disable-llvm-passes", "a.c", "-o", name)
	u.run(args...)
	return filepath.Join(u.dir, name)
}

// device runs the device compile of the current source (the cc1 command
// that the driver would run for a normal -c compile) with the given host
// IR, and returns its output. The driver itself cannot be told which host
// IR to use: with --offload-device-only it builds its own and passes that
// last.
func (u *clangTU) device(hostIR, name string) []byte {
	u.t.Helper()
	args := append([]string{"-fopenmp"}, u.flags...)
	args = append(args, "-O2", "-c", "a.c", "-o", "a.o", "-###")
	cmd := exec.Command(u.clang, args...)
	cmd.Dir = u.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		u.t.Fatalf("%s -###: %v\n%s", u.clang, err, out)
	}
	var cc1 []string
	for _, line := range strings.Split(string(out), "\n") {
		argv, ok := parseHashes(line)
		if ok && len(argv) > 2 && argv[1] == "-cc1" && slices.Contains(argv, "-fopenmp-is-target-device") {
			cc1 = argv
			break
		}
	}
	if cc1 == nil {
		u.t.Fatalf("no device cc1 command in:\n%s", out)
	}
	for i := 1; i+1 < len(cc1); i++ {
		switch cc1[i] {
		case "-fopenmp-host-ir-file-path":
			cc1[i+1] = hostIR
		case "-o":
			cc1[i+1] = name
		}
	}
	u.run(cc1[1:]...)
	res, err := os.ReadFile(filepath.Join(u.dir, name))
	if err != nil {
		u.t.Fatal(err)
	}
	return res
}

// parseHashes splits a command line as clang -### prints it: every
// argument in double quotes, with '"', '\\' and '$' escaped by a backslash.
func parseHashes(line string) ([]string, bool) {
	var argv []string
	line = strings.TrimSpace(line)
	for line != "" {
		if line[0] != '"' {
			return nil, false
		}
		var arg strings.Builder
		i := 1
		for ; i < len(line) && line[i] != '"'; i++ {
			if line[i] == '\\' && i+1 < len(line) {
				i++
			}
			arg.WriteByte(line[i])
		}
		if i >= len(line) {
			return nil, false
		}
		argv = append(argv, arg.String())
		line = strings.TrimLeft(line[i+1:], " ")
	}
	return argv, len(argv) > 0
}

func TestClangHostIR(t *testing.T) {
	dis := llvmtest.Tool(t, "llvm-dis")
	ctx := context.Background()
	digest := func(t *testing.T, path string) string {
		t.Helper()
		d, err := Digest(ctx, dis, path)
		if err != nil {
			t.Fatal(err)
		}
		// The lazily loaded module gives the digest of the whole one.
		full, err := exec.Command(dis, "-o", "-", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		if fd, err := DigestText(bytes.NewReader(full)); err != nil || fd != d {
			t.Errorf("digest of the full disassembly: %s %v, with --materialize-metadata: %s", fd, err, d)
		}
		return d
	}
	for _, arch := range []string{"amdgcn", "x86_64"} {
		t.Run(arch, func(t *testing.T) {
			u := newClangTU(t, offloadFlags[arch])
			u.write(tail1, host1)
			h1 := u.hostIR("h1.bc")
			u.write(tail2, host2)
			h2 := u.hostIR("h2.bc")
			u.write(tail1+"\n"+tailTgt, host1)
			h3 := u.hostIR("h3.bc")

			b1, _ := os.ReadFile(h1)
			b2, _ := os.ReadFile(h2)
			if bytes.Equal(b1, b2) {
				t.Fatal("test bug: host-only changes left the host IR as it was")
			}
			d1, d2, d3 := digest(t, h1), digest(t, h2), digest(t, h3)
			if d1 != d2 {
				t.Errorf("host-only changes changed the digest: %s, %s", d1, d2)
			}
			if d1 == d3 {
				t.Errorf("a new target region kept the digest %s", d1)
			}

			// The claim the digest rests on: with the source as it is now,
			// the device compile's output is the same with either host IR
			// of equal digest, and differs with the other.
			u.write(tail2, host2)
			o1 := u.device(h1, "d1.out")
			o2 := u.device(h2, "d2.out")
			if !bytes.Equal(o1, o2) {
				t.Error("device output differs between host IR with equal digests")
			}
			u.write(tail1+"\n"+tailTgt, host1)
			o3 := u.device(h3, "d3.out")
			o31 := u.device(h1, "d31.out")
			if bytes.Equal(o3, o31) {
				t.Error("device output is the same with host IR of different digests (new target region)")
			}
		})
	}
}

func TestClangNotBitcode(t *testing.T) {
	dis := llvmtest.Tool(t, "llvm-dis")
	path := filepath.Join(t.TempDir(), "h.bc")
	if err := os.WriteFile(path, []byte("not bitcode"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Digest(context.Background(), dis, path)
	if err == nil {
		t.Fatal("no error for a file that is not bitcode")
	}
	t.Logf("error (expected): %v", err)
}

// BenchmarkDigest digests the host IR of a translation unit with 120
// target regions, as scripts/bench-multiarch.sh generates it.
func BenchmarkDigest(b *testing.B) {
	clang := llvmtest.Clang(b)
	dis := llvmtest.Tool(b, "llvm-dis")
	dir := b.TempDir()
	var src strings.Builder
	src.WriteString("#define LEN 4096\n")
	ops := []string{"a[i] * s + b[i]", "a[i] - b[i] * s", "(a[i] + b[i]) * (s + %d)", "a[i] * a[i] - s * b[i]"}
	for k := 0; k < 120; k++ {
		op := ops[k%4]
		if k%4 == 2 {
			op = fmt.Sprintf(op, k)
		}
		fmt.Fprintf(&src, "void kernel_%d(float *a, float *b, float *c, float s) {\n"+
			"#pragma omp target teams distribute parallel for map(to: a[0:LEN], b[0:LEN]) map(from: c[0:LEN])\n"+
			"  for (int i = 0; i < LEN; i++)\n    c[i] = %s + %d.0f;\n}\n\n", k, op, k)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.c"), []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(clang, "-fopenmp", "--offload-arch=gfx906,gfx908,gfx90a,gfx1030", "-nogpulib", "-O2",
		"--offload-host-only", "-c", "-emit-llvm", "-Xclang", "-disable-llvm-passes", "bench.c", "-o", "host.bc")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	host := filepath.Join(dir, "host.bc")
	if fi, err := os.Stat(host); err == nil {
		b.Logf("host IR: %d bytes", fi.Size())
	}
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := Digest(ctx, dis, host); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/digest")
}
