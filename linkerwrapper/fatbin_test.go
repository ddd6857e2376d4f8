package linkerwrapper

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/objfile"
)

// TestFatbinWrapperObject compiles the HIP and the CUDA registration
// modules: the fat binary lands byte for byte in its section, the wrapper
// struct in its own, and the object calls exactly the runtime's entry
// points clang-linker-wrapper 22's module calls (CUDA without surfaces and
// textures, with __cudaRegisterFatBinaryEnd).
func TestFatbinWrapperObject(t *testing.T) {
	clangPath := llvmtest.Clang(t)
	dir := t.TempDir()
	fatbin := filepath.Join(dir, "x.fatbin")
	data := bytes.Repeat([]byte("fatbin!"), 1001)
	os.WriteFile(fatbin, data, 0o644)
	for _, tc := range []struct {
		rt   fatbinRuntime
		want []string
	}{
		{hipRuntime, []string{"__hipRegisterFatBinary", "__hipRegisterFunction", "__hipRegisterManagedVar",
			"__hipRegisterSurface", "__hipRegisterTexture", "__hipRegisterVar", "__hipUnregisterFatBinary",
			"__start_llvm_offload_entries", "__stop_llvm_offload_entries", "atexit"}},
		{cudaRuntime, []string{"__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaRegisterFunction",
			"__cudaRegisterManagedVar", "__cudaRegisterVar", "__cudaUnregisterFatBinary",
			"__start_llvm_offload_entries", "__stop_llvm_offload_entries", "atexit"}},
	} {
		ll := filepath.Join(dir, tc.rt.prefix+".ll")
		obj := filepath.Join(dir, tc.rt.prefix+".o")
		os.WriteFile(ll, []byte(fatbinWrapperIR("x86_64-pc-linux-gnu", tc.rt, fatbin, len(data))), 0o644)
		if out, err := exec.Command(clangPath, "--no-default-config", "-c", "-x", "ir", "--target=x86_64-pc-linux-gnu", "-O2", "-fPIC", "-o", obj, ll).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", tc.rt.prefix, err, out)
		}
		b, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		secs, err := objfile.Sections(b)
		if err != nil {
			t.Fatal(err)
		}
		found := map[string][]byte{}
		for _, s := range secs {
			found[s.Name] = s.Data
		}
		if !bytes.Equal(found[tc.rt.fatbinSection], data) {
			t.Errorf("%s: section %s holds %d bytes, not the fat binary", tc.rt.prefix, tc.rt.fatbinSection, len(found[tc.rt.fatbinSection]))
		}
		if w := found[tc.rt.wrapSection]; len(w) != 24 || !bytes.Equal(w[:8], []byte{byte(tc.rt.magic), byte(tc.rt.magic >> 8), byte(tc.rt.magic >> 16), byte(tc.rt.magic >> 24), 1, 0, 0, 0}) {
			t.Errorf("%s: wrapper section %s = % x", tc.rt.prefix, tc.rt.wrapSection, w)
		}
		_, undef, err := objfile.Symbols(b)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(undef)
		if !slices.Equal(undef, tc.want) {
			t.Errorf("%s: undefined symbols\n%s\nwant\n%s", tc.rt.prefix, strings.Join(undef, " "), strings.Join(tc.want, " "))
		}
	}
}
