package poclbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sampleArchive() *Archive {
	return &Archive{
		Version:  ArchiveVersion,
		BasePath: "kcache/LF/KKILOIDNDGMMLILKELBBFGLPCBNNGOPGKKBPB",
		Entries: []Entry{
			{Path: "program.bc", Data: []byte("BC\xc0\xde")},
			{Path: "vector_add/64-1-1/vector_add.so", Data: []byte("\x7fELF")},
			{Path: "vector_add/empty", Data: []byte{}},
			{Path: "ünïcödé/ß", Data: []byte("x")},
		},
	}
}

func marshalArchive(t testing.TB, a *Archive) []byte {
	var buf bytes.Buffer
	if err := WriteArchive(&buf, a); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawArchive builds archive bytes without any checks.
func rawArchive(base string, entries ...string) []byte {
	b := []byte("poclbin")
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(base)))
	b = append(b, base...)
	for i := 0; i+1 < len(entries); i += 2 {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(entries[i])))
		b = append(b, entries[i]...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(entries[i+1])))
		b = append(b, entries[i+1]...)
	}
	return b
}

func TestArchiveRoundTrip(t *testing.T) {
	a := sampleArchive()
	b := marshalArchive(t, a)
	want := rawArchive(a.BasePath, "program.bc", "BC\xc0\xde", "vector_add/64-1-1/vector_add.so", "\x7fELF", "vector_add/empty", "", "ünïcödé/ß", "x")
	if !bytes.Equal(b, want) {
		t.Fatalf("layout:\n got % x\nwant % x", b, want)
	}
	if !IsArchive(b) || IsProgramBinary(b) {
		t.Errorf("detection wrong")
	}
	got, err := ParseArchive(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, a)
	}
	// An archive without entries.
	e := marshalArchive(t, &Archive{})
	if len(e) != 15 {
		t.Errorf("empty archive %d bytes", len(e))
	}
	if got, err := ParseArchive(e); err != nil || len(got.Entries) != 0 || got.Version != 1 {
		t.Errorf("empty: %+v %v", got, err)
	}
}

func TestCheckPath(t *testing.T) {
	good := []string{"a", "a/b", "a.b/c..d", ".hidden", "a/.../b", "ü", "a b/c"}
	for _, p := range good {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v", p, err)
		}
	}
	bad := map[string]string{
		"":                        "empty",
		strings.Repeat("a", 4097): "longer than",
		"..":                      "'..' component",
		"a/../b":                  "'..' component",
		"a/..":                    "'..' component",
		"/etc/passwd":             "absolute",
		"C:/x":                    "drive letter",
		"c:x":                     "drive letter",
		"//server/share/x":        "UNC",
		"a\\b":                    "backslash",
		"..\\x":                   "backslash",
		"a\x00b":                  "NUL",
		"a//b":                    "empty component",
		"a/":                      "empty component",
		"./a":                     "'.' component",
		"a/./b":                   "'.' component",
		".":                       "'.' component",
		"\xff":                    "UTF-8",
	}
	for p, want := range bad {
		err := CheckPath(p)
		var pe *PathError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckPath(%.40q) = %v, want %q", p, err, want)
		}
	}
}

func TestParseArchiveRejects(t *testing.T) {
	good := rawArchive("base", "a", "1")
	le := binary.LittleEndian
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"short magic", []byte("pocl"), "missing magic"},
		{"program binary", append([]byte("poclbin\x00"), make([]byte, 80)...), "byte 7 is 0"},
		{"short header", good[:10], "truncated"},
		{"version", func() []byte { c := bytes.Clone(good); le.PutUint32(c[7:], 2); return c }(), "unsupported version 2"},
		{"base path huge", func() []byte { c := bytes.Clone(good); le.PutUint32(c[11:], 0xffffffff); return c }(), "base path at offset 0xb: length 0xffffffff exceeds the cap"},
		{"base path truncated", func() []byte { c := bytes.Clone(good); le.PutUint32(c[11:], 100); return c }(), "base path at offset 0xf: needs 0x64 bytes"},
		{"base path NUL", rawArchive("a\x00"), "NUL"},
		{"truncated path len", good[:len(good)-8], "entry 0 path length at offset 0x13: needs 0x4 bytes"},
		{"truncated path", good[:len(good)-6], "entry 0 path at offset 0x17"},
		{"truncated size", good[:len(good)-3], "entry 0 (\"a\") size at offset 0x18"},
		{"truncated data", good[:len(good)-1], "entry 0 (\"a\") data at offset 0x1c: needs 0x1 bytes, only 0x0 left"},
		{"trailing byte", append(bytes.Clone(good), 0), "entry 1 path length at offset 0x1d"},
		{"trailing 4 bytes", append(bytes.Clone(good), 1, 0, 0, 0), "entry 1 path at offset 0x21"},
		{"huge size", func() []byte { c := bytes.Clone(good); le.PutUint32(c[24:], 0xffffffff); return c }(), "size 0xffffffff exceeds the per-entry cap"},
		{"huge path len", func() []byte { c := bytes.Clone(good); le.PutUint32(c[19:], 0xffffffff); return c }(), "path length 0xffffffff exceeds the cap"},
		{"dotdot", rawArchive("", "../x", ""), "'..' component"},
		{"absolute", rawArchive("", "/x", ""), "absolute"},
		{"drive", rawArchive("", "C:x", ""), "drive letter"},
		{"unc", rawArchive("", "//h/s", ""), "UNC"},
		{"backslash", rawArchive("", "a\\b", ""), "backslash"},
		{"nul", rawArchive("", "a\x00", ""), "NUL"},
		{"empty path", rawArchive("", "", "x"), "empty"},
		{"empty component", rawArchive("", "a//b", ""), "empty component"},
		{"dot component", rawArchive("", "a/./b", ""), "'.' component"},
		{"duplicate", rawArchive("", "a/b", "1", "a/b", "1"), "entry 1 at offset 0x1b: path \"a/b\": duplicate path"},
		{"case duplicate", rawArchive("", "Dir/File.so", "1", "dir/file.SO", "1"), "duplicate of \"Dir/File.so\" when case is ignored"},
		{"unicode case duplicate", rawArchive("", "strase/k", "", "Straſe/\u212a", ""), "duplicate of \"strase/k\""},
		{"sharp s duplicate", rawArchive("", "straße", "", "STRAẞE", ""), "duplicate of \"straße\""},
		{"file then dir", rawArchive("", "a", "1", "a/b", "1"), "parent directory is the file entry \"a\""},
		{"dir then file", rawArchive("", "A/b", "1", "a", "1"), "is a file and the parent directory of \"A/b\""},
	}
	for _, c := range cases {
		_, err := ParseArchive(c.in)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: err = %v, want *FormatError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v\nwant it to contain %q", c.name, err, c.want)
		}
	}
}

func TestArchiveCaps(t *testing.T) {
	lim := limits{pathLen: 8, entries: 2, entrySize: 4, total: 6}
	cases := []struct {
		in   []byte
		want string
	}{
		{rawArchive("", "a", "1", "b", "2", "c", "3"), "more than 2 entries"},
		{rawArchive("", "a", "12345"), "per-entry cap of 0x4"},
		{rawArchive("", "a", "1234", "b", "123"), "entries total 0x7 bytes, more than the cap of 0x6"},
		{rawArchive("", "abcdefghi", ""), "exceeds the cap of 0x8"},
		{rawArchive("abcdefghi"), "base path at offset 0xb: length 0x9 exceeds the cap"},
	}
	for _, c := range cases {
		_, err := parseArchive(c.in, lim)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
	if _, err := parseArchive(rawArchive("", "a", "1234", "b", "12"), lim); err != nil {
		t.Errorf("at the caps: %v", err)
	}
}

func TestWriteArchiveRejects(t *testing.T) {
	for _, a := range []*Archive{
		nil,
		{Version: 2},
		{BasePath: "a\x00"},
		{Entries: []Entry{{Path: "../x"}}},
		{Entries: []Entry{{Path: "x"}, {Path: "X"}}},
	} {
		if err := WriteArchive(&bytes.Buffer{}, a); err == nil {
			t.Errorf("WriteArchive(%+v) succeeded", a)
		}
	}
}

func listDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case isTempName(fi.Name()):
			t.Errorf("temporary file left behind: %s", rel)
		case fi.Mode()&os.ModeSymlink != 0:
			got[rel] = "-> symlink"
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			got[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestExtract(t *testing.T) {
	dir := t.TempDir()
	a := sampleArchive()
	if err := Extract(a, dir); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, e := range a.Entries {
		want[e.Path] = string(e.Data)
	}
	if got := listDir(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("extracted %v, want %v", got, want)
	}
	if fi, err := os.Stat(filepath.Join(dir, "vector_add", "empty")); err != nil || fi.Size() != 0 || !fi.Mode().IsRegular() {
		t.Errorf("empty entry: %v %v", fi, err)
	}
	// Extracting again is fine: every file is byte-identical.
	if err := Extract(a, dir); err != nil {
		t.Errorf("second extract: %v", err)
	}
	// A differing file is refused and named, and nothing is written.
	b := sampleArchive()
	b.Entries = append([]Entry{{Path: "new/file", Data: []byte("n")}}, b.Entries...)
	b.Entries[1].Data = []byte("BC\xc0\xdf")
	err := Extract(b, dir)
	var ee *ExtractError
	if !errors.As(err, &ee) || !errors.Is(err, ErrExists) || ee.Path != "program.bc" {
		t.Errorf("differing file: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
		t.Errorf("Extract wrote before refusing: %v", err)
	}
	// Same size, different content in a later block.
	b = sampleArchive()
	b.Entries[1].Data = []byte("\x7fELG")
	if err := Extract(b, dir); !errors.Is(err, ErrExists) {
		t.Errorf("same-size differing file: %v", err)
	}
	// A directory where a file should go.
	if err := Extract(&Archive{Entries: []Entry{{Path: "vector_add", Data: nil}}}, dir); !errors.Is(err, ErrNotFile) {
		t.Errorf("directory in the way: %v", err)
	}
	// A file where a directory should go.
	if err := Extract(&Archive{Entries: []Entry{{Path: "program.bc/x", Data: nil}}}, dir); !errors.Is(err, ErrNotDir) {
		t.Errorf("file in the way: %v", err)
	}
	// Invalid archives are refused before touching the disk.
	if err := Extract(&Archive{Entries: []Entry{{Path: "../escape", Data: nil}}}, dir); err == nil {
		t.Errorf("'..' accepted")
	}
	if err := Extract(a, filepath.Join(dir, "missing")); err == nil {
		t.Errorf("missing destination accepted")
	}
}

func TestExtractSymlinks(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "in")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(dir, "file")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real/target", filepath.Join(dir, "innerfile")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"out/x", "out/deep/x", "in/x", "file", "innerfile"} {
		err := Extract(&Archive{Entries: []Entry{{Path: p, Data: []byte("pwned")}}}, dir)
		var ee *ExtractError
		if !errors.As(err, &ee) || !errors.Is(err, ErrSymlink) {
			t.Errorf("%s: err = %v, want ErrSymlink", p, err)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("wrote outside the destination: %v", ents)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "real")); len(ents) != 0 {
		t.Errorf("wrote through an inner symlink: %v", ents)
	}
	listDir(t, dir) // no temp files
}

func TestExtractNoTempOnError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	dir := t.TempDir()
	sub := filepath.Join(dir, "ro")
	if err := os.Mkdir(sub, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(sub, 0o755)
	err := Extract(&Archive{Entries: []Entry{{Path: "ok", Data: []byte("1")}, {Path: "ro/x", Data: []byte("2")}}}, dir)
	var ee *ExtractError
	if !errors.As(err, &ee) || ee.Path != "ro/x" {
		t.Errorf("err = %v", err)
	}
	os.Chmod(sub, 0o755)
	if got := listDir(t, dir); len(got) != 1 || got["ok"] != "1" {
		t.Errorf("left %v", got)
	}
}
