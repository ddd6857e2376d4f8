package e2e

// The README's claims that a test can check, beyond its examples running
// (TestDocExamples): what an offcc object has that clang's has not.

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/objfile"
	"github.com/offcc/offcc/packager"
)

// ompNameRE matches the start of an OpenMP kernel or offload entry name:
// __omp_offloading_<device>_<file>_<function>_l<line>.
var ompNameRE = regexp.MustCompile(`__omp_offloading_([0-9a-f]+)_([0-9a-f]+)_([A-Za-z0-9_]+?)_l([0-9]+)`)

// kernelRenames returns, for the OpenMP kernels that the object stable
// (offcc's default) and the object clang (clang's, of the same source and
// command) name, a replacer from each of stable's names to clang's for the
// same function and line. It checks that stable names every kernel after a
// path (device deadf17e), clang after an inode, and that both objects have
// the same kernels.
func kernelRenames(t *testing.T, stable, clang []byte) *strings.Replacer {
	t.Helper()
	names := func(data []byte) map[string]string {
		byPlace := map[string]string{}
		for _, m := range ompNameRE.FindAllSubmatch(data, -1) {
			byPlace[string(m[3])+":"+string(m[4])] = string(m[0])
		}
		return byPlace
	}
	s, c := names(stable), names(clang)
	if len(c) == 0 {
		t.Fatal("clang's object has no OpenMP kernel")
	}
	var pairs []string
	for place, cn := range c {
		sn, ok := s[place]
		if !ok {
			t.Errorf("clang's kernel %s has no counterpart in offcc's object (kernels %v)", cn, s)
			continue
		}
		if m := ompNameRE.FindStringSubmatch(cn); m[1] == "deadf17e" {
			t.Errorf("clang's kernel %s is named after a path: the test expects clang's inode names", cn)
		}
		if m := ompNameRE.FindStringSubmatch(sn); m[1] != "deadf17e" {
			t.Errorf("offcc's kernel %s is not a stable name (device deadf17e)", sn)
		}
		if sn == cn {
			t.Errorf("offcc's kernel %s has clang's name", sn)
		}
		pairs = append(pairs, sn, cn)
	}
	if len(s) != len(c) {
		t.Errorf("offcc's object names %d kernels, clang's %d: %v, %v", len(s), len(c), s, c)
	}
	return strings.NewReplacer(pairs...)
}

// shtLLVMOffloading is the type of LLVM's .llvm.offloading section.
const shtLLVMOffloading = elf.SectionType(objfile.SHTLLVMOffloading)

// sameButNames compares the ELF relocatable objects got (offcc's) and want
// (clang's) section by section, got's strings renamed by rename, and
// returns every difference: the file header, each section's header but
// its offset and size, the symbols (names renamed), the strings of string
// sections (renamed), the images of offload sections (their ELF images
// compared likewise), and every other section's bytes as they are.
// String tables are compared through the symbols and section names that
// point into them.
func sameButNames(what string, got, want []byte, rename *strings.Replacer) []string {
	g, err := elf.NewFile(bytes.NewReader(got))
	if err != nil {
		return []string{fmt.Sprintf("%s: offcc's: %v", what, err)}
	}
	w, err := elf.NewFile(bytes.NewReader(want))
	if err != nil {
		return []string{fmt.Sprintf("%s: clang's: %v", what, err)}
	}
	var diffs []string
	differ := func(format string, args ...any) {
		diffs = append(diffs, what+": "+fmt.Sprintf(format, args...))
	}
	if g.FileHeader != w.FileHeader {
		differ("ELF header %+v, clang's %+v", g.FileHeader, w.FileHeader)
	}
	if len(g.Sections) != len(w.Sections) {
		differ("%d sections, clang's %d", len(g.Sections), len(w.Sections))
		return diffs
	}
	for i, gs := range g.Sections {
		ws := w.Sections[i]
		gh, wh := gs.SectionHeader, ws.SectionHeader
		gh.Offset, wh.Offset, gh.Size, wh.Size, gh.FileSize, wh.FileSize = 0, 0, 0, 0, 0, 0
		if gh != wh {
			differ("section %d: %+v, clang's %+v", i, gs.SectionHeader, ws.SectionHeader)
			continue
		}
		if gs.Type == elf.SHT_NOBITS {
			if gs.Size != ws.Size {
				differ("%s: %d bytes, clang's %d", gs.Name, gs.Size, ws.Size)
			}
			continue
		}
		gd, err1 := gs.Data()
		wd, err2 := ws.Data()
		if err1 != nil || err2 != nil {
			differ("%s: %v, %v", gs.Name, err1, err2)
			continue
		}
		switch {
		case gs.Type == elf.SHT_STRTAB || gs.Type == elf.SHT_SYMTAB:
			// Through the symbols, below, and the section names.
		case gs.Type == shtLLVMOffloading:
			diffs = append(diffs, sameImages(what+" "+gs.Name, gd, wd, rename)...)
		case gs.Flags&elf.SHF_STRINGS != 0:
			gstr := strings.Split(rename.Replace(string(gd)), "\x00")
			wstr := strings.Split(string(wd), "\x00")
			if !slices.Equal(gstr, wstr) {
				differ("%s: strings %q, clang's %q", gs.Name, gstr, wstr)
			}
		default:
			if !bytes.Equal(gd, wd) {
				differ("%s: its %d bytes are not clang's %d", gs.Name, len(gd), len(wd))
			}
		}
	}
	gsyms, err1 := g.Symbols()
	wsyms, err2 := w.Symbols()
	if err1 != nil || err2 != nil {
		differ("symbols: %v, %v", err1, err2)
		return diffs
	}
	if len(gsyms) != len(wsyms) {
		differ("%d symbols, clang's %d", len(gsyms), len(wsyms))
		return diffs
	}
	for i, gsym := range gsyms {
		wsym := wsyms[i]
		gsym.Name = rename.Replace(gsym.Name)
		if k := int(gsym.Section); k > 0 && k < len(g.Sections) && g.Sections[k].Flags&elf.SHF_STRINGS != 0 && gsym.Section == wsym.Section {
			// A symbol of a string (.offloading.entry_name): its string,
			// renamed, and not its place and size.
			gstr, wstr := symbolBytes(g.Sections[k], gsym), symbolBytes(w.Sections[k], wsym)
			if rename.Replace(gstr) != wstr {
				differ("symbol %s: string %q (renamed), clang's %q", gsym.Name, rename.Replace(gstr), wstr)
			}
			gsym.Value, gsym.Size = wsym.Value, wsym.Size
		}
		if gsym != wsym {
			differ("symbol %d: %+v (renamed), clang's %+v", i, gsym, wsym)
		}
	}
	return diffs
}

// symbolBytes returns the bytes the symbol sym of section s covers, or ""
// when they lie outside it.
func symbolBytes(s *elf.Section, sym elf.Symbol) string {
	data, err := s.Data()
	if err != nil || sym.Value > uint64(len(data)) || sym.Size > uint64(len(data))-sym.Value {
		return ""
	}
	return string(data[sym.Value : sym.Value+sym.Size])
}

// sameImages compares the offload binaries of two .llvm.offloading
// sections: the same images, with the same kinds and strings, their ELF
// contents compared by sameButNames, any other contents byte for byte
// after renaming.
func sameImages(what string, got, want []byte, rename *strings.Replacer) []string {
	gi, err1 := packager.Parse(got)
	wi, err2 := packager.Parse(want)
	if err1 != nil || err2 != nil {
		return []string{fmt.Sprintf("%s: %v, %v", what, err1, err2)}
	}
	if len(gi) != len(wi) {
		return []string{fmt.Sprintf("%s: %d images, clang's %d", what, len(gi), len(wi))}
	}
	var diffs []string
	for i := range gi {
		g, w := gi[i], wi[i]
		if g.Kind != w.Kind || g.Offload != w.Offload || g.Flags != w.Flags || !slices.Equal(g.Strings, w.Strings) {
			diffs = append(diffs, fmt.Sprintf("%s: image %d is %v %v %x %v, clang's %v %v %x %v", what, i, g.Kind, g.Offload, g.Flags, g.Strings, w.Kind, w.Offload, w.Flags, w.Strings))
			continue
		}
		if bytes.HasPrefix(w.Data, []byte(elf.ELFMAG)) {
			diffs = append(diffs, sameButNames(fmt.Sprintf("%s image %d", what, i), g.Data, w.Data, rename)...)
		} else if rename.Replace(string(g.Data)) != string(w.Data) {
			diffs = append(diffs, fmt.Sprintf("%s: image %d's %d bytes are not clang's %d", what, i, len(g.Data), len(w.Data)))
		}
	}
	return diffs
}

// readmeBlock returns the README's ```sh block that contains every one of
// the strings in has.
func readmeBlock(t *testing.T, has ...string) docBlock {
	t.Helper()
	for _, b := range docBlocks(t, repoPath(t, ""), "README.md") {
		if !slices.ContainsFunc(has, func(s string) bool { return !strings.Contains(b.text, s) }) {
			return b
		}
	}
	t.Fatalf("README.md has no sh block with %q", has)
	return docBlock{}
}

// TestReadmeWhatDiffers runs the README's "What differs from clang"
// example and checks what the README says of it: with
// --no-offload-stable-names offcc's object is clang 22's byte for byte; by
// default it differs from clang's in the OpenMP kernel names alone (the
// host object's symbols and offload entries, and the device image it
// embeds), sections and symbols compared one by one.
func TestReadmeWhatDiffers(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the README documents offcc's objects")
	b := readmeBlock(t, "--no-offload-stable-names", "stable.o", "clang.o")
	work := runDocBlock(t, c, b)
	if t.Failed() {
		return
	}
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(work, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	clang, names, stable := read("clang.o"), read("clang-names.o"), read("stable.o")
	if !bytes.Equal(names, clang) {
		t.Errorf("%s:%d: offcc --no-offload-stable-names's object is not clang's byte for byte", b.file, b.line)
	}
	if bytes.Equal(stable, clang) {
		t.Fatalf("%s:%d: offcc's default object is clang's: the README says its kernel names differ", b.file, b.line)
	}
	rename := kernelRenames(t, stable, clang)
	for _, d := range sameButNames("stable.o", stable, clang, rename) {
		t.Errorf("%s:%d: beyond the kernel names, %s", b.file, b.line, d)
	}
}

// TestReadmeComparisonFails checks that sameButNames finds a difference
// other than kernel names: a byte of the host object's code changed, or
// one of the code of the device image it embeds, fails the comparison.
func TestReadmeComparisonFails(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the README documents offcc's objects")
	dir := t.TempDir()
	src := filepath.Join(dir, "region.c")
	if err := os.WriteFile(src, []byte("int main(void) {\n  int x = 0;\n#pragma omp target map(tofrom: x)\n  x = 42;\n  return x != 42;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, tmp := tmpEnv(t)
	flags := args("-fopenmp", "-fopenmp-targets="+offloadHost, "-O2", "-c", "region.c")
	cmdSpec{dir: dir, env: []string{tmp}, name: refClang, args: args(flags, "-o", "clang.o")}.mustRun(t)
	cmdSpec{dir: dir, env: []string{tmp, "OFFCC_CACHE=0"}, name: c.cc, args: args(flags, "-o", "stable.o")}.mustRun(t)
	clang, _ := os.ReadFile(filepath.Join(dir, "clang.o"))
	stable, _ := os.ReadFile(filepath.Join(dir, "stable.o"))
	rename := kernelRenames(t, stable, clang)
	if d := sameButNames("stable.o", stable, clang, rename); len(d) != 0 {
		t.Fatalf("offcc's object differs beyond kernel names: %v", d)
	}
	// Where the bytes of the host's .text and of the embedded device
	// image's .text lie in stable.o.
	textOf := func(obj []byte) (off, size uint64) {
		f, err := elf.NewFile(bytes.NewReader(obj))
		if err != nil {
			t.Fatal(err)
		}
		s := f.Section(".text")
		if s == nil || s.Size == 0 {
			t.Fatal("an object without code in .text")
		}
		return s.Offset, s.Size
	}
	hostText, hostSize := textOf(stable)
	ims, err := packager.ImagesInELF(stable)
	if err != nil || len(ims) == 0 {
		t.Fatalf("offcc's object embeds no offload image: %v", err)
	}
	at := bytes.Index(stable, ims[0].Data)
	devText, devSize := textOf(ims[0].Data)
	for _, change := range []struct {
		what string
		at   uint64
	}{{"the host's .text", hostText + hostSize/2}, {"the device image's .text", uint64(at) + devText + devSize/2}} {
		changed := bytes.Clone(stable)
		changed[change.at] ^= 0x01
		if d := sameButNames("changed", changed, clang, rename); len(d) == 0 {
			t.Errorf("a byte of %s changed, and the comparison finds no difference", change.what)
		} else {
			t.Logf("%s changed: %s", change.what, d[0])
		}
	}
}

// baseDirAtConfigure matches a shell line that gives cmake OFFCC_BASE_DIR
// in its environment (OFFCC_BASE_DIR=DIR cmake ..., env OFFCC_BASE_DIR=DIR
// cmake ...), or exports it where the same block configures with cmake.
var baseDirAtConfigure = regexp.MustCompile(`(?m)OFFCC_BASE_DIR=\S*\s+(\S+=\S*\s+)*cmake\b|export\s+OFFCC_BASE_DIR=[\s\S]*\ncmake\s`)

// TestDocsBaseDirNotAtConfigure checks that no shell example of the README
// or docs/ sets OFFCC_BASE_DIR for CMake's configure: the toolchain file
// gives every compile its base directory through the compiler launcher,
// and OFFCC_BASE_DIR in cmake's environment plays no part
// (TestBaseDirCMakeCheckouts builds with none). The pattern finds the
// manual's old example.
func TestDocsBaseDirNotAtConfigure(t *testing.T) {
	t.Parallel()
	if !baseDirAtConfigure.MatchString("OFFCC_BASE_DIR=$PWD cmake ...                            # absolute paths, as CMake writes them\n") {
		t.Fatal("the pattern misses the manual's old configure-time example")
	}
	root := repoPath(t, "")
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	rels := []string{"README.md"}
	for _, p := range pages {
		rels = append(rels, filepath.Join("docs", filepath.Base(p)))
	}
	for _, rel := range rels {
		for _, b := range docBlocks(t, root, rel) {
			if m := baseDirAtConfigure.FindString(b.text); m != "" {
				t.Errorf("%s:%d: %q: the toolchain file gives compiles their base directory; OFFCC_BASE_DIR at configure time does nothing", b.file, b.line, m)
			}
		}
	}
}
