package spirv_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/spirv"
)

// kernelSource is a SYCL translation unit for plain clang (no SYCL
// headers): kernel KA calls helper, which another file defines.
const kernelSource = `
template <typename KernelName, typename KernelType>
[[clang::sycl_kernel_entry_point(KernelName)]] void kernel_single_task(KernelType kernelFunc) { kernelFunc(); }
[[clang::sycl_external]] int helper(int);
struct KA;
struct KC;
void run(int *p) {
  kernel_single_task<KA>([=]() { p[0] = helper(p[1]); });
  kernel_single_task<KC>([=]() { p[2] = 7; });
}
`

// helperSource defines helper (an export) and kernel KB.
const helperSource = `
template <typename KernelName, typename KernelType>
[[clang::sycl_kernel_entry_point(KernelName)]] void kernel_single_task(KernelType kernelFunc) { kernelFunc(); }
[[clang::sycl_external]] int helper(int x) { return x * 2; }
struct KB;
void run2(int *p) { kernel_single_task<KB>([=]() { p[0] = helper(p[1]); }); }
`

// compileSPIRV compiles a SYCL source to a SPIR-V module with LLVM 22's
// clang, skipping the test when it is absent.
func compileSPIRV(t *testing.T, name, src string) []byte {
	t.Helper()
	b, err := llvmtest.SYCLToSPIRV(llvmtest.Clang(t), t.TempDir(), name, "spirv64-unknown-unknown", src)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// spirvTool finds a SPIRV-Tools program in PATH (llvmtest.SPIRVTool).
func spirvTool(t *testing.T, name string) string { t.Helper(); return llvmtest.SPIRVTool(t, name) }

// disassembled is what the test reads back from spirv-dis's text.
type disassembled struct {
	version, generator, bound string
	entries                   []string // "Kernel _ZTS2KA"
	linkage                   []string // "_Z6helperi Import"
}

var (
	reEntry   = regexp.MustCompile(`^\s*OpEntryPoint (\w+) %\S+ "((?:[^"\\]|\\.)*)"`)
	reLinkage = regexp.MustCompile(`^\s*OpDecorate %\S+ LinkageAttributes "((?:[^"\\]|\\.)*)" (\w+)$`)
)

func disassemble(t *testing.T, spv []byte) disassembled {
	t.Helper()
	dis := spirvTool(t, "spirv-dis")
	f := filepath.Join(t.TempDir(), "m.spv")
	if err := os.WriteFile(f, spv, 0o666); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(dis, f).Output()
	if err != nil {
		t.Fatalf("spirv-dis: %v", err)
	}
	var d disassembled
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "; Version: "); ok {
			d.version = v
		} else if v, ok := strings.CutPrefix(line, "; Generator: "); ok {
			d.generator = v
		} else if v, ok := strings.CutPrefix(line, "; Bound: "); ok {
			d.bound = v
		} else if m := reEntry.FindStringSubmatch(line); m != nil {
			d.entries = append(d.entries, m[1]+" "+m[2])
		} else if m := reLinkage.FindStringSubmatch(line); m != nil {
			d.linkage = append(d.linkage, m[1]+" "+m[2])
		}
	}
	return d
}

func checkAgainstDis(t *testing.T, spv []byte, m *spirv.Module) {
	t.Helper()
	d := disassemble(t, spv)
	if got := strconv.Itoa(m.MajorVersion()) + "." + strconv.Itoa(m.MinorVersion()); got != d.version {
		t.Errorf("version %s, spirv-dis says %s", got, d.version)
	}
	if got := strconv.FormatUint(uint64(m.Bound), 10); got != d.bound {
		t.Errorf("bound %s, spirv-dis says %s", got, d.bound)
	}
	if want := "; " + strconv.Itoa(int(m.Generator&0xffff)); !strings.HasSuffix(d.generator, want) ||
		!strings.Contains(d.generator, strconv.Itoa(int(m.Generator>>16))) {
		t.Errorf("generator %#x, spirv-dis says %s", m.Generator, d.generator)
	}
	var entries, linkage []string
	for _, e := range m.EntryPoints {
		entries = append(entries, e.ExecutionModel.String()+" "+e.Name)
	}
	for _, l := range m.Linkage {
		linkage = append(linkage, l.Name+" "+l.Type.String())
	}
	if !reflect.DeepEqual(entries, d.entries) {
		t.Errorf("entry points %q, spirv-dis says %q", entries, d.entries)
	}
	if !reflect.DeepEqual(linkage, d.linkage) {
		t.Errorf("linkage %q, spirv-dis says %q", linkage, d.linkage)
	}
}

func TestParseClangModules(t *testing.T) {
	for _, tc := range []struct {
		name, src                 string
		kernels, exports, imports []string
	}{
		{"kernels", kernelSource, []string{"_ZTS2KA", "_ZTS2KC"}, nil, []string{"_Z6helperi"}},
		{"helper", helperSource, []string{"_ZTS2KB"}, []string{"_Z6helperi"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spv := compileSPIRV(t, tc.name, tc.src)
			m, err := spirv.Parse(spv)
			if err != nil {
				t.Fatal(err)
			}
			if m.BigEndian {
				t.Error("clang's module read as big-endian")
			}
			if got := m.Kernels(); !reflect.DeepEqual(got, tc.kernels) {
				t.Errorf("Kernels() = %q, want %q", got, tc.kernels)
			}
			if got := m.Exports(); !reflect.DeepEqual(got, tc.exports) {
				t.Errorf("Exports() = %q, want %q", got, tc.exports)
			}
			if got := m.Imports(); !reflect.DeepEqual(got, tc.imports) {
				t.Errorf("Imports() = %q, want %q", got, tc.imports)
			}
			for _, e := range m.EntryPoints {
				if e.Function == 0 || e.Function >= m.Bound {
					t.Errorf("entry point %s: function id %d, bound %d", e.Name, e.Function, m.Bound)
				}
			}
			checkAgainstDis(t, spv, m)

			// The same module stored big-endian reads the same.
			be, err := spirv.Parse(swapWords(spv))
			if err != nil {
				t.Fatalf("big-endian: %v", err)
			}
			if !be.BigEndian {
				t.Error("swapped module not read as big-endian")
			}
			be.BigEndian = false
			if !reflect.DeepEqual(be, m) {
				t.Errorf("big-endian module reads as %+v, little-endian as %+v", be, m)
			}
		})
	}
}

// swapWords returns b with the bytes of each 32-bit word reversed.
func swapWords(b []byte) []byte {
	out := make([]byte, len(b))
	for i := 0; i+4 <= len(b); i += 4 {
		binary.BigEndian.PutUint32(out[i:], binary.LittleEndian.Uint32(b[i:]))
	}
	return out
}

// builder assembles small modules word by word.
type builder struct{ w []uint32 }

func newModule(bound uint32) *builder {
	return &builder{w: []uint32{spirv.Magic, 0x00010400, 0x002b0016, bound, 0}}
}

// str packs s as a SPIR-V literal string.
func str(s string) []uint32 {
	b := append([]byte(s), 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

func (b *builder) op(op uint32, operands ...[]uint32) *builder {
	var ws []uint32
	for _, o := range operands {
		ws = append(ws, o...)
	}
	b.w = append(b.w, uint32(len(ws)+1)<<16|op)
	b.w = append(b.w, ws...)
	return b
}

func (b *builder) raw(w ...uint32) *builder { b.w = append(b.w, w...); return b }

func (b *builder) bytes() []byte {
	out := make([]byte, 4*len(b.w))
	for i, w := range b.w {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

func words(w ...uint32) []uint32 { return w }

// sample is a module with two kernels, a compute shader and the three
// linkage types, preceded and followed by other instructions.
func sample() *builder {
	return newModule(20).
		op(17, words(6)). // OpCapability Kernel
		op(spirv.OpEntryPoint, words(6, 3), str("k1"), words(7, 8)).
		op(spirv.OpEntryPoint, words(5, 4), str("cs")).
		op(spirv.OpEntryPoint, words(6, 5), str("k1234567")).
		op(spirv.OpDecorate, words(9, 44, 8)). // Alignment 8
		op(spirv.OpDecorate, words(10, 41), str("imp"), words(1)).
		op(spirv.OpDecorate, words(11, 41), str("exp"), words(0)).
		op(spirv.OpDecorate, words(12, 41), str("odr"), words(2)).
		op(spirv.OpDecorate, words(13, 41), str("imp"), words(1)).
		op(spirv.OpDecorate, words(14, 41), str(""), words(7)).
		op(56, words(1, 2, 0, 3)) // OpFunction
}

func TestParseSample(t *testing.T) {
	m, err := spirv.Parse(sample().bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := &spirv.Module{
		Version: 0x00010400, Generator: 0x002b0016, Bound: 20,
		EntryPoints: []spirv.EntryPoint{
			{spirv.ExecutionModelKernel, 3, "k1"},
			{spirv.ExecutionModelGLCompute, 4, "cs"},
			{spirv.ExecutionModelKernel, 5, "k1234567"},
		},
		Linkage: []spirv.Linkage{
			{10, "imp", spirv.LinkageImport},
			{11, "exp", spirv.LinkageExport},
			{12, "odr", spirv.LinkageLinkOnceODR},
			{13, "imp", spirv.LinkageImport},
			{14, "", spirv.LinkageType(7)},
		},
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("Parse = %+v\nwant %+v", m, want)
	}
	if got := m.Kernels(); !reflect.DeepEqual(got, []string{"k1", "k1234567"}) {
		t.Errorf("Kernels() = %q", got)
	}
	if got := m.Exports(); !reflect.DeepEqual(got, []string{"exp", "odr"}) {
		t.Errorf("Exports() = %q", got)
	}
	if got := m.Imports(); !reflect.DeepEqual(got, []string{"imp"}) {
		t.Errorf("Imports() = %q", got)
	}
	if m.MajorVersion() != 1 || m.MinorVersion() != 4 {
		t.Errorf("version %d.%d, want 1.4", m.MajorVersion(), m.MinorVersion())
	}
	if s := spirv.LinkageType(7).String(); s != "LinkageType(7)" {
		t.Errorf("LinkageType(7).String() = %q", s)
	}
	if s := spirv.ExecutionModel(99).String(); s != "ExecutionModel(99)" {
		t.Errorf("ExecutionModel(99).String() = %q", s)
	}
}

func TestParseHeaderOnly(t *testing.T) {
	m, err := spirv.Parse(newModule(1).bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.EntryPoints) != 0 || len(m.Linkage) != 0 || m.Kernels() != nil || m.Exports() != nil || m.Imports() != nil {
		t.Errorf("empty module reads as %+v", m)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "spirv: input is 0 bytes, shorter than the 20-byte header"},
		{"odd length", make([]byte, 22), "spirv: input is 22 bytes, not a whole number of 4-byte words"},
		{"short", newModule(1).bytes()[:16], "spirv: input is 16 bytes, shorter than the 20-byte header"},
		{"magic", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
			"spirv: not a SPIR-V module: first word is 0x464c457f, want magic number 0x07230203"},
		{"word count 0", newModule(9).op(17, words(6)).raw(0x00000011).bytes(),
			"spirv: instruction at word 7 (opcode 17) has word count 0"},
		{"past end", newModule(9).raw(0x00040047, 1, 2).bytes(),
			"spirv: instruction at word 5 (opcode 71) has word count 4, runs past the end of the module (3 words left)"},
		{"entry point short", newModule(9).op(spirv.OpEntryPoint, words(6, 3)).bytes(),
			"spirv: instruction at word 5 (OpEntryPoint) has word count 3, too short for execution model, function and name"},
		{"entry point id 0", newModule(9).op(spirv.OpEntryPoint, words(6, 0), str("k")).bytes(),
			"spirv: instruction at word 5 (OpEntryPoint) function id 0 is out of range (bound 9)"},
		{"entry point id bound", newModule(9).op(spirv.OpEntryPoint, words(6, 9), str("k")).bytes(),
			"spirv: instruction at word 5 (OpEntryPoint) function id 9 is out of range (bound 9)"},
		{"name unterminated", newModule(9).op(spirv.OpEntryPoint, words(6, 3), words(0x64636261)).bytes(),
			"spirv: instruction at word 5 (OpEntryPoint) name is not nul-terminated within the instruction"},
		{"name not utf-8", newModule(9).op(spirv.OpEntryPoint, words(6, 3), words(0x0000ff61)).bytes(),
			`spirv: instruction at word 5 (OpEntryPoint) name "a\xff" is not valid UTF-8`},
		{"decorate short", newModule(9).op(spirv.OpDecorate, words(3)).bytes(),
			"spirv: instruction at word 5 (OpDecorate) has word count 2, too short for target and decoration"},
		{"linkage target", newModule(9).op(spirv.OpDecorate, words(0, 41), str("f"), words(0)).bytes(),
			"spirv: instruction at word 5 (OpDecorate LinkageAttributes) target id 0 is out of range (bound 9)"},
		{"linkage no name", newModule(9).op(spirv.OpDecorate, words(3, 41)).bytes(),
			"spirv: instruction at word 5 (OpDecorate LinkageAttributes) linkage name is not nul-terminated within the instruction"},
		{"linkage no type", newModule(9).op(spirv.OpDecorate, words(3, 41), str("fun")).bytes(),
			`spirv: instruction at word 5 (OpDecorate LinkageAttributes) has 0 words after the linkage name "fun", want 1 (the linkage type)`},
		{"linkage extra", newModule(9).op(spirv.OpDecorate, words(3, 41), str("fun"), words(0, 0)).bytes(),
			`spirv: instruction at word 5 (OpDecorate LinkageAttributes) has 2 words after the linkage name "fun", want 1 (the linkage type)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := spirv.Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", m)
			}
			var se *spirv.Error
			if !errors.As(err, &se) {
				t.Errorf("error of type %T", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
			// The same module stored big-endian fails the same way.
			if len(tc.in) >= 20 && len(tc.in)%4 == 0 && bytes.Equal(tc.in[:4], []byte{3, 2, 0x23, 7}) {
				if _, err2 := spirv.Parse(swapWords(tc.in)); err2 == nil || err2.Error() != tc.want {
					t.Errorf("big-endian: error %v, want %s", err2, tc.want)
				}
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample().bytes())
	f.Add(swapWords(sample().bytes()))
	f.Add(newModule(1).bytes())
	f.Add(newModule(9).raw(0x00040047, 1, 2).bytes())
	f.Add(newModule(9).op(spirv.OpDecorate, words(3, 41), str("fun"), words(0)).bytes())
	f.Add(newModule(9).op(spirv.OpEntryPoint, words(6, 3), words(0x0000ff61)).bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := spirv.Parse(in)
		if err != nil {
			var se *spirv.Error
			if !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "spirv: ") || strings.Contains(msg, "\n") {
				t.Fatalf("error is not one line starting with spirv: %q", msg)
			}
			return
		}
		// Every decoded instruction needs at least as many words as its
		// name has bytes / 4, so the results are bounded by the input.
		if 4*(len(m.EntryPoints)+len(m.Linkage)) > len(in) {
			t.Fatalf("%d entry points and %d linkage names from %d bytes", len(m.EntryPoints), len(m.Linkage), len(in))
		}
		for _, e := range m.EntryPoints {
			if e.Function == 0 || e.Function >= m.Bound || len(e.Name) > len(in) {
				t.Fatalf("bad entry point %+v (bound %d)", e, m.Bound)
			}
		}
		for _, l := range m.Linkage {
			if l.Target == 0 || l.Target >= m.Bound || len(l.Name) > len(in) {
				t.Fatalf("bad linkage %+v (bound %d)", l, m.Bound)
			}
		}
		// The other byte order reads the same.
		other, err := spirv.Parse(swapWords(in))
		if err != nil {
			t.Fatalf("module parses, byte-swapped one does not: %v", err)
		}
		if other.BigEndian == m.BigEndian {
			t.Fatalf("byte-swapped module has the same byte order")
		}
		other.BigEndian = m.BigEndian
		if !reflect.DeepEqual(other, m) {
			t.Fatalf("byte-swapped module reads as %+v, want %+v", other, m)
		}
	})
}
