package e2e

import (
	"bytes"
	"os"
	"path/filepath"
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
			cmdSpec{dir: dir, env: []string{tmp}, name: cc, args: args(tc.flags, "-c", src, "-o", out)}.mustRun(t)
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
