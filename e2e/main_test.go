// Package e2e holds end-to-end tests of the offcc driver against the real
// LLVM 22 toolchain: they compile the programs under testdata/e2e, run them
// with OpenMP offloading to the host device, and compare driver output with
// clang-22's.
//
// Which compiler is tested:
//
//   - OFFCC_TEST_CC=/usr/lib/llvm-22/bin/clang: reference mode. clang itself
//     is tested under the names offcc and offcc++ (symlinks), which validates
//     the test programs and expectations without offcc.
//     OFFCC_TEST_CXX may name the C++ compiler; by default offcc++ is a
//     symlink to OFFCC_TEST_CC (clang picks g++ mode from the "++" suffix).
//   - OFFCC=/path/to/bin/offcc: test a prebuilt offcc (make test sets this).
//   - neither: ./cmd/offcc is built into a temporary directory.
//
// All tests skip when /usr/lib/llvm-22/bin/clang is absent, and fail then
// under OFFCC_REQUIRE_LLVM=1 (as in CI).
package e2e

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

const (
	llvmBin = llvmtest.Bin
	llvmLib = llvmtest.Lib
	// offloadHost is the triple of OpenMP offload to the host device.
	offloadHost = "x86_64-pc-linux-gnu"
)

var (
	refClang   = filepath.Join(llvmBin, "clang")
	refClangXX = filepath.Join(llvmBin, "clang++")
)

// compiler describes the compiler under test.
type compiler struct {
	dir       string // holds offcc and offcc++; put it on PATH
	cc, cxx   string // dir/offcc, dir/offcc++
	reference bool   // true when clang is tested in place of offcc
	desc      string
}

var (
	workDir   string // removed by TestMain
	setupOnce sync.Once
	theComp   compiler
	setupErr  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "offcc-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	workDir = dir
	defer os.RemoveAll(dir)
	// offcc's plan cache goes into the work directory, not the user's.
	os.Setenv("OFFCC_CACHE_DIR", filepath.Join(dir, "cache"))
	// Build (or link) the compiler up front unless only listing tests or
	// LLVM 22 is not installed (then every test skips).
	if l := flag.Lookup("test.list"); (l == nil || l.Value.String() == "") && haveLLVM() {
		setupOnce.Do(setup)
		if setupErr != nil {
			fmt.Fprintln(os.Stderr, "e2e: setting up the compiler under test:", setupErr)
			return 1
		}
		fmt.Fprintln(os.Stderr, "e2e: testing", theComp.desc)
	}
	return m.Run()
}

func haveLLVM() bool { return llvmtest.Installed() }

// setup fills theComp: a directory with offcc and offcc++ in it.
func setup() {
	dir := filepath.Join(workDir, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		setupErr = err
		return
	}
	c := compiler{dir: dir, cc: filepath.Join(dir, "offcc"), cxx: filepath.Join(dir, "offcc++")}
	var target, targetXX string
	switch {
	case os.Getenv("OFFCC_TEST_CC") != "":
		target = os.Getenv("OFFCC_TEST_CC")
		targetXX = os.Getenv("OFFCC_TEST_CXX")
		if targetXX == "" {
			targetXX = target
		}
		c.reference = true
		c.desc = "reference compiler " + target + " (OFFCC_TEST_CC) as offcc/offcc++"
	case os.Getenv("OFFCC") != "":
		target = os.Getenv("OFFCC")
		c.desc = "prebuilt " + target + " (OFFCC)"
	default:
		target = filepath.Join(dir, "offcc.exe")
		cmd := exec.Command("go", "build", "-o", target, "github.com/offcc/offcc/cmd/offcc")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			setupErr = fmt.Errorf("go build ./cmd/offcc: %w", err)
			return
		}
		c.desc = "offcc built from ./cmd/offcc"
	}
	if targetXX == "" {
		targetXX = target
	}
	for _, l := range []struct{ link, to string }{{c.cc, target}, {c.cxx, targetXX}} {
		to, err := filepath.Abs(l.to)
		if err == nil {
			_, err = os.Stat(to)
		}
		if err == nil {
			err = os.Symlink(to, l.link)
		}
		if err != nil {
			setupErr = err
			return
		}
	}
	theComp = c
}

// getCompiler returns the compiler under test, skipping the test when LLVM 22
// is not installed.
func getCompiler(t testing.TB) compiler {
	t.Helper()
	if !haveLLVM() {
		llvmtest.Missing(t, "%s not found: LLVM 22 is not installed", refClang)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("end-to-end tests need linux/amd64 (offload to " + offloadHost + ")")
	}
	setupOnce.Do(setup)
	if setupErr != nil {
		t.Fatalf("setting up the compiler under test: %v", setupErr)
	}
	return theComp
}

// clangNames returns the option that makes offcc name OpenMP kernels as
// clang does (after the source files' inodes), for tests that compare its
// objects with clang's byte for byte; nothing when clang is under test.
func (c compiler) clangNames() []string {
	if c.reference {
		return nil
	}
	return []string{"--no-offload-stable-names"}
}

// offccOnly returns the compiler under test, skipping the test (saying
// why) when clang stands in for offcc.
func offccOnly(t testing.TB, why string) compiler {
	t.Helper()
	c := getCompiler(t)
	if c.reference {
		t.Skip(why)
	}
	return c
}

// compileTUs compiles each of testdata/e2e/twotu's translation units with
// -c and flags into dir and returns the objects.
func compileTUs(t testing.TB, c compiler, dir, tmp string, flags ...string) []string {
	t.Helper()
	var objs []string
	for _, tu := range []string{"tu_a", "tu_b"} {
		obj := filepath.Join(dir, tu+".o")
		cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
			args: args(openmpHost, flags, "-c", srcPath(t, "twotu/"+tu+".c"), "-o", obj)}.mustRun(t)
		objs = append(objs, obj)
	}
	return objs
}

// srcPath returns the path of a file under testdata/e2e.
func srcPath(t testing.TB, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "e2e", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// result is the outcome of a command.
type result struct {
	cmdline        string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("$ %s\nexit status %d\n--- stdout:\n%s--- stderr:\n%s", r.cmdline, r.code, r.stdout, r.stderr)
}

// cmdSpec is a command to run.
type cmdSpec struct {
	dir  string
	env  []string // added to (and overriding) os.Environ()
	name string
	args []string
}

func (c cmdSpec) run(t testing.TB) result {
	t.Helper()
	r, err := c.exec()
	if err != nil {
		t.Fatalf("running %s: %v", r.cmdline, err)
	}
	return r
}

// exec runs the command, without a testing.TB (for commands run at once
// from several goroutines). err is set when it could not run at all.
func (c cmdSpec) exec() (result, error) {
	cmd := exec.Command(c.name, c.args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{
		cmdline: shellJoin(append([]string{c.name}, c.args...)),
		stdout:  out.String(),
		stderr:  errb.String(),
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
		if r.code < 0 {
			r.code = 128 // killed by a signal
		}
		err = nil
	}
	return r, err
}

// mustRun runs the command and fails the test unless it exits 0.
func (c cmdSpec) mustRun(t testing.TB) result {
	t.Helper()
	r := c.run(t)
	if r.code != 0 {
		t.Fatalf("command failed:\n%s", r)
	}
	return r
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// tmpEnv returns a fresh directory for TMPDIR and the env entry setting it.
func tmpEnv(t testing.TB) (string, string) {
	t.Helper()
	d := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d, "TMPDIR=" + d
}

// offloadEnv is the environment in which offload programs run: offloading
// is mandatory so that a missing device image is an error, not a fallback.
var offloadEnv = []string{
	"OMP_TARGET_OFFLOAD=MANDATORY",
	"LD_LIBRARY_PATH=" + llvmLib,
}

// runOffloadProgram runs prog and checks that it exits 0 and reports that
// its target regions ran on the device.
func runOffloadProgram(t testing.TB, prog string) result {
	t.Helper()
	r := cmdSpec{dir: filepath.Dir(prog), env: offloadEnv, name: prog}.run(t)
	if r.code != 0 {
		t.Fatalf("offload program failed:\n%s", r)
	}
	if !strings.Contains(r.stdout, "on device: yes") {
		t.Fatalf("offload program did not report running on the device:\n%s", r)
	}
	t.Logf("%s: %s", filepath.Base(prog), strings.TrimSpace(r.stdout))
	return r
}

// LLVM 19 (issue 37): Debian's LLVM 19 beside 22 and clang 19's privately
// unpacked OpenMP runtime, as package llvmtest finds them.
const (
	llvm19Bin    = llvmtest.Bin19
	llvm19OMPLib = llvmtest.OMPLib19
)

var (
	llvm19Missing = llvmtest.Missing19
	llvm19Tool    = llvmtest.Tool19
	llvm19OpenMP  = llvmtest.OpenMP19
)
