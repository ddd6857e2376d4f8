package llvmtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Debian's LLVM 19, which scripts/deps.sh installs beside 22, with clang
// 19's OpenMP runtime unpacked (not installed: libomp-19-dev conflicts with
// libomp-22-dev) into a private prefix by scripts/deps-llvm19.sh. The tests
// that need it skip without it, and fail then under OFFCC_REQUIRE_LLVM19=1
// (as in CI), as OFFCC_REQUIRE_LLVM does for LLVM 22.
const (
	// Bin19 is the directory of Debian's LLVM 19 tools.
	Bin19 = "/usr/lib/llvm-19/bin"
	// OMPLib19 is the directory of clang 19's OpenMP runtime (libomp.so.5,
	// libomptarget.so.19.1, libomptarget.devicertl.a), for -L and
	// LD_LIBRARY_PATH; its clang/19/include holds omp.h.
	OMPLib19 = "/opt/offcc/libomp-19/usr/lib/llvm-19/lib"
	// EnvRequire19 is the variable that turns a missing LLVM 19 from a
	// skip into a failure.
	EnvRequire19 = "OFFCC_REQUIRE_LLVM19"
)

// Missing19 skips the test with the message, or fails it under
// OFFCC_REQUIRE_LLVM19=1. Like t.Skip it does not return.
func Missing19(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(EnvRequire19) == "1" {
		t.Fatalf(format+" (and %s=1)", append(args, EnvRequire19)...)
	}
	t.Skipf(format, args...)
}

// Tool19 returns the path of an LLVM 19 tool, skipping the test when it
// is absent (see Missing19).
func Tool19(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Bin19, name)
	if _, err := os.Stat(p); err != nil {
		Missing19(t, "%s is not installed (LLVM 19: scripts/deps.sh installs it): %v", name, err)
	}
	return p
}

// OpenMP19 checks that clang 19's OpenMP runtime is unpacked in OMPLib19,
// skipping the test otherwise (see Missing19).
func OpenMP19(t testing.TB) {
	t.Helper()
	for _, f := range []string{"libomp.so.5", "libomptarget.so.19.1", "libomptarget.devicertl.a", "clang/19/include/omp.h"} {
		if _, err := os.Stat(filepath.Join(OMPLib19, f)); err != nil {
			Missing19(t, "clang 19's OpenMP runtime is not unpacked (scripts/deps.sh unpacks libomp-19-dev privately): %v", err)
		}
	}
}
