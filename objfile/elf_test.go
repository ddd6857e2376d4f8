package objfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

func offloadSection(data []byte) NewSection {
	return NewSection{Name: ".llvm.offloading", Type: SHTLLVMOffloading, Flags: SHFExclude, Align: 8, Data: data}
}

func TestSectionsOfTypeMatchesObjcopy(t *testing.T) {
	objcopy := llvmtest.Tool(t, "llvm-objcopy")
	dir := t.TempDir()
	full, _ := offloadObjects(t, dir)
	run(t, dir, objcopy, "--dump-section=.llvm.offloading=dump.bin", full)
	want := readFile(t, filepath.Join(dir, "dump.bin"))

	obj := readFile(t, full)
	secs, err := SectionsOfType(obj, SHTLLVMOffloading)
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 1 {
		t.Fatalf("got %d SHT_LLVM_OFFLOADING sections, want 1", len(secs))
	}
	if !bytes.Equal(secs[0], want) {
		t.Errorf("section contents differ from llvm-objcopy --dump-section (%d vs %d bytes)", len(secs[0]), len(want))
	}
	if !IsELF(obj) || IsELF([]byte("!<arch>\n")) {
		t.Error("IsELF wrong")
	}
	// No such section: empty result, no error.
	secs, err = SectionsOfType(obj, 0x6fffff00)
	if err != nil || len(secs) != 0 {
		t.Errorf("SectionsOfType(unused type) = %d sections, %v", len(secs), err)
	}
}

// readelfSection returns the llvm-readelf -S line of the named section.
func readelfSection(t *testing.T, path, name string) string {
	t.Helper()
	out := run(t, "", llvmtest.Tool(t, "llvm-readelf"), "-S", "-W", path)
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(strings.TrimSpace(l[min(len(l), strings.Index(l, "]")+1):])); len(f) > 0 && f[0] == name {
			return l
		}
	}
	t.Fatalf("llvm-readelf -S %s: no section %s in\n%s", path, name, out)
	return ""
}

// objdumpOffloading returns llvm-objdump --offloading output without the
// line naming the file.
func objdumpOffloading(t *testing.T, path string) string {
	t.Helper()
	out := run(t, "", llvmtest.Tool(t, "llvm-objdump"), "--offloading", path)
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "file format") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// sectionLinesWithout returns llvm-readelf -S -W section lines other than the
// named section and the section header count/offset lines.
func readelfDump(t *testing.T, path string, args ...string) string {
	t.Helper()
	out := run(t, "", llvmtest.Tool(t, "llvm-readelf"), append(args, path)...)
	return strings.ReplaceAll(out, path, "FILE")
}

func TestAddSectionOffloading(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	full, host := offloadObjects(t, dir)
	fullObj, hostObj := readFile(t, full), readFile(t, host)
	secs, err := SectionsOfType(fullObj, SHTLLVMOffloading)
	if err != nil || len(secs) != 1 {
		t.Fatalf("SectionsOfType: %d sections, %v", len(secs), err)
	}
	image := secs[0]
	if s, _ := SectionsOfType(hostObj, SHTLLVMOffloading); len(s) != 0 {
		t.Fatal("host-only object already has an offloading section")
	}

	out, err := AddSection(hostObj, offloadSection(image))
	if err != nil {
		t.Fatal(err)
	}
	added := filepath.Join(dir, "added.o")
	writeFile(t, added, out)

	// Read back.
	got, err := SectionsOfType(out, SHTLLVMOffloading)
	if err != nil || len(got) != 1 || !bytes.Equal(got[0], image) {
		t.Fatalf("SectionsOfType after AddSection: %d sections, %v", len(got), err)
	}

	// llvm-readelf: type, flags, alignment as clang makes them.
	line := readelfSection(t, added, ".llvm.offloading")
	want := readelfSection(t, full, ".llvm.offloading")
	re := regexp.MustCompile(`\.llvm\.offloading\s+LLVM_OFFLOADING\s+0+\s+[0-9a-f]+\s+([0-9a-f]+)\s+00\s+E\s+0\s+0\s+8\s*$`)
	m1, m2 := re.FindStringSubmatch(line), re.FindStringSubmatch(want)
	if m1 == nil || m2 == nil || m1[1] != m2[1] {
		t.Errorf("llvm-readelf -S line\n got %q\nwant like %q", line, want)
	}

	// Everything else is unchanged: sections (other than offsets of the
	// moved string table), symbols and relocations.
	for _, args := range [][]string{{"-s", "-W"}, {"-r", "-W"}, {"-h"}} {
		a, b := readelfDump(t, host, args...), readelfDump(t, added, args...)
		if args[0] == "-h" {
			strip := regexp.MustCompile(`(?m)^\s*(Start of section headers|Number of section headers|Section header string table index):.*$`)
			a, b = strip.ReplaceAllString(a, ""), strip.ReplaceAllString(b, "")
		}
		if a != b {
			t.Errorf("llvm-readelf %v differs after AddSection:\n--- before\n%s\n--- after\n%s", args, a, b)
		}
	}
	before, after := readelfDump(t, host, "-S", "-W"), readelfDump(t, added, "-S", "-W")
	if n1, n2 := strings.Count(before, "\n  ["), strings.Count(after, "\n  ["); n2 != n1+1 {
		t.Errorf("section count %d -> %d, want +1", n1, n2)
	}
	if err := sameSectionContents(hostObj, out); err != nil {
		t.Error(err)
	}

	// llvm-objdump --offloading lists the same images as for clang's object.
	if a, b := objdumpOffloading(t, full), objdumpOffloading(t, added); a != b || !strings.Contains(a, "OFFLOADING IMAGE [0]") {
		t.Errorf("llvm-objdump --offloading:\n got %s\nwant %s", b, a)
	}

	// Plain links drop the SHF_EXCLUDE section: GNU ld (clang's default
	// here) and ld.lld.
	for _, ld := range []string{"bfd", "lld"} {
		exe := filepath.Join(dir, "plain-"+ld)
		run(t, dir, clang, "-fuse-ld="+ld, added, "-o", exe, "-fopenmp", "-L"+llvmtest.Lib, "-lomptarget")
		if s, err := SectionsOfType(readFile(t, exe), SHTLLVMOffloading); err != nil || len(s) != 0 {
			t.Errorf("%s link kept %d offloading sections (%v)", ld, len(s), err)
		}
	}
	// A partial link (ld -r) keeps it.
	if ld, err := os.Stat("/usr/bin/ld"); err == nil && !ld.IsDir() {
		run(t, dir, "/usr/bin/ld", "-r", added, "-o", filepath.Join(dir, "partial.o"))
	}

	// The offload link through clang-linker-wrapper builds the device image
	// from the embedded section, and the program runs.
	llvmtest.Tool(t, "clang-linker-wrapper")
	exe := filepath.Join(dir, "offload")
	run(t, dir, clang, "-fopenmp", "-fopenmp-targets="+offloadTriple, added, "-o", exe)
	if s, _ := SectionsOfType(readFile(t, exe), 1); len(s) == 0 {
		t.Error("linked executable has no PROGBITS sections")
	}
	if out, err := runErr(dir, exe); err != nil {
		t.Errorf("offload program failed: %v\n%s", err, out)
	}
}

// sameSectionContents checks that every section of before has the same
// header (except for the section name string table's offset and size, and
// section 0's extended-numbering fields) and contents in after.
func sameSectionContents(before, after []byte) error {
	f1, err := parseELF(before)
	if err != nil {
		return err
	}
	f2, err := parseELF(after)
	if err != nil {
		return err
	}
	if f2.shnum != f1.shnum+1 || f2.shstrndx != f1.shstrndx {
		return fmt.Errorf("shnum %d->%d shstrndx %d->%d", f1.shnum, f2.shnum, f1.shstrndx, f2.shstrndx)
	}
	for i := uint64(1); i < f1.shnum; i++ {
		h1, h2 := f1.shdr(i), f2.shdr(i)
		d1, err1 := f1.data(i)
		d2, err2 := f2.data(i)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("section %d: %v %v", i, err1, err2)
		}
		if i == f1.shstrndx {
			if !bytes.HasPrefix(d2, d1) {
				return fmt.Errorf("section name table is not an extension of the old one")
			}
			h1.offset, h1.size = h2.offset, h2.size
		} else if !bytes.Equal(d1, d2) {
			return fmt.Errorf("section %d contents changed", i)
		}
		if h1 != h2 {
			return fmt.Errorf("section %d header changed: %+v -> %+v", i, h1, h2)
		}
	}
	return nil
}

func TestAddSectionPlainObjectAndNameReuse(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "p.c"), []byte("int f(void){return 1;}\nint main(void){return f()-1;}\n"))
	run(t, dir, clang, "-c", "p.c", "-o", "p.o")
	obj := readFile(t, filepath.Join(dir, "p.o"))
	data := []byte("hello, offload")

	out, err := AddSection(obj, offloadSection(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sameSectionContents(obj, out); err != nil {
		t.Fatal(err)
	}
	// A second section with a name already in the table reuses the string.
	out2, err := AddSection(out, NewSection{Name: ".text", Type: 1, Flags: 0, Align: 16, Data: []byte{0xc3}})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := parseELF(out2)
	d, _ := f.data(f.shstrndx)
	f1, _ := parseELF(out)
	d1, _ := f1.data(f1.shstrndx)
	if !bytes.Equal(d, d1) {
		t.Error("shstrtab changed although the name was present")
	}
	h := f.shdr(f.shnum - 1)
	if h.offset%16 != 0 || h.addralign != 16 {
		t.Errorf("new section offset %#x align %d", h.offset, h.addralign)
	}
	// Second append of the same offloading name: both sections are listed.
	out3, err := AddSection(out, offloadSection([]byte("second")))
	if err != nil {
		t.Fatal(err)
	}
	secs, err := SectionsOfType(out3, SHTLLVMOffloading)
	if err != nil || len(secs) != 2 || string(secs[0]) != string(data) || string(secs[1]) != "second" {
		t.Errorf("SectionsOfType after two AddSections: %q %v", secs, err)
	}
	p := filepath.Join(dir, "p2.o")
	writeFile(t, p, out3)
	run(t, dir, clang, p, "-o", filepath.Join(dir, "p.exe"))
	run(t, dir, llvmtest.Tool(t, "ld.lld"), "-r", p, "-o", filepath.Join(dir, "r.o"))
	// Odd alignment and Align 0.
	if _, err := AddSection(obj, NewSection{Name: "x", Align: 3}); err == nil {
		t.Error("AddSection accepted alignment 3")
	}
	if _, err := AddSection(obj, NewSection{Name: "x"}); err != nil {
		t.Error(err)
	}
	if _, err := AddSection(obj, NewSection{Name: ""}); err == nil {
		t.Error("AddSection accepted an empty name")
	}
}

func TestAddSectionRejectsNonRelocatable(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.c"), []byte("int main(void){return 0;}\n"))
	run(t, dir, clang, "m.c", "-o", "m.exe")
	run(t, dir, clang, "-shared", "-fPIC", "m.c", "-o", "m.so")
	for _, name := range []string{"m.exe", "m.so"} {
		b := readFile(t, filepath.Join(dir, name))
		_, err := AddSection(b, offloadSection([]byte("x")))
		if err == nil || !strings.Contains(err.Error(), "ET_REL") {
			t.Errorf("AddSection(%s) error = %v, want one naming ET_REL", name, err)
		}
		// Reading still works.
		if _, err := SectionsOfType(b, 1); err != nil {
			t.Errorf("SectionsOfType(%s): %v", name, err)
		}
	}
}

// manySectionsAsm returns assembly defining n sections, each with a global
// symbol.
func manySectionsAsm(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, ".section .text.s%d,\"ax\",@progbits\n.globl s%d\ns%d:\n ret\n", i, i, i)
	}
	return b.Bytes()
}

func sectionCount(t *testing.T, obj []byte) uint64 {
	t.Helper()
	f, err := parseELF(obj)
	if err != nil {
		t.Fatal(err)
	}
	return f.shnum
}

func TestAddSectionManySections(t *testing.T) {
	clang := llvmtest.Clang(t)
	if testing.Short() {
		t.Skip("slow in -short mode")
	}
	dir := t.TempDir()
	assemble := func(name string, n int) []byte {
		writeFile(t, filepath.Join(dir, name+".s"), manySectionsAsm(n))
		run(t, dir, clang, "-c", name+".s", "-o", name+".o")
		return readFile(t, filepath.Join(dir, name+".o"))
	}
	// Calibrate how many extra sections the assembler adds.
	probe := assemble("probe", 10)
	extra := int(sectionCount(t, probe)) - 10

	cases := []struct {
		name   string
		shnum  int // section count of the input
		wantHi bool
	}{
		{"below", 1000, false},
		{"crossing", shnLoReserve - 1, true}, // 0xfeff -> 0xff00: switches to extended numbering
		{"extended", shnLoReserve + 200, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			extra := extra
			obj := assemble(c.name, c.shnum-extra)
			if got := int(sectionCount(t, obj)); got != c.shnum {
				// Extended numbering adds a SHT_SYMTAB_SHNDX section.
				extra += got - c.shnum
				obj = assemble(c.name, c.shnum-extra)
			}
			if got := sectionCount(t, obj); got != uint64(c.shnum) {
				t.Fatalf("assembled %d sections, want %d", got, c.shnum)
			}
			image := []byte("many sections image")
			out, err := AddSection(obj, offloadSection(image))
			if err != nil {
				t.Fatal(err)
			}
			if err := sameSectionContents(obj, out); err != nil {
				t.Fatal(err)
			}
			if hi := le.Uint16(out[60:]) == 0; hi != c.wantHi {
				t.Errorf("extended numbering = %v, want %v", hi, c.wantHi)
			}
			path := filepath.Join(dir, c.name+"-added.o")
			writeFile(t, path, out)
			hdr := run(t, "", llvmtest.Tool(t, "llvm-readelf"), "-h", path)
			if !strings.Contains(hdr, fmt.Sprint(c.shnum+1)) {
				t.Errorf("llvm-readelf -h does not report %d sections:\n%s", c.shnum+1, hdr)
			}
			if line := readelfSection(t, path, ".llvm.offloading"); !strings.Contains(line, "LLVM_OFFLOADING") {
				t.Errorf("readelf line %q", line)
			}
			secs, err := SectionsOfType(out, SHTLLVMOffloading)
			if err != nil || len(secs) != 1 || !bytes.Equal(secs[0], image) {
				t.Errorf("SectionsOfType: %d, %v", len(secs), err)
			}
			// Symbols still resolve to their sections.
			def, _, err := Symbols(out)
			if err != nil || len(def) != c.shnum-extra {
				t.Errorf("Symbols: %d defined, %v", len(def), err)
			}
			run(t, dir, llvmtest.Tool(t, "ld.lld"), "-r", path, "-o", filepath.Join(dir, c.name+"-r.o"))
			run(t, dir, llvmtest.Tool(t, "llvm-objcopy"), "--dump-section=.llvm.offloading="+c.name+".bin", path)
			if d := readFile(t, filepath.Join(dir, c.name+".bin")); !bytes.Equal(d, image) {
				t.Error("llvm-objcopy dumps different contents")
			}
		})
	}
}

func TestSymbolsMatchNm(t *testing.T) {
	clang := llvmtest.Clang(t)
	nm := llvmtest.Tool(t, "llvm-nm")
	dir := t.TempDir()
	src := `
int common_var;
int data_var = 3;
static int local_var = 4;
extern int ext_var;
__attribute__((weak)) int weak_fn(void) { return 1; }
__attribute__((weak)) extern int weak_ref(void);
extern int ext_fn(int);
static int local_fn(void) { return local_var; }
int global_fn(void) { return ext_fn(ext_var) + local_fn() + (weak_ref ? weak_ref() : 0); }
`
	writeFile(t, filepath.Join(dir, "s.c"), []byte(src))
	run(t, dir, clang, "-fcommon", "-c", "s.c", "-o", "s.o")
	obj := readFile(t, filepath.Join(dir, "s.o"))
	def, undef, err := Symbols(obj)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(def)
	slices.Sort(undef)
	if want := []string{"common_var", "data_var", "global_fn", "weak_fn"}; !slices.Equal(def, want) {
		t.Errorf("defined = %q, want %q", def, want)
	}
	if want := []string{"ext_fn", "ext_var"}; !slices.Equal(undef, want) {
		t.Errorf("undefined = %q, want %q", undef, want)
	}
	// Cross-check with llvm-nm.
	var nmDef, nmUndef []string
	for _, l := range strings.Split(run(t, dir, nm, "--extern-only", "s.o"), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		typ, name := f[len(f)-2], f[len(f)-1]
		switch typ {
		case "U":
			nmUndef = append(nmUndef, name)
		case "w", "v":
		default:
			nmDef = append(nmDef, name)
		}
	}
	slices.Sort(nmDef)
	slices.Sort(nmUndef)
	if !slices.Equal(def, nmDef) || !slices.Equal(undef, nmUndef) {
		t.Errorf("llvm-nm: defined %q undefined %q; Symbols: %q %q", nmDef, nmUndef, def, undef)
	}
}

func TestELFErrors(t *testing.T) {
	dir := t.TempDir()
	obj := smallObject(t, dir)
	f, err := parseELF(obj)
	if err != nil {
		t.Fatal(err)
	}
	// Section 1's data pushed past the end of the file.
	bad := slices.Clone(obj)
	le.PutUint64(bad[f.shdrOffset(1)+24:], uint64(len(bad)))
	le.PutUint32(bad[f.shdrOffset(1)+4:], 1)
	_, err = SectionsOfType(bad, 1)
	want := fmt.Sprintf("ELF section header 1 at offset %#x: data (offset %#x, size", f.shdrOffset(1), len(bad))
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "runs past end of file") {
		t.Errorf("error = %v, want prefix %q", err, want)
	}
	for _, c := range []struct {
		name string
		b    []byte
		msg  string
	}{
		{"empty", nil, "not an ELF file"},
		{"short", obj[:20], "shorter than the 64-byte"},
		{"32-bit", func() []byte { b := slices.Clone(obj); b[4] = 1; return b }(), "ELFCLASS64"},
		{"big-endian", func() []byte { b := slices.Clone(obj); b[5] = 2; return b }(), "little-endian"},
		{"shoff", func() []byte { b := slices.Clone(obj); le.PutUint64(b[40:], 1<<62); return b }(), "section header table offset"},
		{"shnum", func() []byte { b := slices.Clone(obj); le.PutUint16(b[60:], 0xfff0); return b }(), "runs past end of file"},
		{"xindex", func() []byte {
			b := slices.Clone(obj)
			le.PutUint16(b[60:], 0)
			le.PutUint64(b[f.shoff+32:], 1<<40)
			return b
		}(), "runs past end of file"},
		{"core", func() []byte { b := slices.Clone(obj); le.PutUint16(b[16:], 4); return b }(), "ET_CORE"},
	} {
		_, err := SectionsOfType(c.b, 1)
		if err == nil || !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.msg)
		}
		if _, _, err := Symbols(c.b); err == nil {
			t.Errorf("%s: Symbols accepted bad input", c.name)
		}
		if _, err := AddSection(c.b, offloadSection(nil)); err == nil {
			t.Errorf("%s: AddSection accepted bad input", c.name)
		}
	}
}

// TestHugeCountsAllocateLittle checks that headers claiming huge counts do
// not make the readers allocate in proportion to the claims.
func TestHugeCountsAllocateLittle(t *testing.T) {
	dir := t.TempDir()
	obj := smallObject(t, dir)
	f, _ := parseELF(obj)
	bad := slices.Clone(obj)
	le.PutUint16(bad[60:], 0)
	le.PutUint64(bad[f.shoff+32:], 1<<50) // extended count
	arch := []byte("!<arch>\n/               0           0     0     0       8         `\n\xff\xff\xff\xff\x00\x00\x00\x00")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	for range 100 {
		SectionsOfType(bad, 1)
		Symbols(bad)
		AddSection(bad, offloadSection(nil))
		ParseArchive(arch)
	}
	runtime.ReadMemStats(&ms)
	// The inputs claim 2^50 sections and 2^32 symbols; a few KiB per round
	// (error messages) is fine.
	if d := ms.TotalAlloc - before; d > 100*16<<10 {
		t.Errorf("allocated %d bytes for 100 rounds on %d-byte inputs", d, len(bad)+len(arch))
	}
}

// smallObject returns a small relocatable object: compiled with clang when
// available, otherwise the stored seed.
func smallObject(t *testing.T, dir string) []byte {
	t.Helper()
	if b, err := os.ReadFile("testdata/small.o"); err == nil {
		return b
	}
	clang := llvmtest.Clang(t)
	writeFile(t, filepath.Join(dir, "small.c"), []byte("int x = 1; int f(void){return x;}\n"))
	run(t, dir, clang, "-c", "small.c", "-o", "small.o")
	return readFile(t, filepath.Join(dir, "small.o"))
}

// TestWriteWithSectionMatchesAddSection checks that the streaming writer
// produces AddSection's bytes.
func TestWriteWithSectionMatchesAddSection(t *testing.T) {
	obj, err := os.ReadFile(filepath.Join("testdata", "small.o"))
	if err != nil {
		t.Skip("no testdata/small.o")
	}
	s := NewSection{Name: ".llvm.offloading", Type: SHTLLVMOffloading, Flags: SHFExclude, Align: 8, Data: bytes.Repeat([]byte{0xAD}, 1000)}
	want, err := AddSection(obj, s)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := WriteWithSection(&got, obj, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("WriteWithSection wrote %d bytes that differ from AddSection's %d", got.Len(), len(want))
	}
	if err := WriteWithSection(&got, []byte("not an object"), s); err == nil {
		t.Error("WriteWithSection accepted a non-ELF input")
	}
}
