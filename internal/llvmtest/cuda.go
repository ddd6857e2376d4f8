package llvmtest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// EnvRequireCUDA is the variable that turns a missing CUDA toolkit from a
// skip into a failure (CI sets it after make deps-cuda).
const EnvRequireCUDA = "OFFCC_REQUIRE_CUDA"

// CUDAToolkit says where NVIDIA's tools are.
type CUDAToolkit struct {
	// Ptxas, Fatbinary, Nvlink, Cuobjdump and Nvcc are the tools' paths.
	Ptxas, Fatbinary, Nvlink, Cuobjdump, Nvcc string
}

// CUDAMissing says which tool of the CUDA toolkit CUDA needs is not on
// PATH, or returns nil: for a test that builds its CUDA part only where
// the toolkit is installed (and fails under OFFCC_REQUIRE_CUDA=1
// otherwise).
func CUDAMissing() error {
	for _, name := range []string{"ptxas", "fatbinary", "nvlink", "cuobjdump", "nvcc"} {
		if _, err := exec.LookPath(name); err != nil {
			return fmt.Errorf("the CUDA toolkit's %s is not on PATH (make deps-cuda installs it)", name)
		}
	}
	return nil
}

// CUDA returns the CUDA toolkit on PATH (Debian's nvidia-cuda-toolkit puts
// it in /usr/bin), skipping the test when a tool is missing, or failing it
// under OFFCC_REQUIRE_CUDA=1.
func CUDA(t testing.TB) CUDAToolkit {
	t.Helper()
	var k CUDAToolkit
	for _, tool := range []struct {
		name string
		path *string
	}{{"ptxas", &k.Ptxas}, {"fatbinary", &k.Fatbinary}, {"nvlink", &k.Nvlink}, {"cuobjdump", &k.Cuobjdump}, {"nvcc", &k.Nvcc}} {
		p, err := exec.LookPath(tool.name)
		if err != nil {
			if os.Getenv(EnvRequireCUDA) == "1" {
				t.Fatalf("the CUDA toolkit's %s is not on PATH (make deps-cuda installs it) and %s=1", tool.name, EnvRequireCUDA)
			}
			t.Skipf("the CUDA toolkit's %s is not on PATH (make deps-cuda installs it)", tool.name)
		}
		*tool.path = p
	}
	return k
}
