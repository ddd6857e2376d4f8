package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// collideSrc returns the path of a file under testdata/e2e/collide.
func collideSrc(t *testing.T, rel string) string { return srcPath(t, filepath.Join("collide", rel)) }

// TestKernelCollisionRefused: a program whose objects give two different
// OpenMP kernels one name is refused at offcc's link, in one line naming
// both objects and the kernel, and nothing is written; clang links such a
// program, which then runs one kernel for both. The objects: one file
// compiled twice under different macros, by clang (its kernels are named
// after the file's inode and the line). offcc's own objects of that case,
// and of recursive make (a/foo.c and b/foo.c, each compiled from its own
// directory by relative name), have kernels of their own, and their
// programs give the right numbers: TestSameFileTwiceKernels,
// TestBaseDirRecursiveMakeKernels.
func TestKernelCollisionRefused(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "offcc's link stage")
	_, tmp := tmpEnv(t)
	dir := t.TempDir()
	for _, v := range []string{"1", "100"} {
		cmdSpec{dir: dir, env: []string{tmp}, name: refClang,
			args: args(openmpHost, "-DSCALE="+v, "-DNAME=f"+v, "-c", collideSrc(t, "scale.c"), "-o", "scale"+v+".o")}.mustRun(t)
	}
	// clang links the second program, which runs one kernel for both
	// (this is what offcc refuses).
	cmdSpec{dir: dir, env: []string{tmp}, name: refClang, args: args(openmpHost, "scale1.o", "scale100.o", collideSrc(t, "scale_main.c"), "-o", "clang_prog")}.mustRun(t)
	if r := (cmdSpec{dir: dir, env: offloadEnv, name: filepath.Join(dir, "clang_prog")}).run(t); r.code == 0 {
		t.Errorf("clang's program gives the right numbers, so the test shows nothing:\n%s", r)
	}
	for _, tc := range []struct {
		name    string
		objects []string
		main    string
		kernel  string
	}{
		{"one file twice", []string{"scale1.o", "scale100.o"}, "scale_main.c", "the OpenMP kernel of scale at line 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(openmpHost, tc.objects, collideSrc(t, tc.main), "-o", "prog")}.run(t)
			if r.code == 0 {
				t.Fatalf("the link succeeded:\n%s", r)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "offcc: error: "+tc.kernel) {
				t.Errorf("want one line naming the kernel (%q):\n%s", tc.kernel, r.stderr)
			}
			for _, o := range tc.objects {
				if !strings.Contains(r.stderr, " "+o+" ") {
					t.Errorf("the error does not name %s:\n%s", o, r.stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "prog")); err == nil {
				t.Error("prog was written")
			}
		})
	}
}

// TestSharedKernelLinks: one header's kernel (with a declare-target helper
// and a parallel region) in two objects, compiled alike, links and runs,
// whether offcc or clang compiled the objects and at every optimisation
// level, though the objects lay the kernel out at different places.
func TestSharedKernelLinks(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	_, tmp := tmpEnv(t)
	for _, cc := range []string{c.cc, refClang} {
		for _, opt := range []string{"-O0", "-O2", "-O0 -g"} {
			dir := t.TempDir()
			var objs []string
			for _, tu := range []string{"tu1", "tu2"} {
				cmdSpec{dir: dir, env: []string{tmp}, name: cc,
					args: args(openmpHost, strings.Fields(opt), "-c", collideSrc(t, tu+".c"), "-o", tu+".o")}.mustRun(t)
				objs = append(objs, tu+".o")
			}
			cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(openmpHost, objs, collideSrc(t, "shared_main.c"), "-o", "prog")}.mustRun(t)
			if r := runOffloadProgram(t, filepath.Join(dir, "prog")); !strings.Contains(r.stdout, "x[1] 8") {
				t.Errorf("%s %s: the program printed\n%s", filepath.Base(cc), opt, r)
			}
		}
	}
}
