package target

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

func TestOffloadArchTable(t *testing.T) {
	archs := OffloadArchs()
	if len(archs) != 91 {
		t.Errorf("%d offload arches, want clang 22's 91", len(archs))
	}
	seen := map[string]bool{}
	for _, a := range archs {
		if seen[a] {
			t.Errorf("%s listed twice", a)
		}
		seen[a] = true
		if !IsOffloadArch(a) {
			t.Errorf("IsOffloadArch(%q) = false", a)
		}
	}
	for _, a := range []string{"", "sm_10", "sm_100f", "sm_101f", "gfx941", "gfx940", "gfx1154", "gfx1252", "gfx1300",
		"gfx11-5-generic", "gfx12-5-generic", "GFX90A", "gfx90a:xnack+", "amdgcn", "spirv64", "native", "intel_gpu_pvc"} {
		if IsOffloadArch(a) {
			t.Errorf("IsOffloadArch(%q) = true", a)
		}
	}
	archs[0] = "changed"
	if OffloadArchs()[0] != "sm_20" {
		t.Error("OffloadArchs returns the table itself")
	}
}

func TestTripleForArch(t *testing.T) {
	const nv, amd = "nvptx64-nvidia-cuda", "amdgcn-amd-amdhsa"
	for _, c := range []struct{ arch, want string }{
		{"sm_80", nv}, {"sm_20", nv}, {"sm_90a", nv}, {"sm_121a", nv},
		{"gfx90a", amd}, {"gfx600", amd}, {"gfx1251", amd}, {"gfx9-generic", amd}, {"gfx12-generic", amd},
		{"gfx90a:xnack+", amd}, {"gfx908:sramecc+:xnack-", amd}, {"gfx90a:", amd},
		{"amdgcnspirv", "spirv64-amd-amdhsa"},
		{"sm_80:xnack+", ""}, {"amdgcnspirv:xnack+", ""},
		{"graniterapids", ""}, {"bmg_g21", ""}, {"generic", ""},
		{"sm_10", ""}, {"sm_100f", ""}, {"gfx1310", ""}, {"gfx1310:xnack+", ""}, {"GFX90A", ""}, {"SM_80", ""},
		{"", ""}, {":xnack+", ""}, {"x86_64", ""},
	} {
		got, ok := TripleForArch(c.arch)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("TripleForArch(%q) = %q, %v, want %q", c.arch, got, ok, c.want)
		}
	}
}

// TestTripleForArchMatchesClang asks clang 22's driver which device triple
// it compiles for with -fopenmp --offload-arch=A, for every offload arch
// and some other spellings, and compares with TripleForArch.
func TestTripleForArchMatchesClang(t *testing.T) {
	clang := llvmtest.Clang(t)
	src := filepath.Join(t.TempDir(), "x.c")
	if err := os.WriteFile(src, []byte("int x;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	archs := append(OffloadArchs(), "gfx90a:xnack+", "gfx908:sramecc+:xnack-", "gfx9-generic:xnack+", "gfx90a:",
		"sm_80:xnack+", "amdgcnspirv:xnack+", "sm_10", "sm_100f", "gfx1310", "gfx941", "GFX90A", "SM_80")
	tripleArg := regexp.MustCompile(`"-triple" "([^"]*)"`)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, a := range archs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			// clang exits non-zero when it cannot deduce a triple; the
			// device jobs it prints are what matters.
			out, _ := exec.Command(clang, "-###", "-fopenmp", "--offload-arch="+a, "-nogpulib", "-c", src, "-o", os.DevNull).CombinedOutput()
			want := ""
			for _, l := range strings.Split(string(out), "\n") {
				if !strings.Contains(l, `"-fopenmp-is-target-device"`) {
					continue
				}
				m := tripleArg.FindStringSubmatch(l)
				if m == nil || (want != "" && want != m[1]) {
					t.Errorf("--offload-arch=%s: device jobs with triples %q and %v", a, want, m)
					return
				}
				want = m[1]
			}
			if got, ok := TripleForArch(a); got != want || ok != (want != "") {
				t.Errorf("TripleForArch(%q) = %q, %v; clang compiles for %q", a, got, ok, want)
			}
		}()
	}
	wg.Wait()
}
