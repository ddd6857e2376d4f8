package driver

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/options"
)

// clangCUID is cuidOfArgs over an unparsed command line: "" for one
// clang's table rejects.
func clangCUID(input string, args []string) string {
	parsed, err := options.ClangDriver().Parse(args)
	if err != nil {
		return ""
	}
	id, _ := cuidOfArgs(input, parsed)
	return id
}

// cuidKernel is a HIP (and CUDA) source that needs no headers.
const cuidKernel = `#include <stddef.h>
#define __global__ __attribute__((global))
struct dim3 { unsigned x, y, z; __attribute__((host,device)) dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {} };
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shmem, hipStream_t stream);
__global__ void k(int *p) { *p = 1; }
`

var (
	cuidArgRE    = regexp.MustCompile(`"-cuid=([0-9a-z]+)"`)
	cuidSymbolRE = regexp.MustCompile(`\b__hip_cuid_([0-9a-f]+)\b`)
)

// TestClangCUID checks clangCUID against clang 22: the __hip_cuid_ symbol
// of what `clang args` builds, and the -cuid= that `clang -### args` prints
// with -### at the end and at the front.
func TestClangCUID(t *testing.T) {
	clang := llvmtest.Clang(t)
	nm := llvmtest.Tool(t, "llvm-nm")
	hip := []string{"-x", "hip", "--offload-arch=gfx906", "-nogpuinc", "-nogpulib"}
	tests := []struct {
		name  string
		input string
		args  []string // before input
		after []string // after input
		built string   // the file holding __hip_cuid_, "" to check -### only (a build takes a second)
	}{
		{"arch-list", "k.hip", []string{"-x", "hip", "--offload-arch=gfx906,gfx90a", "-nogpuinc", "-nogpulib", "-c"}, []string{"-o", "k.o"}, "k.o"},
		{"arch-repeated", "k.hip", []string{"-x", "hip", "--offload-arch=gfx90a", "--offload-arch=gfx906,gfx90a", "-nogpuinc", "-nogpulib", "-c"}, []string{"-o", "k.o"}, ""},
		{"target-id", "k.hip", []string{"-x", "hip", "--offload-arch=gfx90a:xnack+", "-nogpuinc", "-nogpulib", "-c"}, []string{"-o", "k.o"}, ""},
		{"cuda-gpu-arch", "k.hip", []string{"-x", "hip", "--cuda-gpu-arch=gfx906", "-nogpuinc", "-nogpulib", "-c"}, []string{"-ok.o"}, ""},
		{"O2-joined-D-separate-I", "k.hip", append(slices.Clone(hip), "-O2", "-DFOO=1", "-I", "inc", "-U", "BAR", "-c"), []string{"-o", "k.o"}, ""},
		{"separate-D-joined-I-U", "k.hip", append(slices.Clone(hip), "-D", "FOO=1", "-Iinc", "-UBAR", "-O3", "-c"), []string{"-ok.o"}, "k.o"},
		{"std-g-warnings", "k.hip", append(slices.Clone(hip), "-std=c++17", "-g", "-Wall", "-Wno-unused-parameter", "-Werror=return-type", "-c"), []string{"-o", "k.o"}, ""},
		{"directory-input", "src/k.hip", append(slices.Clone(hip), "-c", "-o", "out/k.o"), nil, "out/k.o"},
		{"extension-no-x", "k.hip", []string{"--offload-arch=gfx906", "-nogpuinc", "-nogpulib", "-c"}, []string{"-o", "k.o"}, ""},
		{"joined-x", "k.hip", []string{"-xhip", "--offload-arch=gfx906", "-nocudainc", "-nocudalib", "-c"}, nil, ""},
		{"gpu-rdc", "k.hip", append(slices.Clone(hip), "-fgpu-rdc", "-c"), []string{"-o", "k.o"}, ""},
		{"depfile-include-isystem", "k.hip", append(slices.Clone(hip), "-MD", "-MF", "k.d", "-MTk.o", "-include", "pre.h", "-isystem", "sys", "-c"), nil, ""},
		{"xclang-mllvm", "k.hip", append(slices.Clone(hip), "-Xclang", "-fno-autolink", "-mllvm", "-inline-threshold=100", "-fPIC", "-c"), nil, ""},
		{"driver-mode-fuse-cuid", "k.hip", append([]string{"--driver-mode=g++", "-fuse-cuid=hash"}, append(hip, "-c")...), nil, ""},
		{"more-flags", "k.hip", append(slices.Clone(hip), "-O", "-Os", "-Oz", "-Og", "-O1", "-O0", "-w", "-g0", "-fpic", "-fPIE", "-fpie", "-fno-gpu-rdc", "-MMD", "-MP", "-c"), nil, ""},
		{"Ofast-Werror", "k.hip", append(slices.Clone(hip), "-Wextra", "-Werror", "-Wno-deprecated", "-Ofast", "--offload-host-device", "-c"), nil, ""},
		{"cuda-only-flags", "k.hip", append(slices.Clone(hip), "--cuda-host-only", "-c"), nil, ""},
		{"cuda-device-only", "k.hip", append(slices.Clone(hip), "--cuda-device-only", "-c"), nil, ""},
		{"verbose", "k.hip", append(slices.Clone(hip), "-v", "-c"), nil, "k.o"},
		{"fixed-cuid", "k.hip", append(slices.Clone(hip), "-cuid=abc123", "-c"), nil, ""},
		{"link-output", "k.hip", append(slices.Clone(hip), "-nostdlib", "-shared"), []string{"-o", "libk.so"}, "libk.so"},
		{"link-a.out", "k.hip", append(slices.Clone(hip), "-nostdlib", "-shared"), nil, "a.out"},
		{"device-only", "k.hip", append(slices.Clone(hip), "--offload-device-only", "-c"), nil, ""},
		{"host-only", "k.hip", append(slices.Clone(hip), "--offload-host-only", "-c"), nil, ""},
		{"preprocess", "k.hip", append(slices.Clone(hip), "-E"), nil, ""},
		{"assembly-llvm", "k.hip", append(slices.Clone(hip), "-S", "-emit-llvm"), nil, ""},
		{"new-driver", "k.hip", append(slices.Clone(hip), "--offload-new-driver", "-c"), []string{"-o", "k.o"}, "k.o"},
		{"new-driver-rdc", "k.hip", append(slices.Clone(hip), "--offload-new-driver", "-fgpu-rdc", "--no-offload-new-driver", "--offload-new-driver", "-c"), nil, ""},
		{"compress", "k.hip", append(slices.Clone(hip), "--offload-compress", "--no-offload-compress", "--offload-compress", "-c"), nil, ""},
		{"cuda-feature-path", "k.cu", []string{"-x", "cuda", "--offload-arch=sm_80,sm_90", "-nocudainc", "-nocudalib", "--cuda-feature=+ptx80", "--cuda-path=/nonexistent", "-Xclang", "-target-sdk-version=12.0", "-c"}, nil, ""},
		{"no-offload-arch-then-back", "k.hip", append(slices.Clone(hip), "--no-offload-arch=gfx906", "--offload-arch=gfx906,gfx90a", "-c"), nil, ""},
		{"no-offload-arch", "k.hip", append(slices.Clone(hip), "--offload-arch=gfx90a,gfx1030", "--no-offload-arch=gfx906", "-c"), []string{"-o", "k.o"}, ""},
		{"cuda", "k.cu", []string{"-x", "cuda", "--cuda-gpu-arch=sm_80", "-nocudainc", "-nocudalib", "-c"}, nil, ""},
		// Options of real projects' command lines, which offcc's earlier
		// hand-written table did not know.
		{"march-mtune", "k.hip", append(slices.Clone(hip), "-march=native", "-mtune=generic", "-c"), []string{"-o", "k.o"}, "k.o"},
		{"xarch-and-rocm-paths", "k.hip", append(slices.Clone(hip), "--rocm-path=/usr", "--hip-path=/usr", "-mcode-object-version=5",
			"-D__AMDGCN_WAVEFRONT_SIZE=64", "-Xarch_gfx906", "-U__AMDGCN_WAVEFRONT_SIZE", "-Xarch_gfx906", "-D__AMDGCN_WAVEFRONT_SIZE=32",
			"--hip-device-lib=hip.bc", "-Xarch_gfx906", "--hip-device-lib=ocml.bc", "-c"), nil, ""},
		{"linker-rewrites", "k.hip", append(slices.Clone(hip), "-nostdlib", "-shared", "-Wl,--no-demangle,--as-needed", "-Xlinker", "--no-demangle",
			"-lstdc++", "-l", "m", "-Wl,-z,defs"), []string{"-o", "libk.so"}, ""},
		{"stdcxx-reserved", "k.hip", append(slices.Clone(hip), "-shared", "-lstdc++", "-lcc_kext"), nil, ""},
		{"wp-md", "k.hip", append(slices.Clone(hip), "-Wp,-MD,k.d", "-Wp,-MMD,k2.d,extra", "-c"), nil, ""},
		{"aliases", "k.hip", append(slices.Clone(hip), "--save-temps", "--include", "pre.h", "--std=c++17", "-fno-rtti", "--output", "k.o", "-c"), nil, ""},
		{"xclang-joined-I-isystem-spellings", "k.hip", append(slices.Clone(hip), "-isystemsys", "-isystem", "sys2", "-iquote", "q", "-idirafter", "a",
			"-DA", "-D", "B=1", "-UC", "-U", "D", "-Xclang", "-fno-autolink", "-ffast-math", "-Werror=format", "-std=gnu++14", "-O2", "-g", "-fPIC", "-c"), nil, ""},
		{"gpu-rdc-fixed-cuid", "k.hip", append(slices.Clone(hip), "-fgpu-rdc", "-cuid=abc", "-c"), nil, ""},
		{"cuda-path-std", "k.cu", []string{"-x", "cuda", "--offload-arch=sm_80", "--cuda-path=/usr/lib/cuda", "-nocudainc", "-nocudalib", "-std=c++17", "-march=native", "-c"}, nil, ""},
		{"x-hip-on-cu", "k.cu", append(slices.Clone(hip), "-c"), nil, ""},
		{"odd-spellings", "k.hip", append(slices.Clone(hip), "-O5", "-includepre.h", "-object-file-name=x", "-c"), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := cuidWorkDir(t)
			args := slices.Concat(tt.args, []string{tt.input}, tt.after)
			got := clangCUID(tt.input, args)
			if got == "" {
				t.Fatalf("clangCUID(%q, %q) = \"\"", tt.input, args)
			}
			for _, hashArgs := range [][]string{append(slices.Clone(args), "-###"), append([]string{"-###"}, args...)} {
				want := cuidFromHashHashHash(t, clang, dir, hashArgs)
				if got := clangCUID(tt.input, hashArgs); got != want {
					t.Errorf("clangCUID(%q, %q) = %q, clang -### printed -cuid=%s", tt.input, hashArgs, got, want)
				}
			}
			if tt.built == "" {
				return
			}
			if out, err := command(dir, clang, args...).CombinedOutput(); err != nil {
				t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			out, err := command(dir, nm, tt.built).Output()
			if err != nil {
				t.Fatalf("llvm-nm %s: %v", tt.built, err)
			}
			m := cuidSymbolRE.FindSubmatch(out)
			if m == nil {
				t.Fatalf("no __hip_cuid_ symbol in %s:\n%s", tt.built, out)
			}
			if want := string(m[1]); cuidSymbol(got) != want {
				t.Errorf("clangCUID(%q, %q) = %q, whose symbol hash is %s; clang built __hip_cuid_%s", tt.input, args, got, cuidSymbol(got), want)
			}
		})
	}
}

// cuidSymbol returns the hex suffix of the __hip_cuid_<hex> symbol a HIP
// object compiled with the given CUID defines: clang's ASTContext::
// getCUIDHash, utohexstr(MD5Hash(cuid), lower case).
func cuidSymbol(cuid string) string {
	return strconv.FormatUint(md5Low(cuid, nil), 16)
}

// cuidWorkDir returns a directory with the sources and directories the
// command lines of TestClangCUID name.
func cuidWorkDir(t *testing.T) string {
	dir := t.TempDir()
	for _, d := range []string{"src", "out", "inc", "sys"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"k.hip": cuidKernel, "k.cu": cuidKernel, "src/k.hip": cuidKernel, "pre.h": "#define PRE 1\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// command returns the command run in dir.
func command(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	return cmd
}

// cuidFromHashHashHash returns the one -cuid= value in clang's -### output.
func cuidFromHashHashHash(t *testing.T, clang, dir string, args []string) string {
	t.Helper()
	out, err := command(dir, clang, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	seen := map[string]bool{}
	for _, m := range cuidArgRE.FindAllSubmatch(out, -1) {
		seen[string(m[1])] = true
	}
	if len(seen) != 1 {
		t.Fatalf("clang %s printed %d distinct -cuid= values, want 1:\n%s", strings.Join(args, " "), len(seen), out)
	}
	for v := range seen {
		return v
	}
	return ""
}

// TestCUIDRendering checks, without clang, how each kind of option is
// rendered for the hash, which arguments make clangCUID give up, and the
// hash itself against values clang 22.1.8 printed.
func TestCUIDRendering(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // nil: not sure
	}{
		{"flags", []string{"-c", "-nogpuinc", "-fgpu-rdc", "-###", "k.hip"}, []string{"-c", "-nogpuinc", "-fgpu-rdc", "-###"}},
		{"joined", []string{"-std=c++17", "-O2", "-Wno-unused", "-c", "k.hip"}, []string{"-std=c++17", "-O2", "-Wno-unused", "-c"}},
		{"joined-or-separate typed joined", []string{"-DFOO=1", "-Iinc", "-ok.o", "-xhip", "-c", "k.hip"}, []string{"-D FOO=1", "-I inc", "-o k.o", "-x hip", "-c"}},
		{"joined-or-separate typed separate", []string{"-D", "FOO=1", "-I", "inc", "-o", "k.o", "-x", "hip", "-c", "k.hip"}, []string{"-D FOO=1", "-I inc", "-o k.o", "-x hip", "-c"}},
		{"separate", []string{"-Xclang", "-fno-autolink", "-include", "pre.h", "-c", "k.hip"}, []string{"-Xclang -fno-autolink", "-include pre.h", "-c"}},
		{"separate value looks like an option", []string{"-o", "-c", "k.hip"}, []string{"-o -c", "-dumpdir -c-"}},
		{"comma-joined offload archs sorted and deduplicated", []string{"--offload-arch=gfx90a,gfx906", "--offload-arch=gfx906", "-c", "k.hip"}, []string{"-c", "-Xarch_amdgcn --offload-arch=gfx906", "-Xarch_amdgcn --offload-arch=gfx90a"}},
		{"alias", []string{"--cuda-gpu-arch=sm_80", "-c", "k.cu"}, []string{"-c", "-Xarch_nvptx64 --offload-arch=sm_80"}},
		{"link appends dumpdir", []string{"k.hip", "-o", "out/k"}, []string{"-o out/k", "-dumpdir out/k-"}},
		{"link without -o", []string{"k.hip"}, []string{"-dumpdir a-"}},
		{"I- is its own flag", []string{"-c", "-I-", "k.hip"}, []string{"-c", "-I-"}},
		{"longer option than -o", []string{"-c", "-object-file-name=x", "k.hip"}, []string{"-c", "-object-file-name=x"}},
		{"-- makes inputs", []string{"-c", "--", "k.hip", "-x"}, []string{"-c"}},
		{"flag alias with values", []string{"-c", "-save-temps", "k.hip"}, []string{"-c", "-save-temps"}},
		{"render joined", []string{"-L", "lib", "-l", "m", "k.hip"}, []string{"-Llib", "-lm", "-dumpdir a-"}},
		{"unknown option", []string{"-c", "-fno-such-option", "k.hip"}, nil},
		{"missing value", []string{"-c", "k.hip", "-o"}, nil},
		{"native arch", []string{"-c", "--offload-arch=native", "k.hip"}, nil},
		{"alias list", []string{"-c", "--cuda-gpu-arch=gfx906,gfx90a", "k.hip"}, nil},
		{"response file", []string{"-c", "@args", "k.hip"}, nil},
		{"driver mode cl", []string{"--driver-mode=cl", "-c", "k.hip"}, nil},
	}
	for _, tt := range tests {
		parsed, err := options.ClangDriver().Parse(tt.args)
		cl, ok := readCUIDArgs(parsed, true)
		ok = ok && err == nil
		var got []string
		if ok {
			got = cl.hashed()
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: hashed args of %q = %q, want %q", tt.name, tt.args, got, tt.want)
		}
		if !ok && clangCUID("k.hip", tt.args) != "" {
			t.Errorf("%s: clangCUID(%q) != \"\"", tt.name, tt.args)
		}
	}

	// Values clang 22.1.8 printed for these command lines.
	args := []string{"-x", "hip", "--offload-arch=gfx906,gfx90a", "-nogpuinc", "-nogpulib", "-c", "k.hip", "-o", "k.o"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{args, "89fce06927d8dffe"},
		{append(slices.Clone(args), "-###"), "d083ef29b2c0b7c1"},
	} {
		if got := clangCUID("k.hip", c.args); got != c.want {
			t.Errorf("clangCUID(k.hip, %q) = %q, want %q", c.args, got, c.want)
		}
	}
	if got, want := cuidSymbol("89fce06927d8dffe"), "85811bd273aa7b9c"; got != want {
		t.Errorf("cuidSymbol = %q, want %q", got, want)
	}

	// What clangCUID gives back.
	for _, c := range []struct {
		input string
		args  []string
		want  string
	}{
		{"k.hip", []string{"-cuid=abc", "-c", "k.hip"}, "abc"},
		{"k.hip", []string{"-cuid=abc", "-fuse-cuid=none", "-c", "k.hip"}, "abc"},
		{"k.hip", []string{"-fuse-cuid=none", "-c", "k.hip"}, ""},
		{"k.hip", []string{"-fuse-cuid=random", "-c", "k.hip"}, ""},
		{"other.hip", []string{"-c", "k.hip"}, ""},
		{"./k.hip", []string{"-c", "k.hip"}, ""},
	} {
		if got := clangCUID(c.input, c.args); got != c.want {
			t.Errorf("clangCUID(%q, %q) = %q, want %q", c.input, c.args, got, c.want)
		}
	}
}

// TestClangCUIDConfigFile checks the CUID of command lines with clang
// configuration files, whose arguments clang hashes first, against the
// -cuid= clang's -### prints; and that a file offcc cannot read as clang
// does (<CFGDIR>, @files) gives no ID.
func TestClangCUIDConfigFile(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := cuidWorkDir(t)
	cfg := filepath.Join(dir, "hip.cfg")
	if err := os.WriteFile(cfg, []byte("# HIP defaults\n-O2 -DCFG=1\n  # indented comment\n-Wall '-DQ=a b'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	line := []string{"--config=" + cfg, "-x", "hip", "--offload-arch=gfx906", "-nogpuinc", "-nogpulib", "-c", "k.hip", "-o", "k.o", "-###"}
	for _, name := range []string{"offcc", "offcc++"} {
		args := line
		ref := clang
		if name == "offcc++" {
			ref = clang + "++"
		}
		want := cuidFromHashHashHash(t, ref, dir, args)
		opts, err := Parse(args)
		if err != nil {
			t.Fatal(err)
		}
		inv := &Invocation{Argv0: name}
		cuid := inv.cuidOf(opts, []string{"Configuration file: " + cfg})
		if cuid == nil {
			t.Fatalf("%s: no CUID for a configuration file of plain options", name)
		}
		if got, _ := cuid("k.hip"); got != want {
			t.Errorf("%s: CUID %q, clang -### printed %q", name, got, want)
		}
	}
	for _, text := range []string{"-I<CFGDIR>/inc\n", "@more.rsp\n", "-O2 \\\n-g\n"} {
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		opts, _ := Parse(line)
		if (&Invocation{Argv0: "offcc"}).cuidOf(opts, []string{"Configuration file: " + cfg}) != nil {
			t.Errorf("configuration file %q: a CUID, want none", text)
		}
	}
}
