package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOffloadObjectsLikeClang: offcc's host objects are clang's byte for
// byte although offcc compiles the host beside the device code and embeds
// the device images afterwards: the host compile gets an empty offload
// binary and the embed step fills its .llvm.offloading section in place.
func TestOffloadObjectsLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	_, tmp := tmpEnv(t)
	src := srcPath(t, "../../examples/hello_offload.c")
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"openmp-host", []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-O2"}},
		{"openmp-amdgpu", []string{"-fopenmp", "--offload-arch=gfx90a,gfx1030", "-nogpulib", "-O2"}},
	} {
		dir := t.TempDir()
		var objs [][]byte
		for _, cc := range []string{refClang, c.cc} {
			out := filepath.Join(dir, filepath.Base(cc)+".o")
			flags := tc.flags
			if cc == c.cc {
				flags = args(flags, c.clangNames())
			}
			cmdSpec{dir: dir, env: []string{tmp}, name: cc, args: args(flags, "-c", src, "-o", out)}.mustRun(t)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, b)
		}
		if !bytes.Equal(objs[0], objs[1]) {
			t.Errorf("%s: offcc's object (%d bytes) differs from clang's (%d bytes)", tc.name, len(objs[1]), len(objs[0]))
		}
	}
}

// TestOffloadProgramsLikeClang: OpenMP programs linked by offcc's link
// stage are clang's byte for byte: the same device link (with the inputs
// clang-linker-wrapper forwards from the host link), the same offload
// binary, and the same registration object, which LLVM's wrapper
// code-generates in-process and offcc with llc. The programs run.
func TestOffloadProgramsLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	_, tmp := tmpEnv(t)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"openmp-host", []string{"-fopenmp", "-fopenmp-targets=" + offloadHost, "-O2"}},
		{"openmp-host-g", []string{"-fopenmp", "-fopenmp-targets=" + offloadHost, "-O0", "-g"}},
	} {
		dir := t.TempDir()
		for _, cc := range []string{refClang, c.cc} {
			flags := tc.flags
			if cc == c.cc {
				flags = args(flags, c.clangNames())
			}
			cmdSpec{dir: dir, env: []string{tmp}, name: cc,
				args: args(flags, srcPath(t, "../../examples/hello_offload.c"), "-o", filepath.Base(cc)+".prog")}.mustRun(t)
		}
		theirs, _ := os.ReadFile(filepath.Join(dir, filepath.Base(refClang)+".prog"))
		ours, _ := os.ReadFile(filepath.Join(dir, filepath.Base(c.cc)+".prog"))
		if len(theirs) == 0 || !bytes.Equal(theirs, ours) {
			t.Errorf("%s: offcc's program (%d bytes) differs from clang's (%d bytes)", tc.name, len(ours), len(theirs))
		}
		r := cmdSpec{dir: dir, env: offloadEnv, name: filepath.Join(dir, filepath.Base(c.cc)+".prog")}.mustRun(t)
		if !strings.Contains(r.stdout, "omp_is_initial_device() == 0") {
			t.Errorf("%s: the target region did not run on the device:\n%s", tc.name, r)
		}
	}
}
