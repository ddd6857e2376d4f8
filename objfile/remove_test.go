package objfile

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

const bundlePrefix = "__CLANG_OFFLOAD_BUNDLE__"

func isBundleSection(name string) bool { return strings.HasPrefix(name, bundlePrefix) }

// sectionNames returns the section names of obj in header order.
func sectionNames(t *testing.T, obj []byte) []string {
	t.Helper()
	secs, err := Sections(obj)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range secs {
		names = append(names, s.Name)
	}
	return names
}

// readelfClean runs llvm-readelf on path and fails on any warning.
func readelfClean(t *testing.T, path string) {
	t.Helper()
	out, err := runErr("", llvmtest.Tool(t, "llvm-readelf"), "-S", "-s", "-r", "-g", "-W", path)
	if err != nil || strings.Contains(out, "warning") {
		t.Fatalf("llvm-readelf %s: %v\n%s", path, err, out)
	}
}

// TestAddSectionsThenRemove adds several sections in one pass, checks them
// with llvm-objcopy --dump-section, removes them again and links and runs
// the result.
func TestAddSectionsThenRemove(t *testing.T) {
	clang := llvmtest.Clang(t)
	objcopy := llvmtest.Tool(t, "llvm-objcopy")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.c"), []byte("static int x = 41; int f(void){return x;}\nint main(void){return f()==41?0:1;}\n"))
	run(t, dir, clang, "-ffunction-sections", "-c", "m.c", "-o", "m.o")
	obj := readFile(t, filepath.Join(dir, "m.o"))
	secs := []NewSection{
		{Name: bundlePrefix + "host-x86_64-unknown-linux-gnu-", Type: 1, Flags: SHFExclude, Align: 1, Data: []byte{0}},
		{Name: bundlePrefix + "openmp-nvptx64-nvidia-cuda-unknown-sm_80", Type: 1, Flags: SHFExclude, Align: 1, Data: []byte("device code")},
		{Name: ".empty", Type: 1, Data: nil},
		{Name: ".aligned", Type: 1, Align: 64, Data: bytes.Repeat([]byte{7}, 100)},
	}
	out, err := AddSections(obj, secs)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteWithSections(&buf, obj, secs); err != nil || !bytes.Equal(buf.Bytes(), out) {
		t.Fatalf("WriteWithSections differs from AddSections: %v", err)
	}
	fat := filepath.Join(dir, "fat.o")
	writeFile(t, fat, out)
	readelfClean(t, fat)
	for i, s := range secs {
		dump := filepath.Join(dir, "dump"+string(rune('0'+i)))
		run(t, dir, objcopy, "--dump-section="+s.Name+"="+dump, fat, filepath.Join(dir, "ignored.o"))
		if got := readFile(t, dump); !bytes.Equal(got, s.Data) {
			t.Errorf("section %s: %q, want %q", s.Name, got, s.Data)
		}
	}
	if line := readelfSection(t, fat, secs[1].Name); !strings.Contains(line, " E ") {
		t.Errorf("bundle section not SHF_EXCLUDE: %s", line)
	}

	host, err := RemoveSections(out, isBundleSection)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := WriteWithoutSections(&buf, out, isBundleSection); err != nil || !bytes.Equal(buf.Bytes(), host) {
		t.Fatalf("WriteWithoutSections differs from RemoveSections: %v", err)
	}
	hostPath := filepath.Join(dir, "host.o")
	writeFile(t, hostPath, host)
	readelfClean(t, hostPath)
	want := append(sectionNames(t, obj), ".empty", ".aligned")
	if got := sectionNames(t, host); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("sections after removal:\n%v\nwant\n%v", got, want)
	}
	// Same symbols and relocations as objcopy's result.
	run(t, dir, objcopy, "--regex", "--remove-section="+bundlePrefix+".*", fat, filepath.Join(dir, "objcopy.o"))
	if a, b := readelfDump(t, hostPath, "-s", "-r", "-W"), readelfDump(t, filepath.Join(dir, "objcopy.o"), "-s", "-r", "-W"); a != b {
		t.Errorf("symbols/relocations differ from llvm-objcopy's:\n%s\n---\n%s", a, b)
	}
	run(t, dir, clang, hostPath, "-o", filepath.Join(dir, "prog"))
	run(t, dir, filepath.Join(dir, "prog"))

	// Removing nothing keeps every section; removing a section that a
	// symbol lives in is an error.
	same, err := RemoveSections(obj, func(string) bool { return false })
	if err != nil || strings.Join(sectionNames(t, same), ",") != strings.Join(sectionNames(t, obj), ",") {
		t.Errorf("remove nothing: %v", err)
	}
	if _, err := RemoveSections(obj, func(n string) bool { return n == ".text.f" }); err == nil || !strings.Contains(err.Error(), "being removed") {
		t.Errorf("removing .text.f: %v", err)
	}
}

// TestRemoveSectionsOffloadObject removes the .llvm.offloading section of a
// real OpenMP object, removing its relocations too if any, and links it.
func TestRemoveSectionsOffloadObject(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	_, host := offloadObjects(t, dir)
	obj := readFile(t, host)
	fat, err := AddSections(obj, []NewSection{{Name: bundlePrefix + "openmp-x", Type: 1, Flags: SHFExclude, Data: []byte("abc")}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := RemoveSections(fat, isBundleSection)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "out.o")
	writeFile(t, p, out)
	readelfClean(t, p)
	if a, b := readelfDump(t, p, "-s", "-r", "-g", "-W"), readelfDump(t, host, "-s", "-r", "-g", "-W"); strings.ReplaceAll(a, p, "") != strings.ReplaceAll(b, host, "") {
		t.Errorf("symbols/relocations/groups changed:\n%s\n---\n%s", a, b)
	}
	_ = clang
}

// TestRemoveSectionsComdat checks group renumbering on a C++ object with
// COMDAT groups and links and runs the result.
func TestRemoveSectionsComdat(t *testing.T) {
	clangxx := llvmtest.Tool(t, "clang++")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.cc"), []byte("template<class T> T g(T x){return x+1;}\ninline int h(int x){return g(x)*2;}\nint main(){return h(20)==42?0:1;}\n"))
	run(t, dir, clangxx, "-c", "c.cc", "-o", "c.o")
	obj := readFile(t, filepath.Join(dir, "c.o"))
	// Put bundle sections first so that every later index shifts.
	fat, err := AddSections(obj, []NewSection{{Name: bundlePrefix + "host-x", Type: 1, Flags: SHFExclude, Data: []byte{0}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := RemoveSections(fat, func(n string) bool { return isBundleSection(n) || n == ".comment" })
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "out.o")
	writeFile(t, p, out)
	readelfClean(t, p)
	run(t, dir, clangxx, p, "-o", filepath.Join(dir, "prog"))
	run(t, dir, filepath.Join(dir, "prog"))
}

func TestRemoveSectionsErrors(t *testing.T) {
	obj := readFile(t, filepath.Join("testdata", "small.o"))
	f, _ := parseELF(obj)
	strName := sectionNames(t, obj)[f.shstrndx-1]
	if _, err := RemoveSections(obj, func(n string) bool { return n == strName }); err == nil {
		t.Error("removed the section name string table")
	}
	if _, err := RemoveSections([]byte("junk"), isBundleSection); err == nil {
		t.Error("accepted junk")
	}
}
