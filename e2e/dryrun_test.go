package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cudaNoToolkitSrc is a CUDA translation unit that compiles without the
// CUDA headers (-nocudainc), for dry runs where no toolkit is needed.
const cudaNoToolkitSrc = `#define __global__ __attribute__((global))
struct dim3 { unsigned x, y, z; __attribute__((host,device)) dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {} };
extern "C" int cudaLaunchKernel(const void *, dim3, dim3, void **, unsigned long, struct CUstream_st *);
__global__ void k(float *x) { x[0] += 1.0f; }
`

// treeState maps every file and directory under root to its kind, mode
// and, for files, a digest of its contents.
func treeState(t *testing.T, root string) map[string]string {
	t.Helper()
	state := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) && path == root {
			return filepath.SkipAll
		}
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		what := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			what += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		state[path] = what
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// TestDryRunsWriteNothing: every dry-run option (-###,
// --print-job-graph=json|dot, -ccc-print-bindings, -ccc-print-phases) on
// compile and link lines, with and without offloading (OpenMP, CUDA, HIP),
// exits 0, prints its plan, and writes nothing: the working directory,
// TMPDIR and the cache directory are as they were, with no job trace and no
// compile commands database, though the environment asks for both.
func TestDryRunsWriteNothing(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("m.c", "int main(void) { return 0; }\n")
	write("omp.c", "int f(int x) {\n  int r = 0;\n#pragma omp target map(from: r)\n  r = x;\n  return r;\n}\n")
	write("k.cu", cudaNoToolkitSrc)
	write("k.hip", "#include \"hip_min.h\"\n__global__ void k(float *x) { x[0] += 1.0f; }\n")
	cuda := []string{"-x", "cuda", "--offload-arch=sm_80", "-nocudainc", "-nocudalib"}
	hip := []string{"-x", "hip", "--offload-arch=gfx90a,gfx1030", "-nogpuinc", "-nogpulib", "-I" + srcPath(t, "../hip")}
	// The objects the link lines link, made by clang.
	for _, b := range [][]string{
		{"-c", "m.c", "-o", "m.o"},
		args(openmpHost, "-c", "omp.c", "-o", "omp.o"),
		args(cuda, "--offload-new-driver", "-fgpu-rdc", "-foffload-lto", "-c", "k.cu", "-o", "kcuda.o"),
		args(hip, "-fgpu-rdc", "-c", "k.hip", "-o", "khip.o"),
	} {
		cmdSpec{dir: dir, name: refClangXX, args: b}.mustRun(t)
	}
	lines := map[string][]string{
		"plain compile":       {"-c", "m.c", "-o", "out.o"},
		"plain assembly":      {"-S", "m.c"},
		"plain preprocess":    {"-E", "m.c", "-o", "m.i"},
		"plain link":          {"m.o", "-o", "prog"},
		"openmp compile":      args(openmpHost, "-c", "omp.c", "-o", "out.o"),
		"openmp link":         args(openmpHost, "omp.o", "m.c", "-o", "prog"),
		"cuda compile":        args(cuda, "-c", "k.cu", "-o", "out.o"),
		"cuda old-driver rdc": args(cuda, "--no-offload-new-driver", "-fgpu-rdc", "-c", "k.cu", "-o", "out.o"),
		"cuda link":           args("--offload-new-driver", "-fgpu-rdc", "--offload-arch=sm_80", "-nocudalib", "kcuda.o", "m.o", "-o", "prog"),
		"hip compile":         args(hip, "-c", "k.hip", "-o", "out.o"),
		"hip link":            args("--hip-link", "-fgpu-rdc", "--offload-arch=gfx90a,gfx1030", "-nogpulib", "khip.o", "m.c", "-o", "prog"),
	}
	dryRuns := []string{"-###", "-ccc-print-bindings", "-ccc-print-phases", "--print-job-graph=json", "--print-job-graph=dot"}
	for _, name := range slices.Sorted(maps.Keys(lines)) {
		for _, dry := range dryRuns {
			if c.reference && strings.HasPrefix(dry, "--print-job-graph") {
				continue // offcc's own
			}
			t.Run(name+"/"+dry, func(t *testing.T) {
				tmp, tmpSetting := tmpEnv(t)
				cacheDir := filepath.Join(t.TempDir(), "cache")
				roots := []string{dir, tmp, cacheDir}
				before := map[string]map[string]string{}
				for _, r := range roots {
					before[r] = treeState(t, r)
				}
				// A job trace and a compile commands database would be
				// written by a build; a dry run writes neither.
				env := []string{tmpSetting, "OFFCC_CACHE_DIR=" + cacheDir, "OFFCC_TRACE=",
					"OFFCC_JOB_TRACE=" + filepath.Join(dir, "trace.json"), "OFFCC_COMPILE_COMMANDS=" + filepath.Join(dir, "compile_commands.json")}
				r := cmdSpec{dir: dir, env: env, name: c.cxx, args: args(lines[name], dry)}.run(t)
				if r.code != 0 {
					t.Fatalf("exit status %d:\n%s", r.code, r)
				}
				for _, root := range roots {
					after := treeState(t, root)
					for p, st := range after {
						if before[root][p] != st {
							t.Errorf("wrote %s", p)
						}
					}
					for p := range before[root] {
						if _, ok := after[p]; !ok {
							t.Errorf("removed %s", p)
						}
					}
				}
				switch dry {
				case "--print-job-graph=json":
					var doc struct {
						Actions []struct {
							Kind string `json:"kind"`
						} `json:"actions"`
					}
					if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Actions) == 0 {
						t.Errorf("no job graph in JSON (%v):\n%s", err, r)
					}
				case "--print-job-graph=dot":
					if !strings.HasPrefix(r.stdout, "digraph ") {
						t.Errorf("no dot graph:\n%s", r)
					}
				default:
					if strings.TrimSpace(r.stderr+r.stdout) == "" {
						t.Errorf("printed nothing:\n%s", r)
					}
				}
			})
		}
	}
}
