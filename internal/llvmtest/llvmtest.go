// Package llvmtest locates the LLVM 22 installation that offcc's tests run
// against. Without it a test is skipped, except where OFFCC_REQUIRE_LLVM=1
// (set by CI): there a missing tool fails the test, so that a machine
// without LLVM cannot pass by skipping everything that matters.
package llvmtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Bin is the directory of Debian's LLVM 22 tools.
const Bin = "/usr/lib/llvm-22/bin"

// Lib is the directory of LLVM 22's libraries (libomptarget and its
// plugins), for LD_LIBRARY_PATH.
const Lib = "/usr/lib/llvm-22/lib"

// EnvRequire names the variable that turns skips into failures.
const EnvRequire = "OFFCC_REQUIRE_LLVM"

// Required reports whether tests must fail rather than skip when LLVM 22
// is missing.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// Installed reports whether LLVM 22's clang is installed.
func Installed() bool {
	_, err := os.Stat(filepath.Join(Bin, "clang"))
	return err == nil
}

// Tool returns the path of an LLVM 22 tool in Bin, skipping the test when
// it is absent (failing it under OFFCC_REQUIRE_LLVM=1).
func Tool(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Bin, name)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "%s is not installed (LLVM 22): %v", name, err)
	}
	return p
}

// Clang returns LLVM 22's clang (see Tool).
func Clang(t testing.TB) string {
	t.Helper()
	return Tool(t, "clang")
}

// Missing skips the test with the message, or fails it when
// OFFCC_REQUIRE_LLVM=1. Either way it does not return, so, like t.Skip and
// t.Fatal, it (and Tool and Clang) must be called from the test's goroutine.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf(format+" (and %s=1)", append(args, EnvRequire)...)
	}
	t.Skipf(format, args...)
}
