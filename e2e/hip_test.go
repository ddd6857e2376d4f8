package e2e

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hipArches are the devices the HIP tests compile for: AMD code compiles
// and links here, though it cannot run.
const hipArches = "--offload-arch=gfx906,gfx90a,gfx1030"

// hipFlags compile testdata/hip without ROCm: hip_min.h declares what
// clang's HIP code generation needs.
func hipFlags(t *testing.T) []string {
	return []string{"-x", "hip", hipArches, "-nogpuinc", "-nogpulib", "-O2", "-I" + srcPath(t, "../hip")}
}

// TestHIPRegistrationLikeClang compiles two HIP translation units with
// offcc and with clang 22, links each set with clang against a stand-in
// HIP runtime (testdata/hip/hipstub.c) and runs both programs: the objects
// are byte-identical, and the programs register the same fat binaries
// (one entry per arch), kernels, device, constant and managed variables,
// and unregister them at exit. offcc's device compiles and host compile
// ran at once.
func TestHIPRegistrationLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	stub := filepath.Join(dir, "libamdhip64.so")
	cmdSpec{dir: dir, name: refClang, args: args("-shared", "-fPIC", "-o", stub, srcPath(t, "../hip/hipstub.c"))}.mustRun(t)
	trace := filepath.Join(dir, "trace.json")
	var outputs []string
	// Each build in its own directory with the same relative -o: clang
	// hashes its arguments (-o included) into the compile unit ID that the
	// objects carry.
	for _, build := range []struct{ name, cc string }{{"clang", refClang}, {"offcc", c.cc}} {
		bdir := filepath.Join(dir, build.name)
		os.Mkdir(bdir, 0o755)
		var objs []string
		for _, tu := range []string{"kernels", "main"} {
			cmdSpec{dir: bdir, env: []string{tmp}, name: build.cc,
				args: args(hipFlags(t), "-c", srcPath(t, "../hip/"+tu+".hip"), "-o", tu+".o")}.mustRun(t)
			objs = append(objs, tu+".o")
		}
		cmdSpec{dir: bdir, env: []string{tmp}, name: refClangXX, args: args(objs, "-L"+dir, "-lamdhip64", "-o", "prog")}.mustRun(t)
		r := cmdSpec{dir: bdir, env: []string{"LD_LIBRARY_PATH=" + dir}, name: filepath.Join(bdir, "prog")}.mustRun(t)
		outputs = append(outputs, r.stdout)
	}
	// Once more with a job trace (an offcc option, so not for clang).
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
		args: args(hipFlags(t), "--job-trace="+trace, "--no-cache", "-c", srcPath(t, "../hip/kernels.hip"), "-o", "traced.o")}.mustRun(t)
	for _, tu := range []string{"kernels", "main"} {
		a, _ := os.ReadFile(filepath.Join(dir, "clang", tu+".o"))
		b, _ := os.ReadFile(filepath.Join(dir, "offcc", tu+".o"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s.o: offcc's object (%d bytes) differs from clang's (%d bytes)", tu, len(b), len(a))
		}
	}
	if outputs[0] != outputs[1] {
		t.Errorf("registration differs:\n--- clang\n%s--- offcc\n%s", outputs[0], outputs[1])
	}
	for _, want := range []string{
		"fatbin: entry hipv4-amdgcn-amd-amdhsa--gfx906 ", "fatbin: entry hipv4-amdgcn-amd-amdhsa--gfx90a ",
		"fatbin: entry hipv4-amdgcn-amd-amdhsa--gfx1030 ", "kernel: module 0 _Z5scalePffi",
		"kernel: module 0 _Z4fillIiEvPT_S0_i", "var: module 0 coef size=16 extern=0 constant=1",
		"managed: module 0 managed_total size=4", "kernel: module 1 _Z7in_mainPi", "unregister: module 0",
	} {
		if !strings.Contains(outputs[1], want) {
			t.Errorf("offcc's program does not register %q:\n%s", want, outputs[1])
		}
	}
	// The compiles of kernels.hip overlapped in time: the device compiles
	// with each other, and the host compile with a device compile.
	device := spans(t, trace, "device-compile")
	host := spans(t, trace, "compile")
	embedded := len(spans(t, trace, "embed")) > 0
	devOverlap, hostOverlap := false, false
	for i := range device {
		hostOverlap = hostOverlap || len(host) == 1 && device[i].overlaps(host[0])
		for j := range i {
			devOverlap = devOverlap || device[i].overlaps(device[j])
		}
	}
	if len(device) != 3 || !devOverlap || !hostOverlap || !embedded {
		t.Errorf("trace: %d device compiles (want 3), overlapping each other: %v, the host compile: %v; embed step: %v",
			len(device), devOverlap, hostOverlap, embedded)
	}
}

// TestHIPLLVMBundles: the old driver's -fgpu-rdc compile (an object
// bundle) and --offload-compress (a zstd bundle) run on offcc's graph,
// their bundles made by LLVM's clang-offload-bundler, so the objects are
// clang's byte for byte; so does the old driver's -fgpu-rdc link.
func TestHIPLLVMBundles(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	for _, d := range []string{"offcc", "clang"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	src := srcPath(t, "../hip/kernels.hip")
	for _, mode := range []string{"-fgpu-rdc", "--offload-compress"} {
		r := cmdSpec{dir: filepath.Join(dir, "offcc"), env: []string{tmp}, name: c.cc, args: args(hipFlags(t), mode, "-v", "-c", src, "-o", "k.o")}.mustRun(t)
		if strings.Contains(r.stderr, "note: handing the command line to clang") || !strings.Contains(r.stderr, "clang-offload-bundler\" -type=o") {
			t.Errorf("%s: not planned by offcc with LLVM's bundler:\n%s", mode, r.stderr)
		}
		cmdSpec{dir: filepath.Join(dir, "clang"), env: []string{tmp}, name: refClang, args: args(hipFlags(t), mode, "-v", "-c", src, "-o", "k.o")}.mustRun(t)
		a, _ := os.ReadFile(filepath.Join(dir, "clang", "k.o"))
		b, _ := os.ReadFile(filepath.Join(dir, "offcc", "k.o"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: offcc's object differs from clang's", mode)
		}
	}
	// The link needs a HIP runtime: the stand-in one.
	cmdSpec{dir: dir, name: refClang, args: args("-shared", "-fPIC", "-o", filepath.Join(dir, "libamdhip64.so"), srcPath(t, "../hip/hipstub.c"))}.mustRun(t)
	// The old driver's -fgpu-rdc link (unbundle each object, one lld
	// device link per arch, the fat binary bundled and assembled into an
	// object, the host link) runs on offcc's graph too: the shared library
	// and the program are clang's byte for byte, and register the same.
	outs := map[string]string{}
	for _, b := range []struct{ name, cc string }{{"clang", refClangXX}, {"offcc", c.cxx}} {
		bdir := filepath.Join(dir, b.name)
		for _, tu := range []string{"kernels", "main"} {
			cmdSpec{dir: bdir, env: []string{tmp}, name: b.cc, args: args(hipFlags(t), "-fgpu-rdc", "-fPIC", "-c", srcPath(t, "../hip/"+tu+".hip"), "-o", tu+".o")}.mustRun(t)
		}
		// k.o, from the compressed compile above, has no -fgpu-rdc code:
		// its link embeds no fat binary.
		for _, link := range [][]string{{"kernels.o", "-shared", "-o", "libk.so"}, {"k.o", "-shared", "-o", "libnone.so"}, {"kernels.o", "main.o", "-o", "prog"}} {
			cmd := args("-fgpu-rdc", "--hip-link", hipArches, "-v", link, "-L"+dir, "-lamdhip64")
			if b.name == "offcc" {
				cmd = append(cmd, "--no-cache", "--job-trace=link.json")
			}
			r := cmdSpec{dir: bdir, env: []string{tmp}, name: b.cc, args: cmd}.mustRun(t)
			if strings.Contains(r.stderr, "note: handing the command line to clang") {
				t.Errorf("old-driver -fgpu-rdc link %v went to clang:\n%s", link, r.stderr)
			}
		}
		outs[b.name] = cmdSpec{dir: bdir, env: []string{"LD_LIBRARY_PATH=" + dir}, name: filepath.Join(bdir, "prog")}.mustRun(t).stdout
	}
	for _, f := range []string{"libk.so", "libnone.so", "prog"} {
		a, _ := os.ReadFile(filepath.Join(dir, "clang", f))
		b, _ := os.ReadFile(filepath.Join(dir, "offcc", f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("old-driver -fgpu-rdc link: offcc's %s (%d bytes) differs from clang's (%d bytes)", f, len(b), len(a))
		}
	}
	if outs["clang"] != outs["offcc"] || !strings.Contains(outs["offcc"], "kernel: module 0 _Z5scalePffi") {
		t.Errorf("old-driver -fgpu-rdc program: registration differs:\n--- clang\n%s--- offcc\n%s", outs["clang"], outs["offcc"])
	}
	links := spans(t, filepath.Join(dir, "offcc", "link.json"), "device-link")
	if len(links) != 3 || !links[0].overlaps(links[1]) && !links[1].overlaps(links[2]) && !links[0].overlaps(links[2]) {
		t.Errorf("old-driver -fgpu-rdc link: want 3 device links, some at once: %v", links)
	}
}

// hipFatbinSection returns the .hip_fatbin section of an executable.
func hipFatbinSection(t *testing.T, path string) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".hip_fatbin")
	if sec == nil {
		t.Fatalf("%s has no .hip_fatbin section", path)
	}
	b, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHIPNewDriverLikeClang builds testdata/hip with the new offload
// driver, without and with -fgpu-rdc, with offcc and with clang 22 (each
// build in its own directory, same relative -o): the objects are
// byte-identical; each set, linked by its own compiler (for -fgpu-rdc
// offcc's link stage links each arch, bundles and registers), registers
// the same fat binary entries, kernels and variables with the stand-in
// HIP runtime; the -fgpu-rdc programs carry the same fat binary byte for
// byte, also when offcc links clang's objects and clang offcc's; and
// offcc's link ran the two archs' device links at once.
func TestHIPNewDriverLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	stub := filepath.Join(dir, "libamdhip64.so")
	cmdSpec{dir: dir, name: refClang, args: args("-shared", "-fPIC", "-o", stub, srcPath(t, "../hip/hipstub.c"))}.mustRun(t)
	arches := "--offload-arch=gfx906,gfx90a"
	flags := []string{"-x", "hip", arches, "-nogpuinc", "-nogpulib", "-O2", "-I" + srcPath(t, "../hip"), "--offload-new-driver"}
	for _, mode := range []struct {
		name string
		rdc  []string
	}{{"new-driver", nil}, {"new-driver-rdc", []string{"-fgpu-rdc"}}} {
		outs := map[string]string{}
		for _, build := range []struct{ name, cc string }{{"clang", refClangXX}, {"offcc", c.cxx}} {
			bdir := filepath.Join(dir, mode.name, build.name)
			os.MkdirAll(bdir, 0o755)
			for _, tu := range []string{"kernels", "main"} {
				cmdSpec{dir: bdir, env: []string{tmp}, name: build.cc,
					args: args(flags, mode.rdc, "-c", srcPath(t, "../hip/"+tu+".hip"), "-o", tu+".o")}.mustRun(t)
			}
			link := args("--offload-new-driver", mode.rdc, arches, "kernels.o", "main.o", "-L"+dir, "-lamdhip64", "-o", "prog")
			if build.name == "offcc" {
				// The trace must show the device links running.
				link = append(link, "--job-trace=link.json", "--no-cache")
			}
			cmdSpec{dir: bdir, env: []string{tmp}, name: build.cc, args: link}.mustRun(t)
			outs[build.name] = cmdSpec{dir: bdir, env: []string{"LD_LIBRARY_PATH=" + dir}, name: filepath.Join(bdir, "prog")}.mustRun(t).stdout
		}
		for _, tu := range []string{"kernels", "main"} {
			a, _ := os.ReadFile(filepath.Join(dir, mode.name, "clang", tu+".o"))
			b, _ := os.ReadFile(filepath.Join(dir, mode.name, "offcc", tu+".o"))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("%s: %s.o: offcc's object (%d bytes) differs from clang's (%d bytes)", mode.name, tu, len(b), len(a))
			}
		}
		if outs["clang"] != outs["offcc"] {
			t.Errorf("%s: registration differs:\n--- clang\n%s--- offcc\n%s", mode.name, outs["clang"], outs["offcc"])
		}
		for _, want := range []string{"fatbin: magic=0x48495046 version=1", "fatbin: entry hip-amdgcn-amd-amdhsa--gfx906 ",
			"fatbin: entry hip-amdgcn-amd-amdhsa--gfx90a ", "kernel: module 0 _Z5scalePffi", "managed: module 0 managed_total size=4",
			"var: module 0 coef size=16 extern=0 constant=1", "unregister: module 0"} {
			if !strings.Contains(outs["offcc"], want) {
				t.Errorf("%s: offcc's program does not register %q:\n%s", mode.name, want, outs["offcc"])
			}
		}
		if mode.rdc == nil {
			continue
		}
		// The link stage's fat binary, also across compilers.
		want := hipFatbinSection(t, filepath.Join(dir, mode.name, "clang", "prog"))
		if got := hipFatbinSection(t, filepath.Join(dir, mode.name, "offcc", "prog")); !bytes.Equal(got, want) {
			t.Errorf("%s: offcc's fat binary (%d bytes) differs from clang's (%d bytes)", mode.name, len(got), len(want))
		}
		for _, cross := range []struct{ objs, cc string }{{"clang", c.cxx}, {"offcc", refClangXX}} {
			objs := filepath.Join(dir, mode.name, cross.objs)
			prog := filepath.Join(dir, mode.name, "cross-"+cross.objs)
			cmdSpec{dir: objs, env: []string{tmp}, name: cross.cc,
				args: args("--offload-new-driver", "-fgpu-rdc", arches, "kernels.o", "main.o", "-L"+dir, "-lamdhip64", "-o", prog)}.mustRun(t)
			out := cmdSpec{dir: dir, env: []string{"LD_LIBRARY_PATH=" + dir}, name: prog}.mustRun(t).stdout
			if out != outs["clang"] || !bytes.Equal(hipFatbinSection(t, prog), want) {
				t.Errorf("%s objects linked by %s: registration or fat binary differs from clang's build:\n%s", cross.objs, cross.cc, out)
			}
		}
		links := spans(t, filepath.Join(dir, mode.name, "offcc", "link.json"), "device-link")
		if len(links) != 2 || !links[0].overlaps(links[1]) {
			t.Errorf("%s: the link's device links did not run at once: %v", mode.name, links)
		}
	}
}
