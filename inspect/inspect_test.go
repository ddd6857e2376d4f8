package inspect

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/bundler"
	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/objfile"
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
	// SYCLBIN in both encodings.
	for _, enc := range []syclbin.Encoding{syclbin.EncodingV1, syclbin.EncodingV2} {
		b, err := syclbin.Encode(syclbinFixture(), enc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// NVIDIA fat binaries: one nvcc wrote (a cubin, LZ4-compressed PTX),
	// two back to back with padding, and stored PTX, ZSTD and unknown-kind
	// entries.
	real := realFatbin(f)
	f.Add(real)
	if pocl, err := os.ReadFile("../poclbin/testdata/pocl31.poclbin"); err == nil {
		f.Add(pocl)
	}
	f.Add(append(append(append([]byte{}, real...), 0, 0, 0, 0, 0, 0, 0, 0), real...))
	f.Add(nvFatbin(nvEntry(1, 90, 0x11, []byte(".version 8.0\n.target sm_90\n"), 0),
		nvEntry(2, 100, 0x8011, []byte{0x28, 0xb5, 0x2f, 0xfd}, 99), nvEntry(0x40, 120, 0, []byte{1}, 0)))
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
			if n.Kind != "syclbin-module" && n.Offset+n.Size < n.Offset {
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

// nvEntry writes one NVIDIA fat binary entry in the layout nvfatbin reads:
// a 64-byte header, then the payload padded to 8 bytes. A compressed entry
// (flags 0x2000 or 0x8000) gets its compressed and uncompressed sizes.
func nvEntry(kind uint16, arch uint32, flags uint64, payload []byte, uncompressed uint64) []byte {
	le := binary.LittleEndian
	h := make([]byte, 64)
	stored := (len(payload) + 7) &^ 7
	le.PutUint16(h[0:], kind)
	le.PutUint16(h[2:], 0x0101)
	le.PutUint32(h[4:], 64)
	le.PutUint64(h[8:], uint64(stored))
	if flags&0xa000 != 0 {
		le.PutUint32(h[16:], uint32(len(payload)))
		le.PutUint64(h[56:], uncompressed)
	}
	le.PutUint32(h[24:], 0x00010007) // code version 1.7
	le.PutUint32(h[28:], arch)
	le.PutUint64(h[40:], flags)
	h = append(h, payload...)
	return append(h, make([]byte, stored-len(payload))...)
}

// nvFatbin writes a fat binary holding the entries.
func nvFatbin(entries ...[]byte) []byte {
	body := bytes.Join(entries, nil)
	h := make([]byte, 16)
	binary.LittleEndian.PutUint32(h, 0xBA55ED50)
	binary.LittleEndian.PutUint16(h[4:], 1)
	binary.LittleEndian.PutUint16(h[6:], 16)
	binary.LittleEndian.PutUint64(h[8:], uint64(len(body)))
	return append(h, body...)
}

// realFatbin is a fat binary nvcc wrote (see nvfatbin/testdata/README.md):
// an sm_30 cubin and LZ4-compressed sm_30 PTX.
func realFatbin(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("../nvfatbin/testdata/paddle-compilerid.fatbin")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkRealFatbin checks the nodes of realFatbin at offset at.
func checkRealFatbin(t *testing.T, fb *Node, at uint64) {
	t.Helper()
	if fb.Kind != "nv-fatbin" || fb.Version != 1 || fb.Offset != at || fb.Size != 824 || len(fb.Children) != 2 {
		t.Fatalf("fat binary: %+v", fb)
	}
	cubin, ptx := fb.Children[0], fb.Children[1]
	if cubin.Kind != "nv-fatbin-entry" || cubin.Format != "ELF" || cubin.Arch != "sm_30" || cubin.Offset != at+0x50 || cubin.Size != 616 ||
		cubin.Keys["code-version"] != "1.7" || cubin.Keys["flags"] != "0x11" || cubin.Keys["compression"] != "" ||
		len(cubin.Children) != 1 || cubin.Children[0].Kind != "elf" || !strings.Contains(cubin.Children[0].Format, "nvptx") {
		t.Errorf("cubin entry: %+v", cubin)
	}
	if ptx.Format != "PTX" || ptx.Arch != "sm_30" || ptx.Offset != at+0x300 || ptx.Size != 54 ||
		ptx.Keys["code-version"] != "6.5" || ptx.Keys["compression"] != "lz4" || ptx.Keys["compressed-size"] != "54" ||
		ptx.Keys["uncompressed-size"] != "56" || len(ptx.Children) != 1 || ptx.Children[0].Kind != "ptx" ||
		ptx.Children[0].Offset != 0 || ptx.Children[0].Size != 56 {
		t.Errorf("PTX entry: %+v, children %+v", ptx, ptx.Children)
	}
}

// TestNVFatBinary describes NVIDIA fat binaries as files: one nvcc wrote,
// and one with a stored PTX entry, two cubins, a ZSTD-compressed entry and
// an entry of a kind nvfatbin does not know.
func TestNVFatBinary(t *testing.T) {
	real := realFatbin(t)
	n, err := Inspect("k.fatbin", real)
	if err != nil {
		t.Fatal(err)
	}
	checkRealFatbin(t, n, 0)

	cubin := real[0x50 : 0x50+616]
	ptx := []byte(".version 8.0\n.target sm_90\n.address_size 64\n")
	data := nvFatbin(
		nvEntry(1, 90, 0x11, ptx, 0),
		nvEntry(2, 30, 0x11, cubin, 0),
		nvEntry(2, 30, 0x13, cubin, 0),
		nvEntry(2, 100, 0x8011, []byte{0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3}, 5000),
		nvEntry(0x10, 120, 0x11, []byte("opaque"), 0),
	)
	n, err = Inspect("multi.fatbin", data)
	if err != nil {
		t.Fatal(err)
	}
	es := find(n, "nv-fatbin-entry")
	if n.Kind != "nv-fatbin" || n.Size != uint64(len(data)) || len(es) != 5 {
		t.Fatalf("multi.fatbin: %+v", n)
	}
	// Every entry's offset and size locate its stored payload.
	for i, e := range es {
		if e.Offset+e.Size > uint64(len(data)) {
			t.Fatalf("entry %d outside the file: %+v", i, e)
		}
	}
	if p := es[0]; p.Format != "PTX" || p.Arch != "sm_90" || !bytes.HasPrefix(data[p.Offset:p.Offset+p.Size], ptx) ||
		len(p.Children) != 1 || p.Children[0].Kind != "ptx" || p.Children[0].Offset != p.Offset {
		t.Errorf("PTX entry: %+v", p)
	}
	if c := es[2]; c.Keys["debug"] != "true" || !bytes.Equal(data[c.Offset:c.Offset+c.Size], cubin) || c.Children[0].Kind != "elf" {
		t.Errorf("debug cubin entry: %+v", c)
	}
	if z := es[3]; z.Keys["compression"] != "zstd" || z.Keys["uncompressed-size"] != "5000" || z.Keys["compressed-size"] != "7" || z.Size != 7 || len(z.Children) != 0 {
		t.Errorf("zstd entry: %+v", z)
	}
	if u := es[4]; u.Format != "kind 0x10" || u.Arch != "sm_120" || len(u.Children) != 1 || u.Children[0].Kind != "data" {
		t.Errorf("unknown kind entry: %+v", u)
	}

	// Nested: a fat binary as an offload binary's image (IMG_Fatbinary)
	// and as a clang-offload-bundler entry.
	blob := packager.Marshal([]packager.Image{{Kind: packager.ImageFatbinary, Offload: packager.OffloadCUDA,
		Strings: []packager.KeyValue{{Key: "triple", Value: "nvptx64-nvidia-cuda"}, {Key: "arch", Value: "sm_30"}}, Data: real}})
	n, err = Inspect("fatbin.offload", blob)
	if err != nil {
		t.Fatal(err)
	}
	im := find(n, "image")
	if len(im) != 1 || im[0].Format != "fatbinary" || len(im[0].Children) != 1 {
		t.Fatalf("offload binary: %+v", n)
	}
	checkRealFatbin(t, im[0].Children[0], im[0].Offset)
	var bundle bytes.Buffer
	if err := bundler.WriteBinary(&bundle, []string{"host-x86_64-unknown-linux-gnu-", "openmp-nvptx64-nvidia-cuda--sm_30"}, [][]byte{nil, real}, 8); err != nil {
		t.Fatal(err)
	}
	n, err = Inspect("fatbin.bundle", bundle.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	be := find(n, "bundle-entry")
	if len(be) != 2 || be[1].Arch != "sm_30" || len(be[1].Children) != 1 {
		t.Fatalf("bundle: %+v", n)
	}
	checkRealFatbin(t, be[1].Children[0], be[1].Offset)

	var so, se bytes.Buffer
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "k.fatbin"), real, 0o644)
	if rc := Main("offcc", []string{filepath.Join(dir, "k.fatbin")}, &so, &se); rc != 0 {
		t.Fatalf("rc %d: %s", rc, se.String())
	}
	for _, want := range []string{
		"k.fatbin: NVIDIA fat binary v1 (824 bytes at 0x0)",
		"├─ fatbin entry ELF, arch sm_30, code-version=1.7, flags=0x11 (616 bytes at 0x50)",
		"│  └─ ELF64 executable nvptx (cuda) (616 bytes at 0x50)",
		"└─ fatbin entry PTX, arch sm_30, code-version=6.5, compressed-size=54, compression=lz4, flags=0x2011, uncompressed-size=56 (54 bytes at 0x300)",
		"   └─ PTX (56 bytes at 0x0)",
	} {
		if !strings.Contains(so.String(), want+"\n") {
			t.Errorf("tree lacks %q:\n%s", want, so.String())
		}
	}
}

// TestNVFatBinaryInObjects embeds the nvcc-written fat binary the ways
// clang does (-fcuda-include-gpubinary: .nv_fatbin, or __nv_relfatbin
// with -fgpu-rdc, and a .nvFatBinSegment wrapper), links two such objects
// so that .nv_fatbin holds two fat binaries, and adds a .nv_fatbin
// section with zero padding between two fat binaries to a plain object.
func TestNVFatBinaryInObjects(t *testing.T) {
	clang := llvmtest.Clang(t)
	lld := llvmtest.Tool(t, "ld.lld")
	dir := t.TempDir()
	real := realFatbin(t)
	os.WriteFile(filepath.Join(dir, "k.fatbin"), real, 0o644)
	os.WriteFile(filepath.Join(dir, "k.cu"), []byte("#define __global__ __attribute__((global))\nextern \"C\" __global__ void K(int *p) {}\n"), 0o644)
	// An empty --cuda-path hides an installed CUDA toolkit, whose launch
	// API would need a declaration of cudaLaunchKernel.
	cuda := []string{"-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "--cuda-path=" + t.TempDir(), "--cuda-gpu-arch=sm_30", "-fPIC", "-Xclang", "-fcuda-include-gpubinary", "-Xclang", "k.fatbin", "-c", "k.cu"}
	run(t, dir, clang, append(cuda, "-DK=k1", "-o", "host.o")...)
	run(t, dir, clang, append(cuda, "-DK=k2", "-o", "host2.o")...)
	run(t, dir, clang, append(cuda, "-fgpu-rdc", "--no-offload-new-driver", "-o", "rdc.o")...)
	run(t, dir, lld, "-shared", "host.o", "host2.o", "-o", "libk.so")

	sections := func(n *Node) map[string]*Node {
		m := map[string]*Node{}
		for _, c := range n.Children {
			if c.Kind == "section" {
				m[c.Name] = c
			}
		}
		return m
	}
	for _, tc := range []struct{ file, section string }{{"host.o", ".nv_fatbin"}, {"rdc.o", "__nv_relfatbin"}} {
		n := inspectPath(t, filepath.Join(dir, tc.file))
		secs := sections(n)
		fb, seg := secs[tc.section], secs[".nvFatBinSegment"]
		if fb == nil || len(fb.Children) != 1 || seg == nil || len(seg.Children) != 1 {
			t.Fatalf("%s: %+v", tc.file, n.Children)
		}
		checkRealFatbin(t, fb.Children[0], fb.Offset)
		if w := seg.Children[0]; w.Kind != "nv-fatbin-wrapper" || w.Version != 1 || w.Size != 24 {
			t.Errorf("%s wrapper: %+v", tc.file, w)
		}
	}

	so := inspectPath(t, filepath.Join(dir, "libk.so"))
	secs := sections(so)
	if fb := secs[".nv_fatbin"]; fb == nil || len(fb.Children) != 2 || len(secs[".nvFatBinSegment"].Children) != 2 {
		t.Fatalf("libk.so: %+v", so.Children)
	} else {
		checkRealFatbin(t, fb.Children[0], fb.Offset)
		checkRealFatbin(t, fb.Children[1], fb.Children[0].Offset+fb.Children[0].Size)
	}

	// objfile.AddSection: two fat binaries with zero padding between them
	// in the .nv_fatbin of a plain host object.
	os.WriteFile(filepath.Join(dir, "plain.c"), []byte("int plain(void) { return 0; }\n"), 0o644)
	run(t, dir, clang, "-c", "plain.c", "-o", "plain.o")
	plain, err := os.ReadFile(filepath.Join(dir, "plain.o"))
	if err != nil {
		t.Fatal(err)
	}
	sec := append(append(append([]byte{}, real...), make([]byte, 8)...), real...)
	obj, err := objfile.AddSection(plain, objfile.NewSection{Name: ".nv_fatbin", Type: 1, Flags: 2, Align: 8, Data: sec})
	if err != nil {
		t.Fatal(err)
	}
	n, err := Inspect("added.o", obj)
	if err != nil {
		t.Fatal(err)
	}
	fb := sections(n)[".nv_fatbin"]
	if fb == nil || len(fb.Children) != 2 {
		t.Fatalf("added.o: %+v", n.Children)
	}
	checkRealFatbin(t, fb.Children[0], fb.Offset)
	checkRealFatbin(t, fb.Children[1], fb.Offset+824+8)
	data := obj[fb.Children[1].Children[0].Offset:]
	if !bytes.HasPrefix(data, []byte("\x7fELF")) {
		t.Error("second fat binary's cubin offset does not point at its ELF")
	}

	// A .nvFatBinSegment record without the wrapper magic is an error.
	bad, err := objfile.AddSection(plain, objfile.NewSection{Name: ".nvFatBinSegment", Type: 1, Flags: 3, Align: 8, Data: make([]byte, 24)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Inspect("bad.o", bad); err == nil || !strings.Contains(err.Error(), "section .nvFatBinSegment: fat binary wrapper at offset 0x0: magic 0x0 is not 0x466243b1") {
		t.Errorf("bad wrapper: %v", err)
	}
}

// TestNVFatBinaryErrors checks that damaged fat binaries give one-line
// errors that say where: a fat size past the end of the data, an entry
// whose payload runs past the fat binary, a corrupt LZ4 stream, an LZ4
// size past the decompression budget, a truncated fat binary in an
// offload binary. (TestNVFatBinaryInObjects checks a bad wrapper.)
func TestNVFatBinaryErrors(t *testing.T) {
	real := realFatbin(t)
	le := binary.LittleEndian
	mod := func(f func(b []byte)) []byte {
		b := append([]byte{}, real...)
		f(b)
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		want []string
	}{
		{"truncated", real[:800], []string{"NVIDIA fat binary at offset 0x0: fat size 0x328 runs past the end"}},
		{"payload past end", mod(func(b []byte) { le.PutUint64(b[0x2c0:], 1<<32) }), []string{"entry 1 at offset 0x2b8: payload size 0x100000000 runs past the end"}},
		{"corrupt lz4", mod(func(b []byte) { b[0x302] = 9 }), []string{"NVIDIA fat binary at offset 0x0: entry 1 (PTX sm_30) at offset 0x2b8", "lz4: match offset 9"}},
		{"decompression budget", nvFatbin(nvEntry(1, 70, 0x2011, []byte{0}, 1<<30)), []string{"entry 0 (PTX sm_70) at offset 0x10", "LZ4 payload of 1073741824 bytes exceeds the 268435456 bytes left to decompress"}},
		{"nested", append(make([]byte, 0), packager.Marshal([]packager.Image{{Kind: packager.ImageFatbinary, Data: real[:100]}})...), []string{"offload binary at offset 0x0: image 0", "NVIDIA fat binary at offset 0x50: fat size 0x328 runs past the end"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Inspect("bad", tc.data)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// syclbinFixture is a SYCLBIN with two abstract modules: kernels, an
// extra property set, a SPIR-V IR module and a native image; kernel names
// with other values; and a PTX module without a target.
func syclbinFixture() *syclbin.File {
	spirv := []byte{0x03, 0x02, 0x23, 0x07, 0x00, 0x04, 0x01, 0x00}
	f := &syclbin.File{Version: 1}
	f.SetState(syclbin.StateObject)
	a := syclbin.AbstractModule{
		IR:     []syclbin.IRModule{syclbin.NewIRModule(syclbin.IRTypeSPIRV, "spir64-unknown-unknown", spirv)},
		Native: []syclbin.NativeImage{syclbin.NewNativeImage("bmg_g21", "spir64_gen-unknown-unknown", []byte("native"))},
	}
	a.SetKernelNames([]string{"_ZTS7KernelA", "_ZTS7KernelB"})
	a.Metadata.Add("SYCL/misc properties", "optLevel", syclbin.UInt32Value(3))
	a.Metadata.Add("SYCL/device requirements", "aspects", syclbin.BytesValue([]byte{1, 0, 0, 0}))
	ptx := syclbin.IRModule{Data: []byte(".version 8.0\n.target sm_80\n")}
	ptx.Metadata.Add(syclbin.IRModuleMetadataSet, syclbin.TypeKey, syclbin.UInt32Value(syclbin.IRTypePTX))
	b := syclbin.AbstractModule{IR: []syclbin.IRModule{ptx}}
	b.Metadata.Add(syclbin.KernelNamesSet, "_ZTS1C", syclbin.UInt32Value(0))
	f.Modules = []syclbin.AbstractModule{a, b}
	return f
}

// TestSYCLBINEncodings describes the same SYCLBIN bare, in its v1
// envelope and in the v2 multi-entry encoding.
func TestSYCLBINEncodings(t *testing.T) {
	f := syclbinFixture()
	v1, err := syclbin.Encode(f, syclbin.EncodingV1)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := syclbin.Encode(f, syclbin.EncodingV2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		data     []byte
		encoding string
		version  uint32
	}{{"bare", syclbin.Marshal(f), "bare", 1}, {"v1", v1, "v1", 1}, {"v2", v2, "v2", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Inspect("a.syclbin", tc.data)
			if err != nil {
				t.Fatal(err)
			}
			sb := find(n, "syclbin")
			if len(sb) != 1 || sb[0].Version != tc.version || sb[0].Keys["encoding"] != tc.encoding || sb[0].Keys["state"] != "object" {
				t.Fatalf("syclbin node: %+v", sb)
			}
			if tc.name != "bare" && (n.Kind != "offload-binary" || n.Version != tc.version) {
				t.Errorf("root: %+v", n)
			}
			mods := find(n, "syclbin-module")
			if len(mods) != 2 || !slices.Equal(mods[0].Kernels, []string{"_ZTS7KernelA", "_ZTS7KernelB"}) || !slices.Equal(mods[1].Kernels, []string{"_ZTS1C"}) {
				t.Fatalf("modules: %+v", mods)
			}
			// Property sets: module 0's extra sets; module 1's kernel
			// names, whose value is not 1; nothing for the SYCLBIN sets.
			var sets []string
			for _, p := range find(n, "syclbin-property-set") {
				sets = append(sets, p.Name+" "+fmt.Sprint(p.Keys))
			}
			want := []string{"SYCL/misc properties map[optLevel:3]", "SYCL/device requirements map[aspects:0x01000000]", "SYCL/kernel names map[_ZTS1C:0]"}
			if !slices.Equal(sets, want) {
				t.Errorf("property sets %q, want %q", sets, want)
			}
			ir, native := find(n, "syclbin-ir"), find(n, "syclbin-native")
			if len(ir) != 2 || ir[0].Format != "SPIR-V" || ir[0].Triple != "spir64-unknown-unknown" || ir[0].Size != 8 ||
				len(ir[0].Children) != 1 || ir[0].Children[0].Kind != "spirv" || ir[0].Children[0].Format != "SPIR-V 1.4" ||
				ir[1].Format != "PTX" || ir[1].Triple != "" || len(ir[1].Children) != 1 || ir[1].Children[0].Kind != "ptx" {
				t.Errorf("IR modules: %+v %+v", ir[0], ir[1])
			}
			if len(native) != 1 || native[0].Arch != "bmg_g21" || native[0].Triple != "spir64_gen-unknown-unknown" || native[0].Size != 6 {
				t.Errorf("native images: %+v", native)
			}
			// Offsets locate the device code in the file.
			for _, k := range append(ir, native...) {
				if got := tc.data[k.Offset : k.Offset+k.Size]; !bytes.Equal(got, f.Modules[0].IR[0].Data) && !bytes.Equal(got, f.Modules[0].Native[0].Data) && !bytes.Equal(got, f.Modules[1].IR[0].Data) {
					t.Errorf("%s at %#x: bytes %q", k.Kind, k.Offset, got)
				}
			}
		})
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "v2.syclbin"), v2, 0o644)
	os.WriteFile(filepath.Join(dir, "v1.syclbin"), v1, 0o644)
	var so, se bytes.Buffer
	if rc := Main("offcc", []string{filepath.Join(dir, "v2.syclbin"), filepath.Join(dir, "v1.syclbin")}, &so, &se); rc != 0 {
		t.Fatalf("rc %d: %s", rc, se.String())
	}
	for _, want := range []string{
		filepath.Join(dir, "v2.syclbin") + ": offload binary v2 (" + fmt.Sprint(len(v2)) + " bytes at 0x0)",
		"└─ SYCLBIN v2, encoding=v2, state=object (" + fmt.Sprint(len(v2)) + " bytes at 0x0)",
		"   ├─ module 0, kernels _ZTS7KernelA _ZTS7KernelB (14 bytes)",
		"   │  ├─ property set [SYCL/misc properties], optLevel=3",
		"   │  ├─ property set [SYCL/device requirements], aspects=0x01000000",
		"   │  ├─ IR module SPIR-V, triple spir64-unknown-unknown (8 bytes at 0x",
		"   │  │  └─ SPIR-V 1.4 (8 bytes at 0x",
		"   │  └─ native image, triple spir64_gen-unknown-unknown, arch bmg_g21 (6 bytes at 0x",
		"   └─ module 1, kernels _ZTS1C (27 bytes)",
		"      ├─ property set [SYCL/kernel names], _ZTS1C=0",
		"      └─ IR module PTX (27 bytes at 0x",
		"         └─ PTX (27 bytes at 0x",
		filepath.Join(dir, "v1.syclbin") + ": offload binary v1 (" + fmt.Sprint(len(v1)) + " bytes at 0x0)",
		"└─ image syclbin, producer sycl (",
		"   └─ SYCLBIN v1, encoding=v1, state=object (",
	} {
		if !strings.Contains(so.String(), "\n"+want) && !strings.HasPrefix(so.String(), want) {
			t.Errorf("tree lacks %q:\n%s", want, so.String())
		}
	}

	so.Reset()
	if rc := Main("offcc", []string{"--json", filepath.Join(dir, "v2.syclbin")}, &so, &se); rc != 0 {
		t.Fatalf("rc %d: %s", rc, se.String())
	}
	var roots []map[string]any
	if err := json.Unmarshal(so.Bytes(), &roots); err != nil {
		t.Fatal(err)
	}
	sb := roots[0]["children"].([]any)[0].(map[string]any)
	mod := sb["children"].([]any)[0].(map[string]any)
	if sb["kind"] != "syclbin" || sb["version"] != 2.0 || sb["keys"].(map[string]any)["encoding"] != "v2" ||
		mod["kind"] != "syclbin-module" || fmt.Sprint(mod["kernels"]) != "[_ZTS7KernelA _ZTS7KernelB]" {
		t.Errorf("JSON: %s", so.String())
	}
	set := mod["children"].([]any)[0].(map[string]any)
	if set["kind"] != "syclbin-property-set" || set["name"] != "SYCL/misc properties" || set["keys"].(map[string]any)["optLevel"] != "3" {
		t.Errorf("JSON property set: %v", set)
	}
}

// TestSYCLBINErrors checks that a damaged v2 SYCLBIN is an error that
// says where.
func TestSYCLBINErrors(t *testing.T) {
	glob := "[SYCLBIN/global metadata]\nstate=1|2\n"
	img := func(strs string, data string) packager.Image {
		im := packager.Image{Kind: 7, Offload: packager.OffloadSYCL, Data: []byte(data)}
		for _, kv := range strings.Split(strs, ",") {
			k, v, _ := strings.Cut(kv, "=")
			im.Strings = append(im.Strings, packager.KeyValue{Key: k, Value: v})
		}
		return im
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"unknown role", packager.MarshalV2([]packager.Image{img("role=global_metadata", glob), img("role=what,am_index=0", "")}),
			`offload binary at offset 0x0: SYCLBIN v2 entry 1 at offset 0x48: unknown role "what"`},
		{"duplicate global", packager.MarshalV2([]packager.Image{img("role=global_metadata", glob), img("role=global_metadata", glob)}),
			"duplicate global metadata"},
		{"am index", packager.MarshalV2([]packager.Image{img("role=global_metadata", glob), img("role=am_metadata,am_index=3", "")}),
			"am_index 3 out of range"},
	} {
		_, err := Inspect("bad.syclbin", tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestELFTypes builds what clang 22 links on Debian (-fPIE -pie is its
// default) and checks that an ET_DYN executable is called a PIE executable
// and a library a shared object, as file(1) calls them.
func TestELFTypes(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("int main(void) { return 0; }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "lib.c"), []byte("int f(int x) { return x + 1; }\n"), 0o644)
	run(t, dir, clang, "-fPIE", "-pie", "main.c", "-o", "pie")
	run(t, dir, clang, "-fPIE", "-pie", "-fuse-ld=lld", "main.c", "-o", "pie-lld")
	run(t, dir, clang, "main.c", "-o", "default")
	run(t, dir, clang, "-fno-PIE", "-no-pie", "main.c", "-o", "nopie")
	run(t, dir, clang, "-fPIC", "-shared", "lib.c", "-o", "lib.so")
	run(t, dir, clang, "-c", "lib.c", "-o", "lib.o")
	for _, c := range []struct{ file, want string }{
		{"pie", "ELF64 PIE executable x86-64"},
		{"pie-lld", "ELF64 PIE executable x86-64"},
		{"default", "ELF64 PIE executable x86-64"},
		{"nopie", "ELF64 executable x86-64"},
		{"lib.so", "ELF64 shared object x86-64"},
		{"lib.o", "ELF64 relocatable x86-64"},
	} {
		n := inspectPath(t, filepath.Join(dir, c.file))
		var buf bytes.Buffer
		WriteTree(&buf, n)
		if n.Format != c.want || !strings.HasPrefix(buf.String(), c.file+": "+c.want+" (") {
			t.Errorf("%s: format %q, tree %q; want %q", c.file, n.Format, buf.String(), c.want)
		}
	}
	// A library with an interpreter, as glibc's, is still a shared object.
	if data, err := os.ReadFile("/lib/x86_64-linux-gnu/libc.so.6"); err == nil {
		if n, err := Inspect("libc.so.6", data); err != nil || n.Format != "ELF64 shared object x86-64" {
			t.Errorf("libc.so.6: %+v, %v", n, err)
		}
	}
}

// TestRealPoclBinary describes a program binary pocl 3.1 wrote (see
// poclbin/testdata/README.md): each kernel record is shown where it is in
// the file, with its length, and holds its kernel's .so.
func TestRealPoclBinary(t *testing.T) {
	n := inspectPath(t, "../poclbin/testdata/pocl31.poclbin")
	if n.Kind != "pocl-program" || n.Version != 9 || n.Keys["binary-type"] != "executable" {
		t.Fatalf("root: %+v", n)
	}
	ks := find(n, "pocl-kernel")
	want := []struct {
		name         string
		offset, size uint64
	}{{"vadd", 0x8944, 0x35b0}, {"scale", 0xbef4, 0x3593}}
	if len(ks) != len(want) {
		t.Fatalf("%d kernels, want %d", len(ks), len(want))
	}
	for i, w := range want {
		k := ks[i]
		if k.Name != w.name || k.Offset != w.offset || k.Size != w.size {
			t.Errorf("kernel %s: %#x bytes at %#x; want %s, %#x bytes at %#x", k.Name, k.Size, k.Offset, w.name, w.size, w.offset)
		}
		if len(k.Children) != 1 || k.Children[0].Kind != "file-entry" || len(k.Children[0].Children) != 1 || k.Children[0].Children[0].Format != "ELF64 shared object x86-64" {
			t.Errorf("kernel %s children: %+v", k.Name, k.Children)
		} else if f := k.Children[0]; f.Offset < k.Offset || f.Offset+f.Size > k.Offset+k.Size {
			t.Errorf("kernel %s: file at %#x+%#x lies outside the record", k.Name, f.Offset, f.Size)
		}
	}
	var buf bytes.Buffer
	WriteTree(&buf, n)
	if !strings.Contains(buf.String(), "kernel vadd, args=3 (13744 bytes at 0x8944)") {
		t.Errorf("tree lacks the vadd record:\n%s", buf.String())
	}
}
