package inspect

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/poclbin"
	"github.com/offcc/offcc/syclbin"
)

func run(t testing.TB, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", filepath.Base(name), args, err, out)
	}
}

// find returns every node of the given kind under n, n included, in
// depth-first order.
func find(n *Node, kind string) []*Node {
	var out []*Node
	if n.Kind == kind {
		out = append(out, n)
	}
	for _, c := range n.Children {
		out = append(out, find(c, kind)...)
	}
	return out
}

func inspectPath(t *testing.T, path string) *Node {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Inspect(filepath.Base(path), data)
	if err != nil {
		t.Fatalf("Inspect(%s): %v", path, err)
	}
	return n
}

// hipSource compiles without HIP headers (-nogpuinc).
const hipSource = `#define __global__ __attribute__((global))
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **args, unsigned long shm, void *stream);
extern "C" __global__ void K(int *p) { *p = 1; }
`

const openmpSource = `int f(int *a, int n) {
#pragma omp target teams distribute parallel for map(tofrom: a[0:n])
  for (int i = 0; i < n; i++) a[i] += i;
  return a[0];
}
`

// clangFixtures builds what clang 22 writes for HIP (plain and compressed
// .hip_fatbin bundles, merged by a relocatable link so one section holds
// several bundles with padding) and OpenMP offload (.llvm.offloading),
// and an archive of them.
func clangFixtures(t *testing.T) string {
	clang := llvmtest.Clang(t)
	lld := llvmtest.Tool(t, "ld.lld")
	ar := llvmtest.Tool(t, "llvm-ar")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "k.hip"), []byte(hipSource), 0o644)
	os.WriteFile(filepath.Join(dir, "omp.c"), []byte(openmpSource), 0o644)
	hip := []string{"-x", "hip", "-nogpuinc", "-nogpulib", "-c", "k.hip"}
	run(t, dir, clang, append(hip, "-DK=k1", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-o", "hip.o")...)
	run(t, dir, clang, append(hip, "-DK=k2", "--offload-arch=gfx90a:xnack+", "--offload-compress", "-o", "hipz.o")...)
	run(t, dir, lld, "-r", "hip.o", "hipz.o", "-o", "merged.o")
	run(t, dir, clang, "-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-c", "omp.c", "-o", "omp.o")
	run(t, dir, ar, "rcs", "lib.a", "omp.o", "hip.o")
	return dir
}

func TestClangObjects(t *testing.T) {
	dir := clangFixtures(t)

	// OpenMP: .llvm.offloading holds one v1 blob with the device bitcode.
	omp := inspectPath(t, filepath.Join(dir, "omp.o"))
	if omp.Kind != "elf" || !strings.Contains(omp.Format, "x86-64") {
		t.Fatalf("omp.o: %+v", omp)
	}
	ims := find(omp, "image")
	if len(find(omp, "offload-binary")) != 1 || len(ims) != 1 {
		t.Fatalf("omp.o: want one offload binary with one image, got %+v", omp.Children)
	}
	if im := ims[0]; im.Producer != "openmp" || im.Triple != "amdgcn-amd-amdhsa" || im.Arch != "gfx90a" || len(im.Children) != 1 || im.Children[0].Kind != "bitcode" {
		t.Errorf("omp.o image: %+v", im)
	}
	// The image's offset and size locate its bytes in the file.
	data, _ := os.ReadFile(filepath.Join(dir, "omp.o"))
	want, _ := packager.ImagesInELF(data)
	im := ims[0]
	if !bytes.Equal(data[im.Offset:im.Offset+im.Size], want[0].Data) {
		t.Error("omp.o: image offset/size do not match the image bytes")
	}

	// HIP: the merged .hip_fatbin holds a plain bundle then, 4096-aligned,
	// a compressed one; device code objects are amdgpu ELF files.
	merged := inspectPath(t, filepath.Join(dir, "merged.o"))
	var fatbin *Node
	for _, c := range merged.Children {
		if c.Kind == "section" && c.Name == ".hip_fatbin" {
			fatbin = c
		}
	}
	if fatbin == nil || len(fatbin.Children) != 2 || fatbin.Children[0].Kind != "bundle" || fatbin.Children[1].Kind != "compressed-bundle" {
		t.Fatalf("merged.o .hip_fatbin: %+v", fatbin)
	}
	if z := fatbin.Children[1]; z.Offset%4096 != 0 || z.Format == "" || len(z.Children) != 1 || z.Children[0].Kind != "bundle" {
		t.Errorf("compressed bundle: %+v", z)
	}
	var ids []string
	for _, e := range find(fatbin, "bundle-entry") {
		ids = append(ids, e.Name)
		if strings.HasPrefix(e.Name, "hip") && (len(e.Children) != 1 || !strings.Contains(e.Children[0].Format, "amdgpu")) {
			t.Errorf("entry %s: want an amdgpu ELF, got %+v", e.Name, e.Children)
		}
	}
	got := strings.Join(ids, " ")
	for _, id := range []string{"hipv4-amdgcn-amd-amdhsa--gfx90a", "hipv4-amdgcn-amd-amdhsa--gfx1030", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", "host-x86_64-unknown-linux-gnu-"} {
		if !strings.Contains(" "+got+" ", " "+id+" ") {
			t.Errorf("bundle IDs %q lack %s", got, id)
		}
	}

	// Archive members are described by their member names.
	lib := inspectPath(t, filepath.Join(dir, "lib.a"))
	if lib.Kind != "archive" || len(lib.Children) != 2 || lib.Children[0].Name != "omp.o" || lib.Children[1].Name != "hip.o" {
		t.Fatalf("lib.a: %+v", lib)
	}
	if len(find(lib, "image")) != 1 || len(find(lib, "bundle-entry")) != 3 {
		t.Errorf("lib.a: %d images, %d bundle entries", len(find(lib, "image")), len(find(lib, "bundle-entry")))
	}
}

func TestBundlerOutputs(t *testing.T) {
	bundler := llvmtest.Tool(t, "clang-offload-bundler")
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "host.c"), []byte("int host(void) { return 1; }\n"), 0o644)
	run(t, dir, clang, "-c", "host.c", "-o", "host.o")
	os.WriteFile(filepath.Join(dir, "dev.ll"), []byte("; device\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "host.ll"), []byte("; host\n"), 0o644)
	targets := "-targets=host-x86_64-unknown-linux-gnu,openmp-amdgcn-amd-amdhsa--gfx90a"
	run(t, dir, bundler, "-type=o", targets, "-input=host.o", "-input=dev.ll", "-output=fat.o")
	run(t, dir, bundler, "-type=ll", targets, "-input=host.ll", "-input=dev.ll", "-output=fat.ll")

	fat := inspectPath(t, filepath.Join(dir, "fat.o"))
	entries := find(fat, "bundle-entry")
	if len(entries) != 2 || entries[1].Name != "openmp-amdgcn-amd-amdhsa--gfx90a" || entries[1].Producer != "openmp" || entries[1].Arch != "gfx90a" || entries[1].Size != 9 {
		t.Errorf("fat.o entries: %+v", entries)
	}
	text := inspectPath(t, filepath.Join(dir, "fat.ll"))
	if text.Kind != "bundle" || text.Format != "text ;" || len(text.Children) != 2 || text.Children[1].Triple != "amdgcn-amd-amdhsa" {
		t.Errorf("fat.ll: %+v", text)
	}
}

func TestMainJSONAndErrors(t *testing.T) {
	dir := t.TempDir()
	blob := packager.Marshal([]packager.Image{{
		Kind: packager.ImageObject, Offload: packager.OffloadHIP,
		Strings: []packager.KeyValue{{Key: "arch", Value: "gfx90a"}, {Key: "triple", Value: "amdgcn-amd-amdhsa"}, {Key: "feature", Value: "+xnack"}},
		Data:    []byte("not an object"),
	}})
	os.WriteFile(filepath.Join(dir, "ok.bin"), blob, 0o644)
	os.WriteFile(filepath.Join(dir, "bad.bin"), blob[:len(blob)-8], 0o644)
	var so, se bytes.Buffer
	rc := Main("offcc", []string{"--json", filepath.Join(dir, "ok.bin"), filepath.Join(dir, "bad.bin")}, &so, &se)
	if rc != 1 {
		t.Errorf("exit status %d, want 1", rc)
	}
	var roots []*Node
	if err := json.Unmarshal(so.Bytes(), &roots); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, so.String())
	}
	if len(roots) != 2 || roots[0].Kind != "offload-binary" || roots[1].Kind != "error" || roots[1].Error == "" {
		t.Fatalf("roots: %+v", roots)
	}
	im := roots[0].Children[0]
	if im.Triple != "amdgcn-amd-amdhsa" || im.Arch != "gfx90a" || im.Keys["feature"] != "+xnack" || im.Producer != "hip" || im.Format != "elf" {
		t.Errorf("image: %+v", im)
	}
	msg := se.String()
	if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "offcc: error: ") || !strings.Contains(msg, "bad.bin: offload binary at offset 0x0: size") {
		t.Errorf("stderr %q", msg)
	}

	so.Reset()
	se.Reset()
	if rc := Main("offcc", []string{filepath.Join(dir, "ok.bin")}, &so, &se); rc != 0 || se.Len() != 0 {
		t.Fatalf("text: rc %d, stderr %q", rc, se.String())
	}
	for _, want := range []string{"ok.bin: offload binary v1", "image elf, producer hip, triple amdgcn-amd-amdhsa, arch gfx90a, feature=+xnack (13 bytes at 0x"} {
		if !strings.Contains(so.String(), want) {
			t.Errorf("tree lacks %q:\n%s", want, so.String())
		}
	}
	for _, args := range [][]string{{}, {"--bogus"}, {filepath.Join(dir, "missing")}} {
		se.Reset()
		if rc := Main("offcc", args, &so, &se); rc != 1 || strings.Count(se.String(), "\n") != 1 {
			t.Errorf("%q: rc %d stderr %q", args, rc, se.String())
		}
	}
}

// TestCorruptNested checks that damage deep inside a file is reported
// with the path to it: a flipped byte in a compressed bundle's payload in
// a .hip_fatbin section fails the hash check.
func TestCorruptNested(t *testing.T) {
	dir := clangFixtures(t)
	data, err := os.ReadFile(filepath.Join(dir, "merged.o"))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("CCOB"))
	if i < 0 {
		t.Fatal("no compressed bundle in merged.o")
	}
	bad := append([]byte{}, data...)
	bad[i+40] ^= 0x55
	_, err = Inspect("merged.o", bad)
	if err == nil {
		t.Fatal("corrupt compressed bundle accepted")
	}
	if msg := err.Error(); !strings.Contains(msg, "section .hip_fatbin") || !strings.Contains(msg, "compressed bundle") || strings.Contains(msg, "\n") {
		t.Errorf("error %q", msg)
	}
}

// FuzzInspect checks that no input makes Inspect panic or loop, and that
// every node it reports lies inside its buffer.
func FuzzInspect(f *testing.F) {
	blob := packager.Marshal([]packager.Image{{Kind: packager.ImageBitcode, Strings: []packager.KeyValue{{Key: "triple", Value: "t"}}, Data: []byte("BC\xc0\xde")}})
	f.Add(blob)
	f.Add(append(append([]byte{}, blob...), packager.MarshalV2([]packager.Image{{Data: blob}})...))
	f.Add([]byte("!<arch>\n"))
	f.Add([]byte("__CLANG_OFFLOAD_BUNDLE__\x01\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("\n// __CLANG_OFFLOAD_BUNDLE____START__ host-x86_64-unknown-linux-gnu-\nx\n// __CLANG_OFFLOAD_BUNDLE____END__ host-x86_64-unknown-linux-gnu-\n"))
	f.Add([]byte("CCOB\x03\x00\x01\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		n, err := Inspect("in", in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		var walk func(n *Node)
		walk = func(n *Node) {
			if n.Kind != "syclbin-module" && n.Kind != "pocl-kernel" && n.Offset+n.Size < n.Offset {
				t.Fatalf("node %+v wraps around", n)
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(n)
		WriteTree(&bytes.Buffer{}, n)
	})
}

// TestSYCLBINAndPocl nests the formats that have no LLVM 22 producer: a
// SYCLBIN in its offload binary envelope (image kind 7) holding a SPIR-V
// module and a native image, and a poclbin export archive.
func TestSYCLBINAndPocl(t *testing.T) {
	spirv := []byte{0x03, 0x02, 0x23, 0x07, 0x00, 0x04, 0x01, 0x00}
	f := &syclbin.File{Version: 1}
	f.SetState(syclbin.StateExecutable)
	am := syclbin.AbstractModule{
		IR:     []syclbin.IRModule{syclbin.NewIRModule(syclbin.IRTypeSPIRV, "spir64-unknown-unknown", spirv)},
		Native: []syclbin.NativeImage{syclbin.NewNativeImage("bmg_g21", "spir64_gen-unknown-unknown", []byte("native"))},
	}
	am.Metadata.Add("SYCL/kernel names", "k", syclbin.UInt32Value(1))
	f.Modules = append(f.Modules, am)
	env := packager.Marshal([]packager.Image{{Kind: 7, Offload: packager.OffloadSYCL, Data: syclbin.Marshal(f)}})
	n, err := Inspect("a.syclbin", env)
	if err != nil {
		t.Fatal(err)
	}
	sb := find(n, "syclbin")
	if len(sb) != 1 || sb[0].Keys["state"] != "executable" || find(n, "image")[0].Format != "syclbin" {
		t.Fatalf("SYCLBIN: %+v", n)
	}
	ir, native := find(n, "syclbin-ir"), find(n, "syclbin-native")
	if len(ir) != 1 || ir[0].Triple != "spir64-unknown-unknown" || ir[0].Format != "SPIR-V" || len(ir[0].Children) != 1 || ir[0].Children[0].Kind != "spirv" {
		t.Errorf("IR module: %+v", ir)
	}
	if len(native) != 1 || native[0].Arch != "bmg_g21" || native[0].Triple != "spir64_gen-unknown-unknown" {
		t.Errorf("native image: %+v", native)
	}

	var buf bytes.Buffer
	if err := poclbin.WriteArchive(&buf, &poclbin.Archive{Version: 1, BasePath: "/cache", Entries: []poclbin.Entry{
		{Path: "k/program.bc", Data: []byte("BC\xc0\xde....")},
		{Path: "k/empty", Data: nil},
	}}); err != nil {
		t.Fatal(err)
	}
	p, err := Inspect("cache.poclbin", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != "poclbin-archive" || len(p.Children) != 2 || p.Children[0].Name != "k/program.bc" || p.Children[0].Children[0].Kind != "bitcode" {
		t.Errorf("poclbin archive: %+v", p)
	}
}
