package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/offcc/offcc/farm"
)

// TestFarmLLVM19: offcc driving LLVM 19 sends its jobs to a worker that
// runs LLVM 19 (offcc worker --llvm-dir=/usr/lib/llvm-19/bin), never to
// one of LLVM 22, and its objects are clang 19's byte for byte either way.
// A HIP compile for two GPUs is built beside an LLVM 22 worker alone,
// which takes none of its jobs, then beside an LLVM 19 worker too, which
// runs its device compiles and lld links; an OpenMP compile to the host
// device sends its host backend there (its front ends, whose kernels
// clang 19 names after inodes, stay here). The HIP compile passes clang
// 19's -cc1 an option 22's has not (-fpreserve-vec3-type): its jobs go
// only where the farm reads them with 19's option tables.
func TestFarmLLVM19(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	clang19 := llvm19Tool(t, "clang")
	srv := redistest.Start(t)
	hip := args(farmHIPFlags(t, "gfx906,gfx90a"), "-Xclang", "-fpreserve-vec3-type", "-c", srcPath(t, "../hip/kernels.hip"))
	// One OpenMP source for every build: clang 19 names its kernel after
	// the file's inode.
	ref := t.TempDir()
	ompSrc := filepath.Join(ref, "o.c")
	if err := os.WriteFile(ompSrc, []byte("int twice(int n) {\n  int x = n;\n#pragma omp target map(tofrom : x)\n  x *= 2;\n  return x;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	omp := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-O1", "-c", ompSrc}
	// clang19Object returns clang 19's object of a (which names no output).
	clang19Object := func(a []string) []byte {
		t.Helper()
		cmdSpec{dir: ref, env: farmEnv(t, ""), name: clang19, args: args(a, "-o", "ref.o")}.mustRun(t)
		return mustReadTB(t, filepath.Join(ref, "ref.o"))
	}
	hipWant, ompWant := clang19Object(hip), clang19Object(omp)

	// build compiles a (which names no output) with offcc and LLVM 19
	// through the farm and fails unless its object is want; it returns
	// the OFFCC_TRACE lines.
	build := func(what string, a []string, want []byte) []traceLine {
		t.Helper()
		b := newFarmBuild(t, c, srv.URL, []string{"OFFCC_REMOTE_EXEC_PICKUP=300ms"}, args(llvm19Dir, a, "-o", "k.o")...)
		start := time.Now()
		r := b.mustRun(t, c)
		t.Logf("%s: %v", what, time.Since(start))
		sameBytes(t, what+": offcc's object against clang 19's", b.obj(), want)
		if strings.Contains(r.stderr, "warning") {
			t.Errorf("%s: warnings:\n%s", what, r.stderr)
		}
		return parseTraceLines(r.stderr)
	}
	// onWorker returns the jobs of lines that ran on a worker, as "TOOL
	// KIND@WORKER".
	onWorker := func(lines []traceLine) []string {
		var out []string
		for _, l := range lines {
			if w := l.get("worker"); w != "" {
				out = append(out, l.tool+" "+l.get("kind")+"@"+w)
			}
		}
		return out
	}

	// An LLVM 22 worker alone: every job runs here.
	startWorker(t, c, srv.URL, "w22")
	waitWorkers(t, c, srv.URL, "w22")
	lines := build("HIP beside an LLVM 22 worker", hip, hipWant)
	if len(lines) == 0 {
		t.Errorf("HIP beside an LLVM 22 worker: no OFFCC_TRACE lines")
	}
	if remote := onWorker(lines); len(remote) != 0 {
		t.Errorf("HIP beside an LLVM 22 worker: jobs ran on a worker: %q", remote)
	}

	// An LLVM 19 worker beside it takes LLVM 19's jobs: with four slots,
	// all those of the HIP compile that are ready at once.
	startWorkerFlags(t, c, srv.URL, "w19", []string{"--llvm-dir=" + llvm19Bin, "--jobs", "4"})
	st := waitWorkers(t, c, srv.URL, "w22", "w19")
	w19, _ := st.worker("w19")
	w22, _ := st.worker("w22")
	if w19.Toolchain != farm.Toolchain(clang19) || w19.Toolchain == w22.Toolchain {
		t.Errorf("the LLVM 19 worker serves toolchain %q, want farm.Toolchain(%s) = %q, not the LLVM 22 worker's %q",
			w19.Toolchain, clang19, farm.Toolchain(clang19), w22.Toolchain)
	}
	remote := strings.Join(onWorker(build("HIP through an LLVM 19 worker", hip, hipWant)), "\n")
	for _, want := range []string{"clang device-compile@w19", "lld device-link@w19"} {
		if strings.Count(remote, want) != 2 {
			t.Errorf("HIP for two GPUs through an LLVM 19 worker: want two jobs %s, ran on workers:\n%s", want, remote)
		}
	}
	remote = strings.Join(onWorker(build("OpenMP through an LLVM 19 worker", omp, ompWant)), "\n")
	if remote != "clang backend@w19" {
		t.Errorf("OpenMP through an LLVM 19 worker: ran on workers %q, want its host backend on w19 alone", remote)
	}
	// (A worker's counts reach the status within a second.)
	st = waitStatus(t, c, srv.URL, "w19 has not done LLVM 19's five jobs", 10*time.Second, func(st farmStatusDoc) bool {
		w, _ := st.worker("w19")
		return w.Done >= 5
	})
	w19, _ = st.worker("w19")
	w22, _ = st.worker("w22")
	if w22.Done != 0 || w22.Refused != 0 || w22.Failed != 0 || w19.Refused != 0 || w19.Failed != 0 {
		t.Errorf("want LLVM 19's jobs done by w19 alone, none refused or failed: w19 %+v, w22 %+v", w19, w22)
	}
}
