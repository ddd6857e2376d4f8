package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFirstFailureLikeClang: a CUDA or HIP build that fails prints what
// clang's prints, byte for byte (but for the driver's name and the random
// part of temporary file names), and exits as clang does: clang's driver
// stops such a build at its first failing job, so a syntax error is printed
// once (not once per arch and once for the host) and a failing device link
// prints the first arch's errors and "amdgcn-link command failed". Nothing
// is written.
func TestFirstFailureLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc's diagnostics with clang's")
	_, tmp := tmpEnv(t)
	hip := func(archs string) []string {
		return []string{"-x", "hip", "--offload-arch=" + archs, "-nogpuinc", "-nogpulib", "-I" + srcPath(t, "../hip")}
	}
	cuda := []string{"-x", "cuda", "--offload-arch=sm_70,sm_80", "-nocudainc", "-nocudalib"}
	for _, tc := range []struct {
		name, src string
		flags     []string
		want      []string // in offcc's stderr
	}{
		{"cuda-syntax", cudaNoToolkitSrc + "__global__ void bad(float *x) { x[0] = 1.0f }\n", cuda,
			[]string{"error: expected ';' after expression", "1 error generated when compiling for sm_70."}},
		{"hip-syntax", "#include \"hip_min.h\"\n__global__ void bad(float *x) { x[0] = 1.0f }\n", hip("gfx906,gfx90a,gfx1030,gfx1100"),
			[]string{"error: expected ';' after expression", "1 error generated when compiling for gfx1030."}},
		{"hip-device-link", "#include \"hip_min.h\"\nextern __device__ int undefined_fn();\n__global__ void k(int *x) { x[0] = undefined_fn(); }\n", hip("gfx90a,gfx1030"),
			[]string{"lld: error: undefined hidden symbol: undefined_fn()", "error: amdgcn-link command failed with exit code 1 (use -v to see invocation)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ext := ".hip"
			if strings.HasPrefix(tc.name, "cuda") {
				ext = ".cu"
			}
			src := filepath.Join(dir, "k"+ext)
			if err := os.WriteFile(src, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			line := args(tc.flags, "-O2", "-c", src, "-o", "k.o")
			theirs := cmdSpec{dir: dir, env: []string{tmp}, name: refClangXX, args: line}.run(t)
			ours := cmdSpec{dir: dir, env: []string{tmp, "OFFCC_CACHE=0"}, name: c.cxx, args: line}.run(t)
			temp := regexp.MustCompile(`\S*/k-gfx\w+-[0-9a-f]+\.o`)
			norm := func(s string) string {
				return temp.ReplaceAllString(strings.ReplaceAll(s, "clang++: ", "offcc++: "), "TEMP.o")
			}
			if theirs.code == 0 || ours.code != theirs.code {
				t.Errorf("offcc exits %d, clang %d", ours.code, theirs.code)
			}
			if norm(ours.stderr) != norm(theirs.stderr) {
				t.Errorf("offcc prints\n%s\nclang prints\n%s", ours.stderr, theirs.stderr)
			}
			for _, w := range tc.want {
				if strings.Count(ours.stderr, w) != 1 {
					t.Errorf("offcc's stderr has %q %d times, want once:\n%s", w, strings.Count(ours.stderr, w), ours.stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "k.o")); err == nil {
				t.Error("k.o was written")
			}
		})
	}
}

// TestDriverErrorsLikeClang: a command line clang's driver refuses (a
// source that does not exist, beside one that does, plain and under CUDA)
// prints what clang prints, "no input files" included where clang prints
// it (its -###, which offcc plans with, leaves that line out), exits as
// clang does and compiles nothing.
func TestDriverErrorsLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc's diagnostics with clang's")
	_, tmp := tmpEnv(t)
	for _, tc := range []struct {
		name string
		cc   [2]string // offcc's, clang's
		line []string
	}{
		{"c-missing", [2]string{c.cc, refClang}, []string{"-c", "nope.c"}},
		{"c-missing-and-real", [2]string{c.cc, refClang}, []string{"-c", "nope.c", "real.c"}},
		{"cuda-missing", [2]string{c.cxx, refClangXX}, []string{"-x", "cuda", "--offload-arch=sm_70,sm_80", "-nocudainc", "-nocudalib", "-c", "nope.cu"}},
		{"openmp-missing", [2]string{c.cc, refClang}, []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", "nope.c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "real.c"), []byte("int f(void) { return 1; }\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ours := cmdSpec{dir: dir, env: []string{tmp}, name: tc.cc[0], args: tc.line}.run(t)
			theirs := cmdSpec{dir: dir, env: []string{tmp}, name: tc.cc[1], args: tc.line}.run(t)
			norm := func(s, name string) string { return strings.ReplaceAll(s, filepath.Base(name)+": ", "CC: ") }
			if theirs.code == 0 || ours.code != theirs.code {
				t.Errorf("offcc exits %d, clang %d", ours.code, theirs.code)
			}
			if norm(ours.stderr, tc.cc[0]) != norm(theirs.stderr, tc.cc[1]) {
				t.Errorf("offcc prints\n%s\nclang prints\n%s", ours.stderr, theirs.stderr)
			}
			if !strings.Contains(ours.stderr, "no input files") && strings.Contains(theirs.stderr, "no input files") {
				t.Error("offcc leaves out clang's \"no input files\"")
			}
			if _, err := os.Stat(filepath.Join(dir, "real.o")); err == nil {
				t.Error("real.o was written")
			}
		})
	}
}
