package target

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// triples are spellings for the normalisation tests: reordered, empty,
// unknown and Windows components, versions and object formats.
var triples = []string{
	"x86_64-unknown-linux-gnu", "x86_64-linux-gnu", "x86_64--linux", "x86_64-pc-linux-gnu",
	"x86_64-gnu-linux", "x86_64-linux", "x86_64", "amd64-unknown-linux-gnu",
	"amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-", "amdgcn-amd-amdhsa-unknown", "amdgcn-amd-amdpal",
	"nvptx64-nvidia-cuda", "nvptx64-nvidia-cuda-", "nvptx-nvidia-cuda", "nvptx64-cuda-nvidia",
	"spirv64-amd-amdhsa", "spirv64-intel-unknown", "spirv64v1.3-unknown-vulkan", "spir64-unknown-unknown",
	"x86_64-w64-mingw32", "i686-pc-windows", "x86_64-pc-windows-msvc", "x86_64-pc-windows-gnu",
	"x86_64-pc-win32", "x86_64-pc-windows-elf", "x86_64-pc-cygwin", "i686-pc-windows-msvc-elf",
	"x86_64-unknown-linux-gnu-elf", "x86_64-unknown-linux-gnux32", "aarch64-linux-android34",
	"armv7a-unknown-linux-gnueabihf", "arm-linux-androideabi", "armv7-linux-androideabi21",
	"arm-suse-linux-gnueabi", "arm64-apple-darwin", "arm64-apple-macos14", "riscv64-unknown-linux-gnu",
	"powerpc64le-unknown-linux-gnu", "s390x-ibm-zos", "wasm32-unknown-wasi", "x86_64-unknown-unknown-gnu",
	"x86_64-cuda-nvidia", "linux-x86_64", "gnu-linux-x86_64", "pc-x86_64-linux", "-x86_64",
	"x86_64-none-elf", "arm-none-eabi", "aarch64-none-elf", "x86_64-elf",
	"x86_64-unknown-linux-gnu-x-y", "", "-", "--", "unknown-unknown-unknown-unknown",
}

// TestNormalizeMatchesOpt compares Normalize with llvm::Triple::normalize
// as opt applies it to -mtriple (CanonicalForm::ANY). opt rejects unknown
// architectures, so TestNormalize covers those.
func TestNormalizeMatchesOpt(t *testing.T) {
	opt := llvmtest.Tool(t, "opt")
	dir := t.TempDir()
	empty := filepath.Join(dir, "e.ll")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, tr := range triples {
		if tr == "" {
			continue // opt ignores an empty -mtriple
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out, err := exec.Command(opt, "-mtriple="+tr, "-S", empty, "-o", "-").Output()
			if err != nil {
				t.Errorf("opt -mtriple=%s: %v", tr, err)
				return
			}
			want, ok := "", false
			for _, l := range strings.Split(string(out), "\n") {
				if s, found := strings.CutPrefix(l, `target triple = "`); found {
					want, ok = strings.TrimSuffix(s, `"`), true
				}
			}
			if !ok {
				t.Errorf("opt -mtriple=%s printed no triple:\n%s", tr, out)
				return
			}
			if got := Normalize(tr); got != want {
				t.Errorf("Normalize(%q) = %q, opt %q", tr, got, want)
			}
		}()
	}
	wg.Wait()
}

func TestNormalize(t *testing.T) {
	for _, c := range []struct {
		in   string
		form int
		want string
	}{
		{"x86_64-linux-gnu", 0, "x86_64-unknown-linux-gnu"},
		{"x86_64--linux", 0, "x86_64-unknown-linux"},
		{"amdgcn-amd-amdhsa", 0, "amdgcn-amd-amdhsa"},
		{"foo-bar-baz", 0, "foo-bar-baz"},
		{"foo", 0, "foo"},
		{"", 0, "unknown"},
		{"x86_64-w64-mingw32", 0, "x86_64-w64-windows-gnu"},
		{"i686-pc-windows-msvc-elf", 0, "i686-pc-windows-msvc-elf"},
		// The forms bundle IDs use.
		{"amdgcn-amd-amdhsa-", 3, "amdgcn-amd-amdhsa"},
		{"amdgcn-amd-amdhsa-gnu", 3, "amdgcn-amd-amdhsa"},
		{"nvptx64-nvidia-cuda-", 4, "nvptx64-nvidia-cuda-unknown"},
		{"x86_64-unknown-linux-gnu", 4, "x86_64-unknown-linux-gnu"},
		{"x86_64-linux-gnu-", 4, "x86_64-unknown-linux-gnu"},
		{"x86_64-gnu-linux-", 4, "x86_64-unknown-linux-gnu"},
		{"x86_64-cuda-nvidia-", 4, "x86_64-nvidia-cuda-unknown"},
		{"x86_64-pc-windows-", 4, "x86_64-pc-windows-msvc"},
		{"x86_64-w64-mingw32-", 4, "x86_64-w64-windows-gnu"},
		{"x86_64-unknown-linux-elf", 4, "x86_64-unknown-linux-elf"},
		{"aarch64-unknown-linux-android34", 4, "aarch64-unknown-linux-android34"},
		{"x86_64", 4, "x86_64-unknown-unknown-unknown"},
		{"x86_64-unknown-linux-gnu", 3, "x86_64-unknown-linux"},
		{"x86_64-unknown-linux-gnu", 5, "x86_64-unknown-linux-gnu-unknown"},
	} {
		got := NormalizeForm(c.in, c.form)
		if got != c.want {
			t.Errorf("NormalizeForm(%q, %d) = %q, want %q", c.in, c.form, got, c.want)
		}
		if c.form == 0 && Normalize(c.in) != got {
			t.Errorf("Normalize(%q) = %q, NormalizeForm 0 %q", c.in, Normalize(c.in), got)
		}
	}
	// Normalising is idempotent.
	for _, tr := range triples {
		n := Normalize(tr)
		if n2 := Normalize(n); n2 != n {
			t.Errorf("Normalize(%q) = %q, Normalize of that %q", tr, n, n2)
		}
	}
}

func TestEqual(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu", true},
		{"x86_64-unknown-linux-gnu", "amd64-unknown-linux-gnu", true},
		{"x86_64-unknown-linux-gnu", "x86_64-foo-linux-gnu", true}, // unknown vendors parse alike
		{"x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu-elf", true},
		{"x86_64-unknown-linux-gnu", "x86_64-unknown-linux6.1-gnu", true},
		{"x86_64-unknown-linux", "x86_64-unknown-linux-", true},
		{"amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-", true},
		{"amdgcn-amd-amdhsa-", "amdgcn-amd-amdhsa-unknown", true},
		{"x86_64-pc-linux-gnu", "x86_64-unknown-linux-gnu", false},
		{"x86_64-linux-gnu", "x86_64-unknown-linux-gnu", false}, // parsed in place, not normalised
		{"x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl", false},
		{"x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", false},
		{"nvptx64-nvidia-cuda", "nvptx-nvidia-cuda", false},
		{"x86_64-pc-windows-msvc", "x86_64-pc-windows-elf", false}, // format: coff vs elf
	} {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("Equal(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Equal(c.b, c.a); got != c.want {
			t.Errorf("Equal(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

func TestComponents(t *testing.T) {
	for _, c := range []struct {
		comp string
		arch bool
		os   string
	}{
		{"x86_64", true, ""}, {"amd64", true, ""}, {"armv7a", true, ""}, {"thumbv7m", true, ""},
		{"arm64e", true, ""}, {"spirv64v1.3", true, ""}, {"dxilv1.6", true, ""}, {"bpf", true, ""},
		{"armv", false, ""}, {"x86-64", false, ""}, {"", false, ""}, {"unknown", false, ""},
		{"linux", false, "linux"}, {"linux6.1", false, "linux"}, {"amdhsa", false, "amdhsa"},
		{"cuda", false, "cuda"}, {"win32", false, "windows"}, {"windows", false, "windows"},
		{"macos14", false, "macosx"}, {"visionos", false, "xros"}, {"mingw32", false, ""},
		{"gnu", false, ""}, {"unknown", false, ""},
	} {
		if got := KnownArch(c.comp); got != c.arch {
			t.Errorf("KnownArch(%q) = %v", c.comp, got)
		}
		if got := ParseOS(c.comp); got != c.os {
			t.Errorf("ParseOS(%q) = %q, want %q", c.comp, got, c.os)
		}
	}
}

func TestArchPredicates(t *testing.T) {
	for _, c := range []struct {
		triple                          string
		arch                            string
		amdgpu, nvptx, spirv, spir, gpu bool
	}{
		{"amdgcn-amd-amdhsa", "amdgcn", true, false, false, false, true},
		{"r600-unknown-unknown", "r600", true, false, false, false, true},
		{"nvptx64-nvidia-cuda", "nvptx64", false, true, false, false, true},
		{"nvptx-nvidia-cuda", "nvptx", false, true, false, false, true},
		{"spirv64-amd-amdhsa", "spirv64", false, false, true, false, true},
		{"spirv32-unknown-unknown", "spirv32", false, false, true, false, true},
		{"spirv-unknown-vulkan", "spirv", false, false, true, false, true},
		{"spirv64v1.3-unknown-unknown", "spirv64v1.3", false, false, true, false, true},
		{"spirv1.6-unknown-vulkan1.3", "spirv1.6", false, false, true, false, true},
		{"spir64-unknown-unknown", "spir64", false, false, false, true, false},
		{"spir-unknown-unknown", "spir", false, false, false, true, false},
		{"x86_64-pc-linux-gnu", "x86_64", false, false, false, false, false},
		{"aarch64-unknown-linux-gnu", "aarch64", false, false, false, false, false},
		{"amdgcn", "amdgcn", true, false, false, false, true},
		{"amdgpu-amd-amdhsa", "amdgpu", false, false, false, false, false},
		{"nvptx64v2-nvidia-cuda", "nvptx64v2", false, false, false, false, false},
		{"spirvx-unknown-unknown", "spirvx", false, false, false, false, false},
		{"", "", false, false, false, false, false},
	} {
		if got := ArchName(c.triple); got != c.arch {
			t.Errorf("ArchName(%q) = %q, want %q", c.triple, got, c.arch)
		}
		got := [5]bool{IsAMDGPU(c.triple), IsNVPTX(c.triple), IsSPIRV(c.triple), IsSPIR(c.triple), IsGPU(c.triple)}
		if want := [5]bool{c.amdgpu, c.nvptx, c.spirv, c.spir, c.gpu}; got != want {
			t.Errorf("%q: IsAMDGPU, IsNVPTX, IsSPIRV, IsSPIR, IsGPU = %v, want %v", c.triple, got, want)
		}
	}
}

func TestDefaultHostTriple(t *testing.T) {
	want := map[string]string{"amd64": "x86_64-pc-linux-gnu", "arm64": "aarch64-unknown-linux-gnu", "ppc64le": "powerpc64le-unknown-linux-gnu"}[runtime.GOARCH]
	if want == "" {
		want = "x86_64-pc-linux-gnu"
	}
	if got := DefaultHostTriple(); got != want {
		t.Errorf("DefaultHostTriple() = %q on %s, want %q", got, runtime.GOARCH, want)
	}
	if h := DefaultHostTriple(); Normalize(h) != h || IsGPU(h) {
		t.Errorf("DefaultHostTriple() = %q is not a normalised host triple", h)
	}
}
