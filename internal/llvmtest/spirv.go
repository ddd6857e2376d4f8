package llvmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// SPIRVTool returns the path of a SPIRV-Tools program (spirv-val,
// spirv-link, spirv-dis) on PATH; see Missing for when it is absent.
func SPIRVTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s (SPIRV-Tools) is not installed: %v", name, err)
	}
	return p
}

// SYCLToSPIRV compiles the SYCL source text src with clang (LLVM 22's):
// the device compile (-fsycl -fsycl-device-only) and LLVM's SPIR-V
// backend (--target=triple), in dir, under name; it returns the module.
// It does not need a testing.TB, so that tests can compile once for many.
func SYCLToSPIRV(clang, dir, name, triple, src string) ([]byte, error) {
	cpp := filepath.Join(dir, name+".cpp")
	bc := filepath.Join(dir, name+".bc")
	spv := filepath.Join(dir, name+".spv")
	if err := os.WriteFile(cpp, []byte(src), 0o666); err != nil {
		return nil, err
	}
	for _, args := range [][]string{
		{"-fsycl", "-fsycl-device-only", cpp, "-o", bc},
		{"--target=" + triple, "-c", bc, "-o", spv},
	} {
		if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return os.ReadFile(spv)
}
