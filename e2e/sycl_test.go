package e2e

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// The SYCL tests build testdata/sycl (kernels without SYCL headers, see
// sycl_min.h) with -fsycl, as clang 22 does with no SYCL runtime: the
// device code is SPIR-V, linked by clang-sycl-linker, and registered at
// start-up through __sycl_register_lib, which the stand-in runtime
// testdata/sycl/syclstub.c defines and prints.

// syclTUs are testdata/sycl's translation units, in link order.
var syclTUs = []string{"kernels", "device", "main"}

// syclKernels are the kernels the program registers (names of the kernel
// name types, _ZTS + mangled type).
var syclKernels = []string{
	"_ZTS9AddKernel", "_ZTS11ScaleKernelIiE", "_ZTS11ScaleKernelIfE", "_ZTSN2ns5TwiceE",
	"_ZTS10FillKernel", "_ZTS7Functor",
}

// syclFlags compile testdata/sycl.
var syclFlags = []string{"-fsycl", "-O2"}

// syclSrc returns the path of a file under testdata/sycl.
func syclSrc(t testing.TB, name string) string { return srcPath(t, "../sycl/"+name) }

// syclEnv is the environment of SYCL compiles and links: TMPDIR, and
// LLVM 22's tools on PATH (clang-linker-wrapper finds clang-sycl-linker
// there).
func syclEnv(tmp string) []string {
	return []string{tmp, "PATH=" + llvmBin + string(os.PathListSeparator) + os.Getenv("PATH")}
}

// syclStub builds the stand-in SYCL runtime dir/libsycl.so.
func syclStub(t testing.TB, dir string) {
	t.Helper()
	cmdSpec{dir: dir, name: refClang,
		args: args("-shared", "-fPIC", "-o", filepath.Join(dir, "libsycl.so"), syclSrc(t, "syclstub.c"))}.mustRun(t)
}

// syclCompile compiles testdata/sycl's translation units with cxx and
// -fsycl -O2 -c into dir (as <tu>.o, a relative -o).
func syclCompile(t testing.TB, cxx, dir string, env []string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tu := range syclTUs {
		cmdSpec{dir: dir, env: env, name: cxx,
			args: args(syclFlags, "-c", syclSrc(t, tu+".cpp"), "-o", tu+".o")}.mustRun(t)
	}
}

// syclLinkRun links objs (paths) with cxx -fsycl against stubDir's
// libsycl.so into dir/prog, runs it with the stub dumping the registered
// images into dir/dump, and returns its output.
func syclLinkRun(t testing.TB, cxx, dir string, env []string, stubDir string, objs []string) string {
	t.Helper()
	cmdSpec{dir: dir, env: env, name: cxx,
		args: args("-fsycl", objs, "-L"+stubDir, "-lsycl", "-o", "prog")}.mustRun(t)
	dump := filepath.Join(dir, "dump")
	if err := os.MkdirAll(dump, 0o755); err != nil {
		t.Fatal(err)
	}
	r := cmdSpec{dir: dir, env: []string{"LD_LIBRARY_PATH=" + stubDir, "SYCLSTUB_DUMP=" + dump},
		name: filepath.Join(dir, "prog")}.mustRun(t)
	return r.stdout
}

// checkSYCLRegistration checks a program's registration output: one
// SPIR-V image for spirv64-unknown-unknown with every kernel, registered
// before main runs and unregistered after it returns.
func checkSYCLRegistration(t testing.TB, who, out string) {
	t.Helper()
	want := []string{
		"register: lib 0 version=1 images=1 host_entries=null\n",
		"image 0.0: version=3 kind=8 format=0 triple=spirv64-unknown-unknown\n",
		"image 0.0: compile_options=\"\" link_options=\"\"\n",
		" spirv\n",
		"image 0.0: entries=6 properties=null\n",
		"main: kernels called\nunregister: lib 0 images=1\n",
	}
	for _, k := range syclKernels {
		want = append(want, "entry 0.0: "+k+" version=1 kind=8 flags=0 size=0 data=0 addr=null aux=null\n")
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: the program's registration lacks %q:\n%s", who, w, out)
		}
	}
	if n := strings.Count(out, "register: lib"); n != 2 {
		t.Errorf("%s: %d register/unregister lines, want 2 (one library):\n%s", who, n, out)
	}
	if n := strings.Count(out, " triple="); n != 1 {
		t.Errorf("%s: %d images registered, want 1:\n%s", who, n, out)
	}
}

// syclImage returns the image that dir's program registered (dumped by
// the stub).
func syclImage(t testing.TB, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "dump", "lib0-image0.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// spirvMagic begins a SPIR-V module (little-endian 0x07230203).
var spirvMagic = []byte{0x03, 0x02, 0x23, 0x07}

// TestSYCLRegistrationLikeClang compiles testdata/sycl's three translation
// units with -fsycl -O2 -c with the compiler under test and with clang 22
// (each build in its own directory with the same relative -o, so the
// objects can be compared), links each set with the compiler that compiled
// it, and runs both programs against the stand-in SYCL runtime: they
// register the same SPIR-V image (same size and hash) with the same
// kernels. The registered image is the one clang -save-temps leaves at
// the link, and both programs' images validate with spirv-val.
func TestSYCLRegistrationLikeClang(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	env := syclEnv(tmp)
	syclStub(t, dir)
	builds := []struct{ name, cxx string }{{"clang", refClangXX}, {"offcc", c.cxx}}
	var outputs []string
	for _, b := range builds {
		bdir := filepath.Join(dir, b.name)
		syclCompile(t, b.cxx, bdir, env)
		out := syclLinkRun(t, b.cxx, bdir, env, dir, slicesMap(syclTUs, func(tu string) string { return tu + ".o" }))
		checkSYCLRegistration(t, b.name, out)
		outputs = append(outputs, out)
	}
	t.Logf("clang's program:\n%s", outputs[0])
	if outputs[0] != outputs[1] {
		t.Errorf("registration differs:\n--- clang\n%s--- offcc\n%s", outputs[0], outputs[1])
	}
	for _, tu := range syclTUs {
		a, _ := os.ReadFile(filepath.Join(dir, "clang", tu+".o"))
		b, _ := os.ReadFile(filepath.Join(dir, "offcc", tu+".o"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s.o: offcc's object (%d bytes) differs from clang's (%d bytes)", tu, len(b), len(a))
		}
	}
	clangImage, offccImage := syclImage(t, filepath.Join(dir, "clang")), syclImage(t, filepath.Join(dir, "offcc"))
	if !bytes.HasPrefix(offccImage, spirvMagic) || !bytes.Equal(clangImage, offccImage) {
		t.Errorf("offcc's program registered an image (%d bytes) that differs from clang's (%d bytes)",
			len(offccImage), len(clangImage))
	}

	// Linking clang's objects with -save-temps leaves the linked SPIR-V:
	// it is what clang's program registered. (Not compiling with
	// -save-temps: that keeps value names, which end up in the SPIR-V.)
	sdir := filepath.Join(dir, "save-temps")
	os.Mkdir(sdir, 0o755)
	cmdSpec{dir: sdir, env: env, name: refClangXX,
		args: args("-fsycl", "-save-temps", slicesMap(syclTUs, func(tu string) string { return filepath.Join(dir, "clang", tu+".o") }),
			"-L"+dir, "-lsycl", "-o", "prog")}.mustRun(t)
	spvs, _ := filepath.Glob(filepath.Join(sdir, "*.spv"))
	if len(spvs) != 1 {
		t.Fatalf("clang -save-temps left %d .spv files, want 1: %q", len(spvs), spvs)
	}
	saved, err := os.ReadFile(spvs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(saved, clangImage) {
		t.Errorf("%s (%d bytes) is not the image clang's program registered (%d bytes)",
			filepath.Base(spvs[0]), len(saved), len(clangImage))
	}
	validateSPIRV(t, spvs[0], filepath.Join(dir, "offcc", "dump", "lib0-image0.bin"))
}

// validateSPIRV runs spirv-val on each file. Without spirv-val it only
// logs, unless OFFCC_REQUIRE_LLVM=1.
func validateSPIRV(t testing.TB, files ...string) {
	t.Helper()
	val, err := exec.LookPath("spirv-val")
	if err != nil {
		if llvmtest.Required() {
			t.Fatalf("spirv-val not found (%v) and %s=1", err, llvmtest.EnvRequire)
		}
		t.Logf("spirv-val not found: the SPIR-V is not validated")
		return
	}
	for _, f := range files {
		r := cmdSpec{dir: filepath.Dir(f), name: val, args: args(f)}.run(t)
		if r.code != 0 {
			t.Errorf("spirv-val rejects %s:\n%s", f, r)
		}
	}
}

// slicesMap returns f applied to each element of s.
func slicesMap(s []string, f func(string) string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// fileKind classifies a compiler output: "bitcode", "elf" (with
// "+offloading" when it has an .llvm.offloading section) or "other".
func fileKind(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case bytes.HasPrefix(b, []byte("BC\xc0\xde")):
		return "bitcode"
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		f, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if f.Section(".llvm.offloading") != nil {
			return "elf+offloading"
		}
		return "elf"
	}
	return "other"
}

// TestSYCLDeviceHostOnly: -fsycl-device-only and --offload-device-only
// write the device bitcode, named as clang names it (with one file per
// target under --offload-targets); -fsycl-host-only and
// --offload-host-only write a host object without an .llvm.offloading
// section; plain -fsycl -c one with it. The compiler under test writes the
// same files as clang, byte for byte.
func TestSYCLDeviceHostOnly(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	env := syclEnv(tmp)
	src := syclSrc(t, "kernels.cpp")
	for i, tc := range []struct {
		flags []string
		out   string            // -o, or none
		want  map[string]string // file name: kind
	}{
		{args("-fsycl-device-only"), "", map[string]string{"kernels-sycl-spirv64-unknown-unknown.bc": "bitcode"}},
		{args("--offload-device-only"), "", map[string]string{"kernels-sycl-spirv64-unknown-unknown.bc": "bitcode"}},
		{args("-fsycl-device-only"), "dev.o", map[string]string{"dev.o": "bitcode"}},
		{args("--offload-device-only"), "dev.bc", map[string]string{"dev.bc": "bitcode"}},
		{args("-fsycl-device-only", "--offload-targets=spirv64,spirv32"), "",
			map[string]string{"kernels-sycl-spirv64.bc": "bitcode", "kernels-sycl-spirv32.bc": "bitcode"}},
		{args("-fsycl-host-only"), "", map[string]string{"kernels.o": "elf"}},
		{args("--offload-host-only"), "", map[string]string{"kernels.o": "elf"}},
		{args("-fsycl-host-only"), "host.o", map[string]string{"host.o": "elf"}},
		{nil, "", map[string]string{"kernels.o": "elf+offloading"}},
		{args("--offload-targets=spirv64,spirv32"), "k.o", map[string]string{"k.o": "elf+offloading"}},
	} {
		desc := strings.Join(args(syclFlags, tc.flags, "-c"), " ")
		if tc.out != "" {
			desc += " -o " + tc.out
		}
		var lists [2][]string
		for j, b := range []struct{ name, cxx string }{{"clang", refClangXX}, {"offcc", c.cxx}} {
			bdir := filepath.Join(dir, b.name, string(rune('a'+i)))
			if err := os.MkdirAll(bdir, 0o755); err != nil {
				t.Fatal(err)
			}
			a := args(syclFlags, tc.flags, "-c", src)
			if tc.out != "" {
				a = append(a, "-o", tc.out)
			}
			cmdSpec{dir: bdir, env: env, name: b.cxx, args: a}.mustRun(t)
			ents, err := os.ReadDir(bdir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				lists[j] = append(lists[j], e.Name())
				if kind := fileKind(t, filepath.Join(bdir, e.Name())); kind != tc.want[e.Name()] {
					t.Errorf("%s: %s wrote %s, a file of kind %q; want %q", desc, b.name, e.Name(), kind, tc.want[e.Name()])
				}
			}
			if len(lists[j]) != len(tc.want) {
				t.Errorf("%s: %s wrote %q; want %d files", desc, b.name, lists[j], len(tc.want))
			}
		}
		if !slices.Equal(lists[0], lists[1]) {
			t.Errorf("%s: offcc wrote %q, clang %q", desc, lists[1], lists[0])
			continue
		}
		for _, name := range lists[0] {
			a, _ := os.ReadFile(filepath.Join(dir, "clang", string(rune('a'+i)), name))
			b, _ := os.ReadFile(filepath.Join(dir, "offcc", string(rune('a'+i)), name))
			if !bytes.Equal(a, b) {
				t.Errorf("%s: offcc's %s (%d bytes) differs from clang's (%d bytes)", desc, name, len(b), len(a))
			}
		}
	}
}

// TestSYCLMixedObjects links objects compiled by clang with objects
// compiled by the compiler under test, both ways round, each set linked
// by clang and by the compiler under test: every program registers what
// the all-clang program does.
func TestSYCLMixedObjects(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	env := syclEnv(tmp)
	syclStub(t, dir)
	compilers := map[string]string{"clang": refClangXX, "offcc": c.cxx}
	for name, cxx := range compilers {
		syclCompile(t, cxx, filepath.Join(dir, name), env)
	}
	objs := func(from ...string) []string { // from[i] compiled syclTUs[i]
		var o []string
		for i, tu := range syclTUs {
			o = append(o, filepath.Join(dir, from[i], tu+".o"))
		}
		return o
	}
	ldir := filepath.Join(dir, "link-all-clang")
	os.Mkdir(ldir, 0o755)
	want := syclLinkRun(t, refClangXX, ldir, env, dir, objs("clang", "clang", "clang"))
	checkSYCLRegistration(t, "all clang", want)
	for _, mix := range [][]string{{"clang", "offcc", "offcc"}, {"offcc", "clang", "clang"}, {"offcc", "offcc", "clang"}} {
		for _, linker := range []string{"clang", "offcc"} {
			name := "link-" + linker + "-" + strings.Join(mix, "-")
			ldir := filepath.Join(dir, name)
			os.Mkdir(ldir, 0o755)
			got := syclLinkRun(t, compilers[linker], ldir, env, dir, objs(mix...))
			if got != want {
				t.Errorf("%s linking %s (%s): registration differs from all clang's:\n--- all clang\n%s--- mixed\n%s",
					linker, strings.Join(syclTUs, ", "), strings.Join(mix, ", "), want, got)
			}
		}
	}
}

// TestSYCLSeveralTargets: a program built for two SPIR-V targets
// (--offload-targets=spirv64,spirv64-intel) registers one image per
// target, each valid SPIR-V with every kernel. clang-linker-wrapper 22
// registers only its first device link's images; offcc registers all.
func TestSYCLSeveralTargets(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "clang 22 registers one image")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	syclStub(t, dir)
	var srcs []string
	for _, tu := range syclTUs {
		srcs = append(srcs, syclSrc(t, tu+".cpp"))
	}
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cxx,
		args: args(syclFlags, "--offload-targets=spirv64,spirv64-intel", srcs, "-L"+dir, "-lsycl", "-o", "prog")}.mustRun(t)
	dump := filepath.Join(dir, "dump")
	os.Mkdir(dump, 0o755)
	out := cmdSpec{dir: dir, env: []string{"LD_LIBRARY_PATH=" + dir, "SYCLSTUB_DUMP=" + dump}, name: filepath.Join(dir, "prog")}.mustRun(t).stdout
	for _, w := range []string{"register: lib 0 version=1 images=2 ", "triple=spirv64\n", "triple=spirv64-intel\n", "unregister: lib 0 images=2\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("registration lacks %q:\n%s", w, out)
		}
	}
	for _, im := range []string{"0.0", "0.1"} {
		for _, k := range syclKernels {
			if !strings.Contains(out, "entry "+im+": "+k+" ") {
				t.Errorf("image %s does not register kernel %s:\n%s", im, k, out)
			}
		}
	}
	validateSPIRV(t, filepath.Join(dump, "lib0-image0.bin"), filepath.Join(dump, "lib0-image1.bin"))
}

// TestSYCLDepFileLikeClang: with -MD the host compile, which offcc runs
// beside the device compile, writes the user's dependency file as clang's
// build does, and the object is clang's.
func TestSYCLDepFileLikeClang(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	var deps, objs [][]byte
	for _, build := range []struct{ name, cc string }{{"clang", refClangXX}, {"test", c.cxx}} {
		bdir := filepath.Join(dir, build.name)
		os.Mkdir(bdir, 0o755)
		cmdSpec{dir: bdir, env: syclEnv(tmp), name: build.cc,
			args: args(syclFlags, "-MD", "-MP", "-c", syclSrc(t, "kernels.cpp"), "-o", "k.o")}.mustRun(t)
		d, err := os.ReadFile(filepath.Join(bdir, "k.d"))
		if err != nil {
			t.Fatal(err)
		}
		o, _ := os.ReadFile(filepath.Join(bdir, "k.o"))
		deps, objs = append(deps, d), append(objs, o)
	}
	if !bytes.Equal(deps[0], deps[1]) || !bytes.Contains(deps[1], []byte("sycl_min.h")) {
		t.Errorf("dependency file differs from clang's or lacks sycl_min.h:\n--- clang\n%s--- %s\n%s", deps[0], c.cxx, deps[1])
	}
	if len(objs[0]) == 0 || !bytes.Equal(objs[0], objs[1]) {
		t.Errorf("object differs from clang's")
	}
}
