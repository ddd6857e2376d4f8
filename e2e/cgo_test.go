package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// goTool returns the go command: the one on PATH, else the one of the Go
// installation that built the test.
func goTool(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no go command on PATH or in GOROOT: %v", err)
	}
	return p
}

// TestCgo builds testdata/cgo, a Go program whose C function holds an
// OpenMP target region, with CC=offcc (on PATH) as cgo's compiler and
// external linker, and runs it offloaded.
//
// The offload flags are in #cgo CFLAGS and LDFLAGS; cgo allows
// -fopenmp but not -fopenmp-targets=, so CGO_CFLAGS_ALLOW and
// CGO_LDFLAGS_ALLOW admit it. The copy of the package gets a file with a
// fresh constant, so that go build compiles its C file with the compiler
// under test instead of taking the object from the build cache (whose key
// names CC=offcc and clang's version, not offcc's).
func TestCgo(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	goCmd := goTool(t)
	dir := filepath.Join(t.TempDir(), "cgo")
	if err := os.CopyFS(dir, os.DirFS(repoPath(t, "testdata/cgo"))); err != nil {
		t.Fatal(err)
	}
	nonce := fmt.Sprintf("package main\n\n// buildNonce makes each test build compile this package.\nconst buildNonce = %q\n", time.Now().Format(time.RFC3339Nano))
	if err := os.WriteFile(filepath.Join(dir, "nonce.go"), []byte(nonce), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(buildEnv(t),
		"PATH="+c.dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CC=offcc", "CGO_ENABLED=1",
		"CGO_CFLAGS_ALLOW=-fopenmp-targets=.*", "CGO_LDFLAGS_ALLOW=-fopenmp-targets=.*",
		// No network, no toolchain switch, no workspace or flags from outside.
		"GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off",
	)
	prog := filepath.Join(dir, "cgo-offload")
	start := time.Now()
	r := cmdSpec{dir: dir, env: env, name: goCmd, args: []string{"build", "-x", "-o", prog, "."}}.run(t)
	if r.code != 0 {
		t.Fatalf("go build failed:\n%s", r)
	}
	t.Logf("go build: %.1fs", time.Since(start).Seconds())
	// go build -x prints the commands it runs: offcc compiled the C file
	// with the offload flags, and linked the program.
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^(TERM='dumb' )?offcc .*-fopenmp-targets=` + offloadHost + ` .*-c saxpy\.c$`),
		regexp.MustCompile(`(?m)^.*/link .*-extld=offcc `),
	} {
		if !want.MatchString(r.stderr) {
			t.Errorf("go build -x output has no line matching %s", want)
		}
	}
	if t.Failed() {
		t.Logf("%s", r)
	}
	out := runOffloadProgram(t, prog)
	if !slices.Contains(strings.Split(out.stdout, "\n"), "saxpy sum: 1000000.0") {
		t.Errorf("wrong result:\n%s", out)
	}
}
