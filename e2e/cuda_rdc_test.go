package e2e

// Tests of CUDA's separable compilation with the old offload driver
// (--no-offload-new-driver -fgpu-rdc: the fat binary goes to
// __nv_relfatbin) and of fat binary sections that a translation unit fills
// itself (CUDA's crt/link.stub, which CMake compiles for the device link
// of separable compilation, puts nvlink's fat binary in .nv_fatbin with
// top-level asm). clang 22's -fgpu-rdc alone uses the new driver.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// linkStub returns the path of the CUDA toolkit's crt/link.stub, which
// CMake compiles for the device link of separable compilation.
func linkStub(t *testing.T, tk llvmtest.CUDAToolkit) string {
	t.Helper()
	for _, p := range []string{
		filepath.Join(filepath.Dir(tk.Nvcc), "crt", "link.stub"),
		"/usr/lib/nvidia-cuda-toolkit/bin/crt/link.stub",
		"/usr/local/cuda/bin/crt/link.stub",
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	llvmtest.Missing(t, "the CUDA toolkit's crt/link.stub not found (make deps-cuda installs it)")
	return ""
}

// readTree returns the files under root that keep selects (by their path
// relative to root), by that path.
func readTree(t testing.TB, root string, keep func(rel string) bool) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if keep(rel) {
			b, err := os.ReadFile(p)
			files[rel] = b
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameFiles fails unless dir/clang and dir/offcc hold the same files (by
// name, recursively, those keep selects) with the same bytes, and returns
// the names compared.
func sameFiles(t *testing.T, dir string, keep func(name string) bool) []string {
	t.Helper()
	list := func(who string) map[string][]byte { return readTree(t, filepath.Join(dir, who), keep) }
	theirs, ours := list("clang"), list("offcc")
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range theirs {
			if !yield(n) {
				return
			}
		}
	})
	if len(names) == 0 {
		t.Fatalf("clang's build in %s wrote nothing to compare", dir)
	}
	for _, n := range names {
		b, ok := ours[n]
		switch {
		case !ok:
			t.Errorf("%s: clang wrote it, offcc did not", n)
		case !bytes.Equal(theirs[n], b):
			t.Errorf("%s: offcc's (%d bytes) differs from clang's (%d bytes)", n, len(b), len(theirs[n]))
		}
	}
	for n := range ours {
		if _, ok := theirs[n]; !ok {
			t.Errorf("%s: offcc wrote it, clang did not", n)
		}
	}
	return names
}

// TestCUDAOldDriverRDCLikeClang: relocatable device code with the old
// offload driver, over four translation units whose kernels use
// __shared__ memory, constant tables and device variables. Each object is
// clang's byte for byte and carries its device code in __nv_relfatbin,
// which cuobjdump and offcc inspect list alike. The device link done as
// CMake does it (nvlink per arch, fatbinary --embedded-fatbin, CUDA's
// crt/link.stub compiled by the compiler under test) gives clang's device
// link object and program, which register the same at start-up.
func TestCUDAOldDriverRDCLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	tk := llvmtest.CUDA(t)
	stubSrc := linkStub(t, tk)
	_, tmp := tmpEnv(t)
	root := t.TempDir()
	archs := []string{"sm_80", "sm_90"}
	rdc := []string{"-x", "cuda", "--no-offload-new-driver", "-fgpu-rdc", "--offload-arch=" + strings.Join(archs, ","), "-O2"}
	tus := []string{"rdc_main", "rdc_dev", "rdc_lib", "rdc_shared"}
	buildTwice(t, root, c, func(cxx, work string) {
		run := func(name string, argv ...string) {
			cmdSpec{dir: work, env: []string{tmp}, name: name, args: argv}.mustRun(t)
		}
		var objs []string
		for _, tu := range tus {
			run(cxx, args(rdc, "-c", cudaToolkitSrc(t, tu+".cu"), "-o", tu+".o")...)
			objs = append(objs, tu+".o")
		}
		// CMake's device link (CMAKE_CUDA_DEVICE_LINK_COMPILE for clang).
		for i, arch := range archs {
			reg := []string{}
			if i == 0 {
				reg = []string{"--register-link-binaries=" + filepath.Join(work, "register.h")}
			}
			run(tk.Nvlink, args("-arch="+arch, reg, "-o="+arch+".cubin", objs)...)
		}
		run(tk.Fatbinary, "-64", "-cmdline=--compile-only", "-compress-all", "-link", "--embedded-fatbin="+filepath.Join(work, "fatbin.h"),
			"-im=profile=sm_80,file=sm_80.cubin", "-im=profile=sm_90,file=sm_90.cubin")
		run(cxx, "--offload-arch="+strings.Join(archs, ","), "-D__CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__",
			"-D__NV_EXTRA_INITIALIZATION=", "-D__NV_EXTRA_FINALIZATION=",
			`-DREGISTERLINKBINARYFILE="`+filepath.Join(work, "register.h")+`"`, `-DFATBINFILE="`+filepath.Join(work, "fatbin.h")+`"`,
			"-x", "cuda", "-c", stubSrc, "-o", "cmake_device_link.o")
		run(cxx, args(objs, "cmake_device_link.o", "-lcudart", "-o", "prog")...)
	})
	compared := sameFiles(t, root, func(string) bool { return true })
	for _, want := range []string{"rdc_shared.o", "cmake_device_link.o", "prog"} {
		if !slices.Contains(compared, want) {
			t.Errorf("%s was not compared (%v)", want, compared)
		}
	}
	// cuobjdump and offcc inspect find each object's device code (nvlink
	// above read it: the program's cubins hold every kernel).
	for _, tu := range tus {
		obj := filepath.Join(root, "offcc", tu+".o")
		want := cuobjdumpEntries(t, tk, obj)
		if !slices.Equal(want, []string{"ELF sm_80", "PTX sm_80", "ELF sm_90", "PTX sm_90"}) {
			t.Errorf("%s: cuobjdump lists %v, want a cubin and PTX for sm_80 and sm_90", tu, want)
		}
		if got := inspectEntries(t, c, obj); !slices.Equal(got, want) {
			t.Errorf("%s: offcc inspect lists %v, cuobjdump %v", tu, got, want)
		}
	}
	sass := cmdSpec{dir: root, name: tk.Cuobjdump, args: args("-sass", filepath.Join(root, "offcc", "prog"))}.mustRun(t).stdout
	for _, kernel := range []string{"_Z5applyPfi", "_Z8blocksumPKfi", "_Z5resetv"} {
		if n := strings.Count(sass, "Function : "+kernel); n != 2 {
			t.Errorf("cuobjdump -sass of the program shows %s %d times, want once per arch", kernel, n)
		}
	}
	// The registered fat binary (.nv_fatbin; the program keeps the
	// objects' __nv_relfatbin too, which cuobjdump does not list).
	for _, f := range []string{"cmake_device_link.o", "prog"} {
		file := filepath.Join(root, "offcc", f)
		if got, want := inspectSectionEntries(t, c, file, ".nv_fatbin"), cuobjdumpEntries(t, tk, file); !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s: offcc inspect lists %v in .nv_fatbin, cuobjdump %v", f, got, want)
		}
	}
	stub := t.TempDir()
	cudartStub(t, stub)
	sameRegistration(t, root, stub, "", "fatbin: magic=0x466243b1 version=2", "kernel: module 0 _Z5applyPfi",
		"kernel: module 0 _Z8blocksumPKfi", "var: module 0 hits size=4", "var: module 0 weights size=32 extern=0 constant=1",
		"var: module 0 partial size=4096", "launched apply", "unregister: module 0")
}

// inspectSectionEntries returns what offcc inspect --json lists of the fat
// binary entries in file's section, in cuobjdumpEntries' form.
func inspectSectionEntries(t *testing.T, c compiler, file, section string) []string {
	t.Helper()
	type node struct {
		Kind, Name, Format, Arch string
		Children                 []node
	}
	var files []node
	r := cmdSpec{dir: filepath.Dir(file), name: c.cc, args: args("inspect", "--json", file)}.mustRun(t)
	if err := json.Unmarshal([]byte(r.stdout), &files); err != nil || len(files) != 1 {
		t.Fatalf("offcc inspect --json: %v\n%s", err, r)
	}
	var out []string
	var walk func(n node, in bool)
	walk = func(n node, in bool) {
		in = in || n.Kind == "section" && n.Name == section
		if in && n.Kind == "nv-fatbin-entry" {
			out = append(out, n.Format+" "+n.Arch)
		}
		for _, k := range n.Children {
			walk(k, in)
		}
	}
	walk(files[0], false)
	return out
}

// fatbinAsm is top-level asm that puts 17 bytes of the translation unit's
// own into section, where CUDA's link.stub puts nvlink's fat binary.
func fatbinAsm(section string) string {
	return fmt.Sprintf("asm(\".section %s, \\\"a\\\"\\n.align 8\\nuserData:\\n.quad 0x1111111111111111,0x2222222222222222\\n.byte 3\\n.text\\n\");\n", section) +
		"extern \"C\" const unsigned char userData[];\nextern \"C\" const void *user_data(void) { return userData; }\n"
}

// TestFatbinSectionAsmLikeClang: a CUDA or HIP translation unit whose
// top-level asm puts bytes of its own into the fat binary section (.nv_fatbin,
// __nv_relfatbin, .hip_fatbin), with and without kernels, compiles into
// clang's object byte for byte: the user's bytes, then (with kernels)
// clang's fat binary after them. offcc inspect finds the fat binary.
func TestFatbinSectionAsmLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	_, tmp := tmpEnv(t)
	type model struct {
		name, ext, section string
		flags              []string
		toolkit            bool
	}
	models := []model{
		{"hip", "hip", ".hip_fatbin", []string{"-x", "hip", "--offload-arch=gfx90a,gfx1030", "-nogpuinc", "-nogpulib", "-I" + srcPath(t, "../hip")}, false},
		{"hip-new-driver", "hip", ".hip_fatbin", []string{"-x", "hip", "--offload-new-driver", "--offload-arch=gfx90a,gfx1030", "-nogpuinc", "-nogpulib", "-I" + srcPath(t, "../hip")}, false},
		{"cuda", "cu", ".nv_fatbin", []string{"-x", "cuda", "--offload-arch=sm_70,sm_80"}, true},
		{"cuda-old-rdc", "cu", "__nv_relfatbin", []string{"-x", "cuda", "--no-offload-new-driver", "-fgpu-rdc", "--offload-arch=sm_70,sm_80"}, true},
		{"cuda-old-rdc-nv_fatbin", "cu", ".nv_fatbin", []string{"-x", "cuda", "--no-offload-new-driver", "-fgpu-rdc", "--offload-arch=sm_80"}, true},
	}
	for _, m := range models {
		for _, kernel := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/kernel=%v", m.name, kernel), func(t *testing.T) {
				if m.toolkit {
					llvmtest.CUDA(t)
				}
				dir := t.TempDir()
				src := filepath.Join(dir, "stub."+m.ext)
				text := fatbinAsm(m.section)
				if m.ext == "hip" {
					text = "#include \"hip_min.h\"\n" + text
				}
				if kernel {
					text += "__global__ void k2(float *x) { x[0] += 1.0f; }\n"
				}
				if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				sameOutputs(t, dir, c, []string{tmp}, args(m.flags, "-O2", "-c", src, "-o", "stub.o"))
				obj := filepath.Join(dir, "offcc", "stub.o")
				out := cmdSpec{dir: dir, name: c.cc, args: args("inspect", obj)}.mustRun(t).stdout
				if kernel {
					fatbin := "NVIDIA fat binary"
					if m.ext == "hip" {
						fatbin = "bundle binary"
					}
					if !strings.Contains(out, "section "+m.section) || !strings.Contains(out, fatbin) {
						t.Errorf("offcc inspect does not find the fat binary in %s:\n%s", m.section, out)
					}
				}
			})
		}
	}
}
