package objfile

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// archiveInputs compiles three objects in dir, with short and long (> 15
// byte) names, and returns their names and the symbols each defines.
func archiveInputs(t *testing.T, dir string) (names []string, defs map[string]string) {
	t.Helper()
	clang := llvmtest.Clang(t)
	srcs := []struct{ name, src string }{
		{"a.o", "int alpha(void){return 1;}\nint alpha_data = 5;\n"},
		{"a_rather_long_member_name.o", "int beta(void);\nint gamma_fn(void){return beta()+1;}\n__attribute__((weak)) int weak_one(void){return 2;}\n"},
		{"exactly15chars.o", "int beta(void){return 7;}\nstatic int hidden(void){return 3;}\nint use_hidden(void){return hidden();}\n"},
	}
	defs = map[string]string{
		"alpha": "a.o", "alpha_data": "a.o",
		"gamma_fn": "a_rather_long_member_name.o", "weak_one": "a_rather_long_member_name.o",
		"beta": "exactly15chars.o", "use_hidden": "exactly15chars.o",
	}
	for _, s := range srcs {
		base := strings.TrimSuffix(s.name, ".o")
		writeFile(t, filepath.Join(dir, base+".c"), []byte(s.src))
		run(t, dir, clang, "-c", base+".c", "-o", s.name)
		names = append(names, s.name)
	}
	return names, defs
}

func checkSymbolIndex(t *testing.T, a *Archive, defs map[string]string) {
	t.Helper()
	idx := a.SymbolIndex()
	if len(idx) != len(defs) {
		t.Errorf("SymbolIndex has %d symbols %v, want %d", len(idx), idx, len(defs))
	}
	for sym, member := range defs {
		i, ok := idx[sym]
		if !ok {
			t.Errorf("SymbolIndex lacks %s", sym)
			continue
		}
		if a.Members[i].Name != member {
			t.Errorf("SymbolIndex[%s] = %d (%s), want %s", sym, i, a.Members[i].Name, member)
		}
	}
}

func TestParseArchiveLLVMAr(t *testing.T) {
	ar := llvmtest.Tool(t, "llvm-ar")
	dir := t.TempDir()
	names, defs := archiveInputs(t, dir)
	for _, format := range []string{"gnu", "bsd", "gnu64"} {
		t.Run(format, func(t *testing.T) {
			lib := filepath.Join(dir, "lib-"+format+".a")
			args := append([]string{"rcs", "--format=" + format, lib}, names...)
			if format == "gnu64" {
				// llvm-ar switches to /SYM64/ above this many bytes.
				t.Setenv("SYM64_THRESHOLD", "1")
				args[1] = "--format=gnu"
			}
			run(t, dir, ar, args...)
			b := readFile(t, lib)
			if !IsArchive(b) {
				t.Fatal("IsArchive = false")
			}
			if format == "gnu64" && !bytes.Contains(b[:80], []byte("/SYM64/")) {
				t.Fatal("llvm-ar did not write a /SYM64/ symbol table")
			}
			a, err := ParseArchive(b)
			if err != nil {
				t.Fatal(err)
			}
			wantKind := map[string]symtabKind{"gnu": symtabGNU, "bsd": symtabBSD, "gnu64": symtabGNU64}[format]
			if a.symtabKind != wantKind {
				t.Errorf("symbol table kind %d, want %d", a.symtabKind, wantKind)
			}
			// Members equal what llvm-ar x extracts.
			xdir := filepath.Join(dir, "x-"+format)
			os.Mkdir(xdir, 0o755)
			run(t, xdir, ar, "x", lib)
			var got []string
			for _, m := range a.Members {
				got = append(got, m.Name)
				want := readFile(t, filepath.Join(xdir, m.Name))
				if !bytes.Equal(m.Data, want) {
					t.Errorf("member %s differs from llvm-ar x (%d vs %d bytes)", m.Name, len(m.Data), len(want))
				}
			}
			if !slices.Equal(got, names) {
				t.Errorf("members %q, want %q", got, names)
			}
			checkSymbolIndex(t, a, defs)
			// Computing from the members gives the same map.
			computed := (&Archive{Members: a.Members}).SymbolIndex()
			if !mapsEqual(computed, a.SymbolIndex()) {
				t.Errorf("computed index %v differs from archive table %v", computed, a.SymbolIndex())
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestParseArchiveGNUAr(t *testing.T) {
	llvmtest.Clang(t)
	gar := "/usr/bin/ar"
	if _, err := os.Stat(gar); err != nil {
		t.Skip("GNU ar not installed")
	}
	dir := t.TempDir()
	names, defs := archiveInputs(t, dir)
	run(t, dir, gar, append([]string{"rcsD", "lib.a"}, names...)...)
	a, err := ParseArchive(readFile(t, filepath.Join(dir, "lib.a")))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range a.Members {
		if m.Name != names[i] || !bytes.Equal(m.Data, readFile(t, filepath.Join(dir, names[i]))) {
			t.Errorf("member %d: %s", i, m.Name)
		}
	}
	checkSymbolIndex(t, a, defs)
}

func TestParseArchiveThin(t *testing.T) {
	ar := llvmtest.Tool(t, "llvm-ar")
	dir := t.TempDir()
	names, _ := archiveInputs(t, dir)
	run(t, dir, ar, append([]string{"rcs", "--thin", "thin.a"}, names...)...)
	b := readFile(t, filepath.Join(dir, "thin.a"))
	if !IsArchive(b) {
		t.Error("IsArchive(thin) = false")
	}
	if _, err := ParseArchive(b); err == nil || err.Error() != "thin archives are not supported" {
		t.Errorf("ParseArchive(thin) error = %v", err)
	}
}

func TestWriteArchive(t *testing.T) {
	ar := llvmtest.Tool(t, "llvm-ar")
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	names, defs := archiveInputs(t, dir)
	var members []Member
	for _, n := range names {
		members = append(members, Member{Name: n, Data: readFile(t, filepath.Join(dir, n))})
	}
	// A non-object member with an odd size and a name with a slash.
	members = append(members, Member{Name: "dir/notes.txt", Data: []byte("odd")})

	var buf bytes.Buffer
	if err := WriteArchive(&buf, members); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "written.a")
	writeFile(t, lib, buf.Bytes())

	var wantNames []string
	for _, m := range members {
		wantNames = append(wantNames, m.Name)
	}
	if got := strings.Fields(run(t, dir, ar, "t", lib)); !slices.Equal(got, wantNames) {
		t.Errorf("llvm-ar t = %q, want %q", got, wantNames)
	}
	if gar := "/usr/bin/ar"; fileExists(gar) {
		if got := strings.Fields(run(t, dir, gar, "t", lib)); !slices.Equal(got, wantNames) {
			t.Errorf("GNU ar t = %q, want %q", got, wantNames)
		}
	}
	// llvm-nm reads the symbol table.
	armap := run(t, dir, llvmtest.Tool(t, "llvm-nm"), "--print-armap", lib)
	for sym, m := range defs {
		if !strings.Contains(armap, sym+" in "+m) {
			t.Errorf("llvm-nm --print-armap lacks %q in %s:\n%s", sym, m, armap)
		}
	}

	// Round trip.
	a, err := ParseArchive(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Members) != len(members) {
		t.Fatalf("%d members, want %d", len(a.Members), len(members))
	}
	for i, m := range a.Members {
		if m.Name != members[i].Name || !bytes.Equal(m.Data, members[i].Data) {
			t.Errorf("member %d: %q (%d bytes), want %q (%d bytes)", i, m.Name, len(m.Data), members[i].Name, len(members[i].Data))
		}
	}
	if a.symtabKind != symtabGNU {
		t.Error("no GNU symbol table read back")
	}
	checkSymbolIndex(t, a, defs)

	// Linkers use the archive without ranlib: main needs gamma_fn, which
	// needs beta from another member.
	writeFile(t, filepath.Join(dir, "main.c"), []byte("int gamma_fn(void);\nint main(void){return gamma_fn()==8?0:1;}\n"))
	run(t, dir, clang, "-c", "main.c", "-o", "main.o")
	for _, ld := range []string{"bfd", "lld"} {
		exe := filepath.Join(dir, "main-"+ld)
		run(t, dir, clang, "-fuse-ld="+ld, "main.o", lib, "-o", exe)
		run(t, dir, exe)
	}

	// Deterministic output.
	var buf2 bytes.Buffer
	WriteArchive(&buf2, members)
	if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
		t.Error("WriteArchive is not deterministic")
	}
	for _, bad := range []Member{{Name: ""}, {Name: "a\nb"}} {
		if err := WriteArchive(&buf2, []Member{bad}); err == nil {
			t.Errorf("WriteArchive accepted name %q", bad.Name)
		}
	}
}

func TestWriteArchiveNoObjects(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteArchive(&buf, nil); err != nil || buf.String() != "!<arch>\n" {
		t.Fatalf("empty archive %q, %v", buf.String(), err)
	}
	ms := []Member{{Name: "x.txt", Data: []byte("hello")}, {Name: "a-name-longer-than-15.bin", Data: nil}}
	buf.Reset()
	if err := WriteArchive(&buf, ms); err != nil {
		t.Fatal(err)
	}
	a, err := ParseArchive(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Members) != 2 || a.Members[0].Name != "x.txt" || string(a.Members[0].Data) != "hello" ||
		a.Members[1].Name != "a-name-longer-than-15.bin" || len(a.Members[1].Data) != 0 {
		t.Errorf("round trip: %+v", a.Members)
	}
	if len(a.SymbolIndex()) != 0 {
		t.Error("symbols in an archive without objects")
	}
}

func TestParseArchiveErrors(t *testing.T) {
	good := readFile(t, "testdata/lib.a")
	if _, err := ParseArchive(good); err != nil {
		t.Fatal(err)
	}
	hdr := func(name, size string) string {
		return padRight(name, 16) + padRight("0", 12) + padRight("0", 6) + padRight("0", 6) + padRight("644", 8) + padRight(size, 10) + "`\n"
	}
	for _, c := range []struct {
		name, in, msg string
	}{
		{"magic", "hello", "not an ar archive"},
		{"truncated header", "!<arch>\nabc", "archive member header at offset 0x8: truncated"},
		{"bad size", "!<arch>\n" + hdr("a/", "1x"), "bad size field"},
		{"past end", "!<arch>\n" + hdr("a/", "100"), "runs past end of file"},
		{"fmag", "!<arch>\n" + hdr("a/", "0")[:58] + "xx", "bad terminator"},
		{"long ref without table", "!<arch>\n" + hdr("/0", "0"), "no \"//\" long-name table"},
		{"long ref past table", "!<arch>\n" + hdr("//", "4") + "ab/\n" + hdr("/9", "0"), "past end of long-name table"},
		{"symtab", "!<arch>\n" + hdr("/", "4") + "\x00\x00\x00\x09", "archive symbol table at offset 0x8"},
	} {
		_, err := ParseArchive([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.msg)
		}
	}
}

func padRight(s string, n int) string { return s + strings.Repeat(" ", n-len(s)) }

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
