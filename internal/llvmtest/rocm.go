package llvmtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Debian 12's ROCm 5.2 HIP (libamdhip64-dev, rocm-device-libs: make deps)
// installs under /usr: the headers in /usr/include/hip, the runtime in the
// multiarch library directory, and the device libraries' bitcode in
// ROCmBitcode.
const (
	// ROCmPath is what --rocm-path and --hip-path name.
	ROCmPath = "/usr"
	// ROCmBitcode holds rocm-device-libs' bitcode (hip.bc, ocml.bc, ...).
	ROCmBitcode = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"
	// ROCmArchs are the devices ROCmHIPFlags compiles for: one of wave64
	// and one of wave32, each with its device libraries.
	ROCmArchs = "gfx90a,gfx1030"
)

// rocmFiles are what ROCmHIPFlags needs installed.
var rocmFiles = []string{
	"/usr/include/hip/hip_runtime.h",
	"/usr/lib/x86_64-linux-gnu/libamdhip64.so",
	filepath.Join(ROCmBitcode, "hip.bc"),
	filepath.Join(ROCmBitcode, "ocml.bc"),
	filepath.Join(ROCmBitcode, "ockl.bc"),
	filepath.Join(ROCmBitcode, "oclc_isa_version_90a.bc"),
	filepath.Join(ROCmBitcode, "oclc_isa_version_1030.bc"),
}

// ROCm skips the test unless Debian's ROCm HIP packages are installed (see
// Missing: under OFFCC_REQUIRE_LLVM=1 it fails instead), and unless LLVM
// 22's clang is.
func ROCm(t testing.TB) {
	t.Helper()
	Clang(t)
	if err := ROCmMissing(); err != nil {
		Missing(t, "%v", err)
	}
}

// ROCmMissing says what of Debian's ROCm HIP that ROCmHIPFlags needs is
// missing, or returns nil: for a test that builds its HIP part only where
// ROCm is installed (and fails under OFFCC_REQUIRE_LLVM=1 otherwise).
func ROCmMissing() error {
	for _, f := range rocmFiles {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("ROCm HIP is not installed (libamdhip64-dev, rocm-device-libs: make deps): %w", err)
		}
	}
	return nil
}

// ROCmHIPFlags returns the flags with which clang 22 compiles HIP source
// against Debian's ROCm 5.2 for ROCmArchs (-x hip first, --offload-arch
// last), as a project has to write them: clang does not find this ROCm's
// device libraries (Debian puts them in a multiarch directory), so they
// are named one by one, each arch with its own (-Xarch_); code object
// version 5 goes with oclc_abi_version_500; and ROCm 5.2's headers read
// __AMDGCN_WAVEFRONT_SIZE, which clang 22 no longer defines.
func ROCmHIPFlags() []string {
	lib := func(name string) string { return "--hip-device-lib=" + name + ".bc" }
	return []string{
		"-x", "hip", "--rocm-path=" + ROCmPath, "--hip-path=" + ROCmPath, "--rocm-device-lib-path=" + ROCmBitcode,
		"-mcode-object-version=5",
		"-D__AMDGCN_WAVEFRONT_SIZE=64", "-Xarch_gfx1030", "-U__AMDGCN_WAVEFRONT_SIZE", "-Xarch_gfx1030", "-D__AMDGCN_WAVEFRONT_SIZE=32",
		"--hip-device-lib-path=" + ROCmBitcode,
		lib("hip"), lib("ocml"), lib("ockl"), lib("oclc_unsafe_math_off"), lib("oclc_finite_only_off"),
		lib("oclc_correctly_rounded_sqrt_on"), lib("oclc_abi_version_500"),
		"-Xarch_gfx90a", lib("oclc_wavefrontsize64_on"), "-Xarch_gfx90a", lib("oclc_isa_version_90a"),
		"-Xarch_gfx1030", lib("oclc_wavefrontsize64_off"), "-Xarch_gfx1030", lib("oclc_isa_version_1030"),
		"--offload-arch=" + ROCmArchs,
	}
}

// ROCmLinkFlags returns the flags of a link of objects compiled with
// ROCmHIPFlags: clang adds ROCm's runtime library (-lamdhip64) and its
// directory.
func ROCmLinkFlags() []string {
	return []string{"--hip-link", "--rocm-path=" + ROCmPath, "--offload-arch=" + ROCmArchs}
}
