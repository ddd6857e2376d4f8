package llvmtest_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// helperEnv selects what TestMissingHelper does in the subprocess that
// TestMissing starts: "missing" calls Missing, "tool" asks Tool for a tool
// that does not exist.
const helperEnv = "OFFCC_LLVMTEST_HELPER"

// TestMissingHelper is not a test of its own: it runs only in TestMissing's
// subprocess, where helperEnv is set.
func TestMissingHelper(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "":
		return
	case "missing":
		llvmtest.Missing(t, "fake-tool is not installed (%s)", "helper")
	case "tool":
		llvmtest.Tool(t, "offcc-no-such-llvm-tool")
	default:
		t.Fatalf("unknown %s=%q", helperEnv, os.Getenv(helperEnv))
	}
	t.Error("the test went on after a missing tool")
}

// TestMissing runs TestMissingHelper in a subprocess with and without
// OFFCC_REQUIRE_LLVM=1: a missing tool skips the test, or fails it when
// LLVM is required.
func TestMissing(t *testing.T) {
	for _, mode := range []string{"missing", "tool"} {
		for _, require := range []bool{false, true} {
			name := mode + "/optional"
			if require {
				name = mode + "/required"
			}
			t.Run(name, func(t *testing.T) {
				out, err := runHelper(t, mode, require)
				var exit *exec.ExitError
				if err != nil && !errors.As(err, &exit) {
					t.Fatalf("running %s: %v", os.Args[0], err)
				}
				if require {
					if err == nil || !strings.Contains(out, "--- FAIL: TestMissingHelper") {
						t.Errorf("with %s=1: err = %v, want a non-zero exit and --- FAIL; output:\n%s", llvmtest.EnvRequire, err, out)
					}
					if !strings.Contains(out, llvmtest.EnvRequire+"=1") {
						t.Errorf("failure message does not name %s=1; output:\n%s", llvmtest.EnvRequire, out)
					}
				} else if err != nil || !strings.Contains(out, "--- SKIP: TestMissingHelper") {
					t.Errorf("without %s: err = %v, want exit 0 and --- SKIP; output:\n%s", llvmtest.EnvRequire, err, out)
				}
				want := "fake-tool is not installed (helper)"
				if mode == "tool" {
					want = "offcc-no-such-llvm-tool is not installed (LLVM 22)"
				}
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			})
		}
	}
}

// runHelper runs this test binary's TestMissingHelper in the given mode,
// with OFFCC_REQUIRE_LLVM=1 when require is set and unset otherwise, and
// returns its combined output.
func runHelper(t *testing.T, mode string, require bool) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMissingHelper$", "-test.v", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, llvmtest.EnvRequire+"=") && !strings.HasPrefix(kv, helperEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, helperEnv+"="+mode)
	if require {
		cmd.Env = append(cmd.Env, llvmtest.EnvRequire+"=1")
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestRequired checks that only OFFCC_REQUIRE_LLVM=1 requires LLVM.
func TestRequired(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "true": false, "1": true} {
		t.Setenv(llvmtest.EnvRequire, v)
		if got := llvmtest.Required(); got != want {
			t.Errorf("%s=%q: Required() = %v, want %v", llvmtest.EnvRequire, v, got, want)
		}
	}
}

// TestInstalled checks Tool and Clang on this machine: with LLVM 22 they
// return paths in Bin (without it the test is skipped, or failed under
// OFFCC_REQUIRE_LLVM=1).
func TestInstalled(t *testing.T) {
	clang := llvmtest.Clang(t)
	if !llvmtest.Installed() {
		t.Errorf("Clang returned %s but Installed() is false", clang)
	}
	if want := llvmtest.Bin + "/clang"; clang != want {
		t.Errorf("Clang() = %s, want %s", clang, want)
	}
	if p := llvmtest.Tool(t, "llvm-ar"); p != llvmtest.Bin+"/llvm-ar" {
		t.Errorf("Tool(llvm-ar) = %s", p)
	}
}
