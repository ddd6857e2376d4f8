package objfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// symtabSrc has a symbol of every kind the linker wrapper tells apart.
const symtabSrc = `
int global_fn(int x) { return x + 1; }
__attribute__((weak)) int weak_fn(void) { return 2; }
__attribute__((visibility("hidden"))) int hidden_fn(void) { return 3; }
extern int undef_fn(int);
static int static_fn(int x) { return undef_fn(x) * 2; }
int common_var;
int data_var = 5;
__attribute__((weak)) extern int weak_undef(void);
int use(int x) { return static_fn(x) + (weak_undef ? weak_undef() : 0); }
`

// wantFlags are the flags symtabSrc's symbols must have, by name.
var wantFlags = map[string]Symbol{
	"global_fn":  {Global: true},
	"weak_fn":    {Global: true, Weak: true},
	"hidden_fn":  {Global: true, Hidden: true},
	"undef_fn":   {Global: true, Undefined: true},
	"static_fn":  {},
	"common_var": {Global: true},
	"data_var":   {Global: true},
	"weak_undef": {Global: true, Weak: true, Undefined: true},
	"use":        {Global: true},
}

// checkFlags checks the symbols named in want (with prefix, e.g. "_" on
// Darwin) against want, ignoring Name and MayOmit.
func checkFlags(t *testing.T, syms []Symbol, prefix string, want map[string]Symbol) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range syms {
		w, ok := want[strings.TrimPrefix(s.Name, prefix)]
		if !ok || s.FormatSpecific || !strings.HasPrefix(s.Name, prefix) {
			continue
		}
		seen[s.Name] = true
		w.Name, w.MayOmit = s.Name, s.MayOmit
		if s != w {
			t.Errorf("%s: got %+v, want %+v", s.Name, s, w)
		}
	}
	for n := range want {
		if !seen[prefix+n] {
			t.Errorf("symbol %s missing", prefix+n)
		}
	}
}

// nmLine renders what llvm-nm tells of a symbol: name and the flags its
// letter encodes.
func nmLine(name string, undefined, weak, global bool) string {
	return fmt.Sprintf("%s undefined=%v weak=%v global=%v", name, undefined, weak, global)
}

// nmLines runs llvm-nm on path and returns its symbols as nmLine renders
// them, sorted. llvm-nm leaves out format-specific symbols.
func nmLines(t *testing.T, path string) []string {
	t.Helper()
	out := run(t, "", llvmtest.Tool(t, "llvm-nm"), path)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || len(f[len(f)-2]) != 1 {
			t.Fatalf("unexpected llvm-nm line %q", l)
		}
		c, name := f[len(f)-2][0], f[len(f)-1]
		undefined := c == 'U' || c == 'w' || c == 'v'
		weak := strings.IndexByte("wWvV", c) >= 0
		global := c >= 'A' && c <= 'Z' || c == 'w' || c == 'v' || c == 'u'
		lines = append(lines, nmLine(name, undefined, weak, global))
	}
	slices.Sort(lines)
	return lines
}

// ourLines renders the symbols llvm-nm shows (those not format-specific)
// as nmLine does, sorted.
func ourLines(syms []Symbol) []string {
	var lines []string
	for _, s := range syms {
		if !s.FormatSpecific {
			lines = append(lines, nmLine(s.Name, s.Undefined, s.Weak, s.Global))
		}
	}
	slices.Sort(lines)
	return lines
}

// imageSymbols reads path with ImageSymbols, failing the test unless it
// succeeds.
func imageSymbols(t *testing.T, path string) []Symbol {
	t.Helper()
	syms, ok, err := ImageSymbols(readFile(t, path))
	if err != nil || !ok {
		t.Fatalf("ImageSymbols(%s) = ok %v, err %v", filepath.Base(path), ok, err)
	}
	return syms
}

// compareNM checks ImageSymbols of path against llvm-nm's listing.
func compareNM(t *testing.T, path string) []Symbol {
	t.Helper()
	syms := imageSymbols(t, path)
	if got, want := ourLines(syms), nmLines(t, path); !slices.Equal(got, want) {
		t.Errorf("%s: ImageSymbols\n  %s\nllvm-nm\n  %s", filepath.Base(path), strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	return syms
}

// TestImageSymbolsELF compiles symtabSrc for several targets (ELF32 and
// ELF64, both byte orders, machines with mapping symbols) and compares
// what ImageSymbols reads with llvm-nm.
func TestImageSymbolsELF(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.c"), []byte(symtabSrc))
	for _, target := range []string{
		"x86_64-pc-linux-gnu", "i686-pc-linux-gnu", "powerpc64-unknown-linux-gnu", "mips-unknown-linux-gnu",
		"aarch64-unknown-linux-gnu", "armv7-unknown-linux-gnueabihf", "riscv64-unknown-linux-gnu",
	} {
		t.Run(target, func(t *testing.T) {
			obj := filepath.Join(dir, target+".o")
			run(t, dir, clang, "--target="+target, "-fcommon", "-c", "s.c", "-o", obj)
			syms := compareNM(t, obj)
			checkFlags(t, syms, "", wantFlags)
			var file, section, mapping bool
			for _, s := range syms {
				if s.Name == "s.c" {
					file = s.FormatSpecific && !s.Global
				}
				if s.FormatSpecific && !s.Global && s.Name != "s.c" {
					section = true
				}
				if strings.HasPrefix(s.Name, "$") {
					mapping = true
					if !s.FormatSpecific {
						t.Errorf("mapping symbol %+v is not format-specific", s)
					}
				}
			}
			if hasMapping := !strings.HasPrefix(target, "x86") && !strings.HasPrefix(target, "i686") &&
				!strings.HasPrefix(target, "powerpc") && !strings.HasPrefix(target, "mips"); mapping != hasMapping {
				t.Errorf("mapping symbols found: %v, want %v", mapping, hasMapping)
			}
			if !file || !section {
				t.Errorf("no format-specific file (%v) or section (%v) symbol in %+v", file, section, syms)
			}
		})
	}
}

// TestImageSymbolsBitcode reads the IR symbol tables of symtabSrc compiled
// to bitcode (with -flto and with -emit-llvm, raw and, for Darwin, in the
// wrapper) and compares them with llvm-nm.
func TestImageSymbolsBitcode(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.c"), []byte(symtabSrc))
	for _, c := range []struct {
		name, prefix string
		args         []string
	}{
		{"flto", "", []string{"-flto"}},
		{"emit-llvm", "", []string{"-emit-llvm"}},
		{"thin", "", []string{"-flto=thin"}},
		{"darwin-wrapper", "_", []string{"--target=x86_64-apple-darwin", "-flto"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bc := filepath.Join(dir, c.name+".bc")
			run(t, dir, clang, append(c.args, "-fcommon", "-c", "s.c", "-o", bc)...)
			data := readFile(t, bc)
			if wrapped := bytes.HasPrefix(data, []byte(bcWrapperMagic)); wrapped != (c.prefix == "_") {
				t.Fatalf("wrapper header: %v", wrapped)
			}
			if out := run(t, "", llvmtest.Tool(t, "llvm-bcanalyzer"), bc); !strings.Contains(out, "SYMTAB_BLOCK") {
				t.Fatalf("no SYMTAB_BLOCK in %s:\n%s", c.name, out)
			}
			syms := compareNM(t, bc)
			checkFlags(t, syms, c.prefix, wantFlags)
		})
	}
}

// TestImageSymbolsBitcodeModules: a ThinLTO module split for whole-program
// devirtualization holds two modules and one symbol table; ImageSymbols
// returns the symbols of both. LLVM intrinsics are format-specific, and
// a linkonce_odr unnamed_addr function may be omitted (at -O2, not -O0).
func TestImageSymbolsBitcodeModules(t *testing.T) {
	clangxx := llvmtest.Tool(t, "clang++")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "v.cpp"), []byte(`
struct A { virtual int f(); };
int A::f() { return 1; }
int call(A *a) { return a->f(); }
inline __attribute__((noinline)) int inl(int x) { return x * 3; }
int useinl(int x) { return inl(x); }
`))
	run(t, dir, clangxx, "-flto=thin", "-fsplit-lto-unit", "-fwhole-program-vtables", "-c", "v.cpp", "-o", "v.bc")
	out := run(t, "", llvmtest.Tool(t, "llvm-bcanalyzer"), filepath.Join(dir, "v.bc"))
	if !strings.Contains(out, "MODULE_BLOCK") || !strings.Contains(out, "Num Instances: 2") {
		t.Fatalf("v.bc does not hold two modules:\n%s", out)
	}
	syms := compareNM(t, filepath.Join(dir, "v.bc"))
	intrinsic := false
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "llvm.") {
			intrinsic = true
			if !s.FormatSpecific {
				t.Errorf("intrinsic %+v is not format-specific", s)
			}
		}
	}
	if !intrinsic {
		t.Errorf("no llvm.* intrinsic among %+v", syms)
	}
	for _, opt := range []string{"-O0", "-O2"} {
		bc := filepath.Join(dir, "v"+opt+".bc")
		run(t, dir, clangxx, opt, "-flto", "-c", "v.cpp", "-o", bc)
		for _, s := range compareNM(t, bc) {
			if s.Name == "_Z3inli" && s.MayOmit != (opt == "-O2") {
				t.Errorf("%s: %+v: MayOmit wrong", opt, s)
			}
			if s.Name == "_Z6useinli" && s.MayOmit {
				t.Errorf("%s: %+v: MayOmit set", opt, s)
			}
		}
	}
}

// cudaSrc has a __device__ function defined and one referenced.
const cudaSrc = `
extern __device__ int ext_dev(int);
__device__ int def_dev(int x) { return ext_dev(x) + 1; }
__global__ void kern(int *p) { *p = def_dev(*p); }
`

var cudaWant = map[string]Symbol{
	"_Z7def_devi": {Global: true},
	"_Z7ext_devi": {Global: true, Undefined: true},
	"_Z4kernPi":   {Global: true},
}

// TestImageSymbolsCUDA reads CUDA device images: bitcode (-emit-llvm and
// -foffload-lto, no CUDA toolkit needed) and, where ptxas is installed, a
// cubin (an EM_CUDA ELF relocatable object).
func TestImageSymbolsCUDA(t *testing.T) {
	clangxx := llvmtest.Tool(t, "clang++")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "k.cu"), []byte(cudaSrc))
	inc, err := filepath.Abs("../testdata/cuda")
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"-x", "cuda", "--offload-arch=sm_80", "--cuda-device-only", "-fgpu-rdc"}
	noToolkit := append(slices.Clone(common), "-nocudainc", "-nocudalib", "--cuda-feature=+ptx80", "-I"+inc, "-include", "cuda_min.h")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"emit-llvm", []string{"-emit-llvm"}},
		{"offload-lto", []string{"-foffload-lto"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bc := filepath.Join(dir, c.name+".bc")
			run(t, dir, clangxx, append(append(slices.Clone(noToolkit), c.args...), "-c", "k.cu", "-o", bc)...)
			if !bytes.HasPrefix(readFile(t, bc), []byte(bcMagic)) {
				t.Fatal("not bitcode")
			}
			checkFlags(t, compareNM(t, bc), "", cudaWant)
		})
	}
	t.Run("cubin", func(t *testing.T) {
		if _, err := exec.LookPath("ptxas"); err != nil {
			t.Skip("ptxas (CUDA toolkit) is not installed")
		}
		obj := filepath.Join(dir, "k.o")
		run(t, dir, clangxx, append(slices.Clone(common), "-c", "k.cu", "-o", obj)...)
		data := readFile(t, obj)
		if !isELFRelocatable(data) || le.Uint16(data[18:]) != 190 { // EM_CUDA
			t.Fatalf("not an EM_CUDA relocatable object: % x", data[:20])
		}
		checkFlags(t, compareNM(t, obj), "", cudaWant)
	})
}

// TestImageSymbolsNoIRSymtab: bitcode joined with llvm-cat -b (two modules,
// no symbol table) and bitcode whose table another producer wrote give
// errors wrapping ErrNoIRSymbolTable.
func TestImageSymbolsNoIRSymtab(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.c"), []byte("int a(void) { return 1; }\n"))
	writeFile(t, filepath.Join(dir, "b.c"), []byte("int b(void) { return 2; }\n"))
	run(t, dir, clang, "-flto", "-c", "a.c", "-o", "a.bc")
	run(t, dir, clang, "-flto", "-c", "b.c", "-o", "b.bc")
	run(t, dir, llvmtest.Tool(t, "llvm-cat"), "-b", "a.bc", "b.bc", "-o", "ab.bc")
	cmd := exec.Command(clang, "-flto", "-c", "a.c", "-o", "p.bc")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LLVM_OVERRIDE_PRODUCER=other-producer")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	for _, n := range []string{"ab.bc", "p.bc"} {
		syms, ok, err := ImageSymbols(readFile(t, filepath.Join(dir, n)))
		if !ok || syms != nil || !errors.Is(err, ErrNoIRSymbolTable) {
			t.Errorf("%s: ImageSymbols = %v, %v, %v; want ErrNoIRSymbolTable", n, syms, ok, err)
		}
	}
}

// storedSymtabSeeds are testdata files made by clang 22 -O2 -c from
//
//	int def(void) { return 1; }
//	__attribute__((weak)) int wk(void) { return 2; }
//	__attribute__((visibility("hidden"))) int hid(void) { return 3; }
//	extern int ext(void);
//	int use(void) { return ext(); }
//
// with -flto (symtab.bc; symtab-wrapped.bc with
// --target=x86_64-apple-darwin) and for i686-linux-gnu and
// powerpc64-linux-gnu (symtab-elf32.o, symtab-ppc64be.o). The map gives
// each file's symbol name prefix.
var storedSymtabSeeds = map[string]string{
	"symtab.bc": "", "symtab-wrapped.bc": "_", "symtab-elf32.o": "", "symtab-ppc64be.o": "",
}

var storedWant = map[string]Symbol{
	"def": {Global: true},
	"wk":  {Global: true, Weak: true},
	"hid": {Global: true, Hidden: true},
	"ext": {Global: true, Undefined: true},
	"use": {Global: true},
}

// TestImageSymbolsStored reads the stored inputs (no LLVM needed).
func TestImageSymbolsStored(t *testing.T) {
	for n, prefix := range storedSymtabSeeds {
		syms := imageSymbols(t, filepath.Join("testdata", n))
		checkFlags(t, syms, prefix, storedWant)
		for _, s := range syms {
			if s.Global && !s.FormatSpecific && !strings.HasPrefix(s.Name, prefix) {
				t.Errorf("%s: unexpected symbol %+v", n, s)
			}
		}
	}
	// small.o is an x86-64 ELF relocatable object.
	if _, ok, err := ImageSymbols(readFile(t, filepath.Join("testdata", "small.o"))); !ok || err != nil {
		t.Errorf("small.o: ok %v, err %v", ok, err)
	}
}

// symtabBlob returns the SYMTAB blob of a raw bitcode file.
func symtabBlob(t *testing.T, bc []byte) []byte {
	t.Helper()
	r := &bitReader{b: bc, pos: 32}
	var top []abbrev
	for !r.atEnd() {
		kind, id, err := r.advance(2, &top)
		if err != nil || kind != entrySubBlock {
			t.Fatalf("walking bitcode: kind %d, err %v", kind, err)
		}
		if id != bcBlockSymtab {
			if err := r.skipBlock(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := r.readBlob()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Fatal("no SYMTAB block")
	return nil
}

// TestImageSymbolsMalformed: other data is not read; truncated, patched
// and garbled inputs give errors, never panics.
func TestImageSymbolsMalformed(t *testing.T) {
	small := readFile(t, filepath.Join("testdata", "small.o"))
	bc := readFile(t, filepath.Join("testdata", "symtab.bc"))
	patched := func(b []byte, off int, v ...byte) []byte {
		c := bytes.Clone(b)
		copy(c[off:], v)
		return c
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"PTX", []byte("//\n.version 7.8\n.target sm_80\n.address_size 64\n\n.visible .func (.param .b32 r) f()\n{\n\tret;\n}\n")},
		{"text", []byte("hello, world\n")},
		{"ELF magic only", []byte("\x7fELF")},
		{"short ELF", small[:17]},
		{"ET_EXEC", patched(small, 16, etExec, 0)},
		{"ET_DYN", patched(small, 16, etDyn, 0)},
		{"ET_CORE", patched(small, 16, 4, 0)},
		{"BC prefix", []byte("BC")},
		{"archive", readFile(t, filepath.Join("testdata", "lib.a"))},
	} {
		if syms, ok, err := ImageSymbols(c.data); ok || err != nil || syms != nil {
			t.Errorf("%s: ImageSymbols = %v, %v, %v; want nil, false, nil", c.name, syms, ok, err)
		}
	}

	blob := symtabBlob(t, bc)
	at := bytes.Index(bc, blob)
	if at < 0 || bytes.Index(bc[at+1:], blob) >= 0 {
		t.Fatal("cannot locate the SYMTAB blob")
	}
	put32 := func(b []byte, off int, v uint32) []byte {
		c := bytes.Clone(b)
		le.PutUint32(c[off:], v)
		return c
	}
	for _, c := range []struct {
		name    string
		data    []byte
		noTable bool // want ErrNoIRSymbolTable
	}{
		{"odd size", bc[:len(bc)-1], false},
		{"truncated", bc[:len(bc)/2], false},
		{"bad inner signature", patched(readFile(t, filepath.Join("testdata", "symtab-wrapped.bc")), 22, 0), false},
		{"wrapper past end", put32(readFile(t, filepath.Join("testdata", "symtab-wrapped.bc")), 12, 1<<20), false},
		{"wrapper too short", []byte(bcWrapperMagic + "\x00\x00\x00\x00\x00\x00\x00\x00"), false},
		{"ELF class", patched(small, 4, 3), false},
		{"ELF data", patched(small, 5, 0), false},
		{"ELF section table", put32(small, 40, 1<<30), false},
		{"version", put32(bc, at, 4), true},
		{"producer", put32(bc, at+4, 1<<30), true},
		{"module count", put32(bc, at+16, 2), true},
		{"modules range", put32(bc, at+12, 1<<30), false},
		{"symbols range", put32(bc, at+28, 1<<30), false},
		{"symbol count", put32(bc, at+32, 1<<30), false},
	} {
		syms, ok, err := ImageSymbols(c.data)
		if !ok || err == nil || syms != nil || errors.Is(err, ErrNoIRSymbolTable) != c.noTable || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: ImageSymbols = %v, %v, %v; want an error (ErrNoIRSymbolTable: %v)", c.name, syms, ok, err, c.noTable)
		}
	}

	// Every truncation past the magic numbers fails; every garbled byte
	// gives an error or symbols, never a panic.
	for n := range storedSymtabSeeds {
		data := readFile(t, filepath.Join("testdata", n))
		for l := 18; l < len(data); l++ {
			if syms, _, err := ImageSymbols(data[:l]); err == nil {
				t.Fatalf("%s truncated to %d bytes: no error, %d symbols", n, l, len(syms))
			}
		}
		for i := range data {
			for _, x := range []byte{0xff, 0x01, 0x80} {
				g := bytes.Clone(data)
				g[i] ^= x
				syms, _, err := ImageSymbols(g)
				if err != nil && syms != nil {
					t.Fatalf("%s byte %d ^ %#x: symbols with an error", n, i, x)
				}
			}
		}
	}
}
