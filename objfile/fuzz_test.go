package objfile

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// seedFiles returns the stored seed inputs under testdata/.
func seedFiles(f *testing.F) [][]byte {
	f.Helper()
	var out [][]byte
	for _, n := range []string{"small.o", "offload.o", "lib.a", "cuda-rdc.o", "shared.cubin"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

var (
	seedOnce      sync.Once
	seedGenerated [][]byte
)

// generatedSeeds returns objects and archives built at test time when the
// LLVM toolchain is present (built once for all fuzz targets). Without it
// the stored seeds suffice, except under OFFCC_REQUIRE_LLVM=1 (CI), where
// the fuzz target fails.
func generatedSeeds(f *testing.F) [][]byte {
	f.Helper()
	if !llvmtest.Installed() && !llvmtest.Required() {
		return nil
	}
	llvmtest.Clang(f)
	seedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "objfile-seeds")
		if err != nil {
			f.Fatal(err)
		}
		defer os.RemoveAll(dir)
		seedGenerated = buildSeeds(f, dir)
	})
	return seedGenerated
}

func buildSeeds(f *testing.F, dir string) [][]byte {
	var out [][]byte
	full, host := offloadObjects(f, dir)
	out = append(out, readFile(f, full), readFile(f, host))
	writeFile(f, filepath.Join(dir, "a_long_member_name.c"), []byte("int q(void){return 0;}\n"))
	run(f, dir, llvmtest.Clang(f), "-c", "a_long_member_name.c", "-o", "a_long_member_name.o")
	run(f, dir, llvmtest.Tool(f, "llvm-ar"), "rcs", "--format=bsd", "bsd.a", "a_long_member_name.o")
	out = append(out, readFile(f, filepath.Join(dir, "bsd.a")))
	var buf bytes.Buffer
	WriteArchive(&buf, []Member{{Name: "a_long_member_name.o", Data: readFile(f, filepath.Join(dir, "a_long_member_name.o"))}, {Name: "s", Data: []byte("x")}})
	out = append(out, buf.Bytes())
	return out
}

func allSeeds(f *testing.F) [][]byte {
	seeds := append(seedFiles(f), generatedSeeds(f)...)
	return append(seeds, nil, []byte("\x7fELF"), []byte("!<arch>\n"), []byte("!<thin>\n"))
}

// within reports whether s is a subslice of b.
func within(s, b []byte) bool {
	if len(s) == 0 {
		return true
	}
	if len(b) == 0 {
		return false
	}
	for i := range b {
		if &b[i] == &s[0] {
			return i+len(s) <= len(b)
		}
	}
	return false
}

func FuzzSectionsOfType(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s, uint32(SHTLLVMOffloading))
		f.Add(s, uint32(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, typ uint32) {
		secs, err := SectionsOfType(b, typ)
		if err != nil {
			if secs != nil || bytes.Contains([]byte(err.Error()), []byte("\n")) {
				t.Fatalf("bad error result: %v", err)
			}
			return
		}
		for _, s := range secs {
			if !within(s, b) {
				t.Fatal("section slice does not alias the input")
			}
		}
	})
}

func FuzzSections(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		secs, err := Sections(b)
		if err != nil {
			if secs != nil || bytes.Contains([]byte(err.Error()), []byte("\n")) {
				t.Fatalf("bad error result: %v", err)
			}
			return
		}
		for _, s := range secs {
			if !within(s.Data, b) {
				t.Fatal("section data does not alias the input")
			}
			if s.Type == shtNobits && s.Data != nil {
				t.Fatal("SHT_NOBITS section with data")
			}
			if len(s.Data) > 0 && &s.Data[0] != &b[s.Offset] {
				t.Fatal("section data not at its offset")
			}
		}
	})
}

func FuzzSymbols(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		def, undef, err := Symbols(b)
		if err != nil {
			if def != nil || undef != nil {
				t.Fatal("results with an error")
			}
			return
		}
		for _, n := range append(def, undef...) {
			if n == "" {
				t.Fatal("empty symbol name")
			}
		}
	})
}

func FuzzParseArchive(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseArchive(b)
		if err != nil {
			return
		}
		idx := a.SymbolIndex()
		for _, i := range idx {
			if i < 0 || i >= len(a.Members) {
				t.Fatalf("symbol index %d out of range", i)
			}
		}
		var buf bytes.Buffer
		if err := WriteArchive(&buf, a.Members); err != nil {
			return // e.g. names WriteArchive cannot store
		}
		a2, err := ParseArchive(buf.Bytes())
		if err != nil {
			t.Fatalf("re-parse of written archive: %v", err)
		}
		if len(a2.Members) != len(a.Members) {
			t.Fatalf("round trip: %d members, want %d", len(a2.Members), len(a.Members))
		}
		for i := range a.Members {
			if a2.Members[i].Name != a.Members[i].Name || !bytes.Equal(a2.Members[i].Data, a.Members[i].Data) {
				t.Fatalf("round trip: member %d %q differs", i, a.Members[i].Name)
			}
		}
	})
}

func FuzzAddSection(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s, ".llvm.offloading", []byte("image"), uint64(8))
		f.Add(s, ".text", []byte{1, 2, 3}, uint64(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, name string, data []byte, align uint64) {
		orig := bytes.Clone(b)
		out, err := AddSection(b, NewSection{Name: name, Type: SHTLLVMOffloading, Flags: SHFExclude, Align: align, Data: data})
		if !bytes.Equal(b, orig) {
			t.Fatal("AddSection modified its input")
		}
		if err != nil {
			return
		}
		pf, err := parseELF(out)
		if err != nil {
			t.Fatalf("output does not parse: %v", err)
		}
		of, _ := parseELF(b)
		if pf.shnum != of.shnum+1 {
			t.Fatalf("section count %d -> %d", of.shnum, pf.shnum)
		}
		d, err := pf.data(pf.shnum - 1)
		if err != nil || !bytes.Equal(d, data) {
			t.Fatalf("new section contents wrong: %v", err)
		}
		if h := pf.shdr(pf.shnum - 1); h.typ != SHTLLVMOffloading || h.flags != SHFExclude || h.addralign != align || (align > 1 && h.offset%align != 0) {
			t.Fatalf("new section header %+v", h)
		}
		strs, err := pf.data(pf.shstrndx)
		if err != nil {
			t.Fatal(err)
		}
		no := uint64(pf.shdr(pf.shnum - 1).name)
		if no+uint64(len(name)) >= uint64(len(strs)) || string(strs[no:no+uint64(len(name))]) != name || strs[no+uint64(len(name))] != 0 {
			t.Fatal("new section name not in the string table")
		}
		// Sections that read cleanly before read the same after, except
		// ones overlapping the ELF header, which AddSection updates.
		for i := uint64(1); i < of.shnum; i++ {
			if i == of.shstrndx || of.shdr(i).offset < elfHeaderSize {
				continue
			}
			d1, err1 := of.data(i)
			d2, err2 := pf.data(i)
			if err1 == nil && (err2 != nil || !bytes.Equal(d1, d2)) {
				t.Fatalf("section %d changed", i)
			}
		}
	})
}

func FuzzAddSections(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s, "__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-", ".b", []byte("device"), uint64(4096))
	}
	f.Fuzz(func(t *testing.T, b []byte, n1, n2 string, data []byte, align uint64) {
		orig := bytes.Clone(b)
		secs := []NewSection{{Name: n1, Type: 1, Flags: SHFExclude, Data: []byte{0}}, {Name: n2, Type: 1, Align: align, Data: data}, {Name: n1, Type: 1}}
		out, err := AddSections(b, secs)
		if !bytes.Equal(b, orig) {
			t.Fatal("AddSections modified its input")
		}
		if err != nil {
			return
		}
		of, _ := parseELF(b)
		got, err := Sections(out)
		if err != nil {
			if _, err0 := Sections(b); err0 == nil {
				t.Fatalf("output does not parse: %v", err)
			}
			return
		}
		if uint64(len(got)) != of.shnum-1+3 {
			t.Fatalf("%d sections, want %d", len(got), of.shnum+2)
		}
		for i, s := range secs {
			g := got[len(got)-3+i]
			if g.Name != s.Name || !bytes.Equal(g.Data, s.Data) {
				t.Fatalf("new section %d: %q %q, want %q %q", i, g.Name, g.Data, s.Name, s.Data)
			}
		}
		var buf bytes.Buffer
		if err := WriteWithSections(&buf, b, secs); err != nil || !bytes.Equal(buf.Bytes(), out) {
			t.Fatal("WriteWithSections differs")
		}
	})
}

func FuzzRemoveSections(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s, ".text")
		f.Add(s, ".llvm.offloading")
		f.Add(s, "__CLANG_OFFLOAD_BUNDLE__")
	}
	f.Fuzz(func(t *testing.T, b []byte, prefix string) {
		orig := bytes.Clone(b)
		drop := func(n string) bool { return len(prefix) > 0 && len(n) >= len(prefix) && n[:len(prefix)] == prefix }
		out, err := RemoveSections(b, drop)
		if !bytes.Equal(b, orig) {
			t.Fatal("RemoveSections modified its input")
		}
		if err != nil {
			return
		}
		before, _ := Sections(b)
		after, err := Sections(out)
		if err != nil {
			t.Fatalf("output does not parse: %v", err)
		}
		var want []Section
		for _, s := range before {
			if !drop(s.Name) {
				want = append(want, s)
			}
		}
		// Relocation sections of removed sections may go too.
		if len(after) > len(want) {
			t.Fatalf("%d sections left, at most %d expected", len(after), len(want))
		}
		for _, s := range after {
			if drop(s.Name) {
				t.Fatalf("section %q not removed", s.Name)
			}
		}
	})
}

// FuzzReplaceSection: ReplaceSection never panics or modifies its input,
// and what it returns parses with the new contents in place.
func FuzzReplaceSection(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s, ".text", []byte{1, 2, 3})
		f.Add(s, ".data", bytes.Repeat([]byte{7}, 100))
	}
	f.Fuzz(func(t *testing.T, b []byte, name string, data []byte) {
		orig := bytes.Clone(b)
		out, err := ReplaceSection(b, name, data)
		if !bytes.Equal(b, orig) {
			t.Fatal("ReplaceSection modified its input")
		}
		if err != nil {
			return
		}
		secs, err := Sections(out)
		if err != nil {
			t.Fatalf("output does not parse: %v", err)
		}
		for _, s := range secs {
			if s.Name == name && !bytes.Equal(s.Data, data) {
				t.Fatalf("section %s holds %d bytes, want %d", name, len(s.Data), len(data))
			}
		}
	})
}

// FuzzImageSymbols: ImageSymbols never panics; it returns symbols or an
// error, never both; ok says whether the input is an ELF relocatable object
// or bitcode; the symbol count stays within the input size and names come
// from the input.
func FuzzImageSymbols(f *testing.F) {
	seeds := allSeeds(f)
	for n := range storedSymtabSeeds {
		seeds = append(seeds, readFile(f, filepath.Join("testdata", n)))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Add([]byte(bcMagic))
	f.Add([]byte(bcWrapperMagic + "\x00\x00\x00\x00\x14\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00" + bcMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		syms, ok, err := ImageSymbols(b)
		if want := isBitcodeMagic(b) || isELFRelocatable(b); ok != want {
			t.Fatalf("ok = %v, want %v", ok, want)
		}
		if err != nil {
			if syms != nil || bytes.Contains([]byte(err.Error()), []byte("\n")) {
				t.Fatalf("bad error result: %v", err)
			}
			return
		}
		if len(syms) > len(b) {
			t.Fatalf("%d symbols from %d bytes", len(syms), len(b))
		}
		for i, s := range syms {
			if i < 64 && !bytes.Contains(b, []byte(s.Name)) {
				t.Fatalf("symbol name %q not in the input", s.Name)
			}
		}
	})
}

// FuzzPointerInSymbol: PointerInSymbol never panics, and a pointer it
// finds lies in a section of the input.
func FuzzPointerInSymbol(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s, "__cuda_fatbin_wrapper", uint64(8))
		f.Add(s, "main", uint64(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, sym string, off uint64) {
		p, found, err := PointerInSymbol(b, sym, off)
		if err != nil || !found {
			if p != (Pointer{}) {
				t.Fatalf("no pointer found, but %+v returned", p)
			}
			return
		}
		secs, err := Sections(b)
		if err != nil {
			t.Fatalf("a pointer found in an object Sections rejects: %v", err)
		}
		for _, s := range secs {
			if s.Name == p.Section {
				return
			}
		}
		t.Fatalf("pointer into section %q, which the object lacks", p.Section)
	})
}

// FuzzExtendSection: ExtendSection never panics or modifies its input,
// and what it returns parses with the section's old contents followed by
// the tail.
func FuzzExtendSection(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s, "__nv_relfatbin", []byte{1, 2, 3})
		f.Add(s, ".data", bytes.Repeat([]byte{7}, 100))
	}
	f.Fuzz(func(t *testing.T, b []byte, name string, tail []byte) {
		orig := bytes.Clone(b)
		out, err := ExtendSection(b, name, tail)
		if !bytes.Equal(b, orig) {
			t.Fatal("ExtendSection modified its input")
		}
		if err != nil {
			return
		}
		before, err := Sections(b)
		if err != nil {
			t.Fatalf("input extended though it does not parse: %v", err)
		}
		after, err := Sections(out)
		if err != nil {
			t.Fatalf("output does not parse: %v", err)
		}
		if len(after) != len(before) {
			t.Fatalf("%d sections, want %d", len(after), len(before))
		}
		for i, s := range after {
			want := before[i].Data
			if s.Name == name {
				want = append(bytes.Clone(want), tail...)
			}
			if !bytes.Equal(s.Data, want) {
				t.Fatalf("section %d (%s) holds %d bytes, want %d", i, s.Name, len(s.Data), len(want))
			}
		}
	})
}

// FuzzCodeDigests: CodeDigests never panics, and what it returns it
// returns again for the same input.
func FuzzCodeDigests(f *testing.F) {
	for _, s := range allSeeds(f) {
		f.Add(s, "__omp_offloading_")
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, b []byte, prefix string) {
		d, err := CodeDigests(b, prefix)
		if err != nil {
			return
		}
		again, err := CodeDigests(b, prefix)
		if err != nil || len(again) != len(d) {
			t.Fatalf("a second call gives %d digests (%v), the first %d", len(again), err, len(d))
		}
		for name, v := range d {
			if again[name] != v {
				t.Fatalf("%s: digests differ between calls", name)
			}
		}
	})
}
