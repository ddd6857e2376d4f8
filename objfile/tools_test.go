package objfile

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// run runs a command in dir and returns its standard output, failing the
// test on error.
func run(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, name, args...)
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", filepath.Base(name), args, err, out)
	}
	return out
}

func runErr(dir string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// offloadSrc is an OpenMP program with one target region.
const offloadSrc = `
int answer(int x) {
  int r = 0;
#pragma omp target map(from: r) map(to: x)
  r = x * 2;
  return r;
}
int main(void) { return answer(21) == 42 ? 0 : 1; }
`

const offloadTriple = "x86_64-pc-linux-gnu"

// offloadObjects compiles offloadSrc twice in dir: full.o, which clang gives
// a .llvm.offloading section itself, and host.o, the host-only compilation
// of the same file without it.
func offloadObjects(t testing.TB, dir string) (full, host string) {
	t.Helper()
	clang := llvmtest.Clang(t)
	writeFile(t, filepath.Join(dir, "off.c"), []byte(offloadSrc))
	run(t, dir, clang, "-fopenmp", "-fopenmp-targets="+offloadTriple, "-c", "off.c", "-o", "full.o")
	run(t, dir, clang, "-fopenmp", "-fopenmp-targets="+offloadTriple, "--offload-host-only", "-c", "off.c", "-o", "host.o")
	return filepath.Join(dir, "full.o"), filepath.Join(dir, "host.o")
}
