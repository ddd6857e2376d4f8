package objfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// TestSectionsMatchesReadelf compares Sections with llvm-readelf -S on an
// offload object: names, types, flags, offsets and sizes, in header order.
func TestSectionsMatchesReadelf(t *testing.T) {
	readelf := llvmtest.Tool(t, "llvm-readelf")
	dir := t.TempDir()
	full, _ := offloadObjects(t, dir)
	obj := readFile(t, full)
	secs, err := Sections(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, "", readelf, "-S", "-W", full)
	var want []string
	for _, l := range strings.Split(out, "\n") {
		i := strings.Index(l, "]")
		if !strings.HasPrefix(strings.TrimSpace(l), "[") || i < 0 {
			continue
		}
		f := strings.Fields(l[i+1:])
		if len(f) < 6 || f[0] == "Name" || f[0] == "NULL" {
			continue
		}
		off, _ := strconv.ParseUint(f[3], 16, 64)
		size, _ := strconv.ParseUint(f[4], 16, 64)
		want = append(want, fmt.Sprintf("%s %#x %#x", f[0], off, size))
	}
	var got []string
	for _, s := range secs {
		size := uint64(len(s.Data))
		if s.Type == shtNobits {
			size = readShdr(obj[le.Uint64(obj[40:])+uint64(len(got)+1)*elfShdrSize:]).size
		}
		got = append(got, fmt.Sprintf("%s %#x %#x", s.Name, s.Offset, size))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Sections:\n%s\nllvm-readelf:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	found := false
	for _, s := range secs {
		if s.Name == ".llvm.offloading" {
			found = true
			if s.Type != SHTLLVMOffloading || s.Flags&SHFExclude == 0 {
				t.Errorf(".llvm.offloading: type %#x flags %#x", s.Type, s.Flags)
			}
			want, _ := SectionsOfType(obj, SHTLLVMOffloading)
			if !bytes.Equal(s.Data, want[0]) || !within(s.Data, obj) {
				t.Error(".llvm.offloading data differs from SectionsOfType or does not alias the input")
			}
		}
	}
	if !found {
		t.Error("no .llvm.offloading section")
	}
}

func TestSectionsSeedAndErrors(t *testing.T) {
	obj := readFile(t, filepath.Join("testdata", "small.o"))
	secs, err := Sections(obj)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := parseELF(obj)
	if uint64(len(secs)) != f.shnum-1 {
		t.Fatalf("%d sections, want %d", len(secs), f.shnum-1)
	}
	names := map[string]bool{}
	for _, s := range secs {
		names[s.Name] = true
	}
	for _, n := range []string{".text", ".strtab", ".symtab"} {
		if !names[n] {
			t.Errorf("no section %s in %v", n, names)
		}
	}
	// A section header whose name offset is out of range.
	bad := bytes.Clone(obj)
	le.PutUint32(bad[f.shdrOffset(1):], 0xffffff)
	if _, err := Sections(bad); err == nil || !strings.Contains(err.Error(), "name offset 0xffffff out of range") {
		t.Errorf("bad name offset: %v", err)
	}
	// Data past the end of the file.
	bad = bytes.Clone(obj)
	h := f.shdr(1)
	h.typ, h.size = 1, 1<<40
	h.put(bad[f.shdrOffset(1):])
	if _, err := Sections(bad); err == nil || !strings.Contains(err.Error(), "runs past end of file") {
		t.Errorf("bad size: %v", err)
	}
	if _, err := Sections([]byte("junk")); err == nil {
		t.Error("accepted junk")
	}
}

// TestSectionsCubinNoBits: a cubin's .nv.shared.* and .nv.global sections
// (processor-specific types that, like SHT_NOBITS, take no file space; the
// 32 KiB of __shared__ memory runs past the end of the 3 KiB file) read
// as sections without contents. testdata/shared.cubin is clang 22's
// relocatable sm_80 cubin (ptxas 11.8) of a kernel with __shared__ float
// s[8192] and a __device__ array.
func TestSectionsCubinNoBits(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "shared.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	secs, err := Sections(b)
	if err != nil {
		t.Fatalf("Sections: %v", err)
	}
	found := map[string]bool{}
	for _, s := range secs {
		switch {
		case strings.HasPrefix(s.Name, ".nv.shared."), s.Name == ".nv.global":
			found[strings.TrimSuffix(s.Name, "._Z1kPf")] = true
			if s.Data != nil {
				t.Errorf("%s (type %#x) has %d bytes of contents, want none", s.Name, s.Type, len(s.Data))
			}
		case s.Name == ".text._Z1kPf":
			found[s.Name] = true
			if len(s.Data) == 0 {
				t.Errorf("%s has no contents", s.Name)
			}
		}
	}
	if len(found) != 3 {
		t.Errorf("found %v, want .nv.shared, .nv.global and the kernel's .text", found)
	}
	// The same types in an x86-64 object are file data: past the end of
	// the file they are an error.
	x := bytes.Clone(b)
	x[18] = 62 // EM_X86_64
	if _, err := Sections(x); err == nil {
		t.Error("an x86-64 object whose section runs past the end of the file: no error")
	}
}
