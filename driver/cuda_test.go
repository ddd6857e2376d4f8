package driver

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
)

const cudaSource = `#define __global__ __attribute__((global))
struct dim3 { unsigned x, y, z; __attribute__((host,device)) dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {} };
extern "C" int cudaLaunchKernel(const void *, dim3, dim3, void **, unsigned long, void *);
__global__ void k(int *p) { *p = 1; }
`

// TestPlanCUDAEdges checks the typed plan of clang 22's jobs for a CUDA
// compile for two sm archs (no CUDA toolkit needed to plan): per arch the
// device compile then ptxas, fatbinary over both cubins, and the host
// compile with no edge from the device work (it compiles with an empty fat
// binary); the embed step puts the fat binary into .nv_fatbin after both.
func TestPlanCUDAEdges(t *testing.T) {
	// An empty --cuda-path and PATH hide an installed toolkit: clang then
	// names NVIDIA's tools without a directory.
	t.Setenv("PATH", t.TempDir())
	plan, _, err := planSource(t, actions.CUDA, "k.cu", cudaSource,
		"-x", "cuda", "--offload-arch=sm_80,sm_90", "-nocudainc", "-nocudalib", "--cuda-path="+t.TempDir(), "-c", "k.cu", "-o", "k.o")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"device-compile sm_80", "device-assemble sm_80", "device-compile sm_90", "device-assemble sm_90", "fatbinary", "compile", "embed"}
	if got := kinds(plan.Graph); !slices.Equal(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	a := plan.Graph.Actions
	as80, as90, fat, host, embed := a[1], a[3], a[4], a[5], a[6]
	if d := fat.Deps(); !slices.Equal(d, []*actions.Action{as80, as90}) {
		t.Errorf("fatbinary deps %v", d)
	}
	if d := host.Deps(); len(d) != 0 || !slices.Contains(host.Command, "/dev/null") || !slices.Contains(host.Command, "-cuid=1234abcd") {
		t.Errorf("host compile: deps %v, command %q", d, host.Command)
	}
	if d := embed.Deps(); !slices.Equal(d, []*actions.Action{host, fat}) || !slices.Contains(embed.Command, "--cuda-fatbin") || embed.Outputs[0].Path != "k.o" {
		t.Errorf("embed: deps %v, command %q", d, embed.Command)
	}
	// Without NVIDIA's tools the build stops before it starts, naming the
	// first tool missing and how to get PTX only.
	missing := func(name string) (string, error) {
		if name == "ptxas" || name == "fatbinary" {
			return "", errors.New("not found")
		}
		return "/usr/bin/" + name, nil
	}
	var me *MissingToolError
	if err := checkTools(plan.Graph, missing); !errors.As(err, &me) || me.Tool != "ptxas" || !strings.Contains(err.Error(), "--cuda-device-only -S") {
		t.Errorf("checkTools without ptxas: %v", err)
	}
	found := func(name string) (string, error) { return "/opt/cuda/bin/" + name, nil }
	if err := checkTools(plan.Graph, found); err != nil {
		t.Errorf("checkTools with the tools: %v", err)
	}
}
