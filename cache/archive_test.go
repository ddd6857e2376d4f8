package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/offcc/offcc/poclbin"
)

// arCache returns a cache in a fresh directory dir (not created) under a
// fresh parent.
func arCache(t testing.TB) (*Cache, string) {
	t.Helper()
	parent := t.TempDir()
	dir := filepath.Join(parent, "cache")
	return Open(Config{Dir: dir, MaxSize: DefaultMaxSize}), parent
}

// arPut puts an entry whose blobs hold the given bytes (named out0, ...).
func arPut(t testing.TB, c *Cache, key Sum, kind Kind, rec string, blobs ...string) {
	t.Helper()
	src := t.TempDir()
	e := &Entry{Kind: kind, Record: []byte(rec)}
	for i, data := range blobs {
		name := fmt.Sprintf("out%d", i)
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		mode := uint32(0o666)
		if i == 1 {
			mode = 0o777
		}
		e.Blobs = append(e.Blobs, Blob{Name: name, Size: int64(len(data)), Sum: SumBytes([]byte(data)), Mode: mode, Path: p})
	}
	if err := c.Store.Put(key, e); err != nil {
		t.Fatal(err)
	}
}

// arImport imports data into c trusting the archive (the signature
// checks have tests of their own: sign_test.go), and returns the number of
// entries imported.
func arImport(c *Cache, data []byte) (int, error) {
	r, err := c.Import(data, ImportOptions{TrustArchive: true})
	return r.Imported, err
}

// arImportable returns the entries of m that Import takes (all but plans
// and machine-local kinds).
func arImportable(m map[Sum]arEntry) map[Sum]arEntry {
	out := map[Sum]arEntry{}
	for k, e := range m {
		if neverImported(e.kind) == "" {
			out[k] = e
		}
	}
	return out
}

func arKey(name string) Sum { return SumBytes([]byte("archive test key " + name)) }

// arFill puts a few entries of every shape into c and returns their keys.
func arFill(t testing.TB, c *Cache) []Sum {
	t.Helper()
	keys := []Sum{arKey("result"), arKey("manifest"), arKey("plan"), arKey("tool"), arKey("empty blob")}
	arPut(t, c, keys[0], KindResult, `{"kind":"compile","ms":12}`, strings.Repeat("object ", 500), "\x7fELF exe")
	arPut(t, c, keys[1], KindManifest, `{"candidates":[]}`)
	arPut(t, c, keys[2], KindPlan, "plan naming /tmp/\xe9t\xe9.c\n")
	arPut(t, c, keys[3], KindDerived, strings.Repeat("ab", 32))
	arPut(t, c, keys[4], KindResult, `{"kind":"compile"}`, "")
	return keys
}

// arExport exports keys (nil: all) from c.
func arExport(t testing.TB, c *Cache, keys []Sum) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	n, err := c.Export(&buf, keys)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), n
}

// arEntries returns the entries of a cache by key, blobs read and
// verified.
type arEntry struct {
	kind   Kind
	record string
	blobs  []string
	modes  []uint32
}

func arEntries(t testing.TB, c *Cache) map[Sum]arEntry {
	t.Helper()
	got := map[Sum]arEntry{}
	err := c.Store.Walk(func(key Sum, _ *Entry) error {
		e, err := c.Store.Get(key)
		if err != nil {
			return fmt.Errorf("%s: Walk lists it, Get: %v", key, err)
		}
		ae := arEntry{kind: e.Kind, record: string(e.Record)}
		for _, b := range e.Blobs {
			data, err := readAllBlob(c.Store, b)
			if err != nil {
				return fmt.Errorf("%s: blob %s: %v", key, b.Name, err)
			}
			ae.blobs = append(ae.blobs, string(data))
			ae.modes = append(ae.modes, b.Mode)
		}
		got[key] = ae
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func readAllBlob(s Store, b Blob) ([]byte, error) {
	r, err := s.OpenBlob(b)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// arFiles lists every path under dir (relative, with a trailing / for
// directories and -> for links), "" for an absent dir.
func arFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			rel += " -> " + target
		case d.IsDir():
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// arNoFiles fails unless dir holds no file (empty directories are
// allowed): no entry, no temporary.
func arNoFiles(t testing.TB, dir string) {
	t.Helper()
	for _, f := range arFiles(t, dir) {
		if !strings.HasSuffix(f, "/") {
			t.Errorf("%s: left %s", dir, f)
		}
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	a, _ := arCache(t)
	keys := arFill(t, a)
	want := arEntries(t, a)
	if len(want) != len(keys) {
		t.Fatalf("%d entries, want %d", len(want), len(keys))
	}
	data, n := arExport(t, a, nil)
	if n != len(keys) {
		t.Errorf("Export: %d entries, want %d", n, len(keys))
	}

	// The stream is a poclbin archive, byte for byte what WriteArchive
	// writes, of exactly the entries' files.
	arc, err := poclbin.ParseArchive(data)
	if err != nil {
		t.Fatal(err)
	}
	if arc.BasePath != ArchiveBasePath {
		t.Errorf("base path %q", arc.BasePath)
	}
	var again bytes.Buffer
	if err := poclbin.WriteArchive(&again, arc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), data) {
		t.Errorf("WriteArchive(ParseArchive(export)) differs from the export")
	}
	var paths []string
	for _, e := range arc.Entries {
		paths = append(paths, e.Path)
	}
	var wantPaths []string
	for _, k := range keys {
		d := entryRelDir(k)
		wantPaths = append(wantPaths, d+"/index")
		for i := range want[k].blobs {
			wantPaths = append(wantPaths, fmt.Sprintf("%s/out%d", d, i))
		}
	}
	sort.Strings(paths)
	sort.Strings(wantPaths)
	if fmt.Sprint(paths) != fmt.Sprint(wantPaths) {
		t.Errorf("archive paths:\n got %q\nwant %q", paths, wantPaths)
	}

	// The plan is not imported.
	want = arImportable(want)
	if len(want) != len(keys)-1 {
		t.Fatalf("%d importable entries, want %d", len(want), len(keys)-1)
	}
	b, parent := arCache(t)
	n, err = arImport(b, data)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Errorf("Import: %d entries, want %d", n, len(want))
	}
	got := arEntries(t, b)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("imported entries:\n got %v\nwant %v", got, want)
	}
	if l := leftovers(t, b.Dir); len(l) != 0 {
		t.Errorf("temporaries left: %v", l)
	}
	if f := arFiles(t, parent); len(f) != 1+len(arFiles(t, b.Dir)) {
		t.Errorf("files outside the cache directory: %v", f)
	}

	// Again: every entry is there already, kept and counted.
	if n, err := arImport(b, data); err != nil || n != len(want) {
		t.Errorf("second Import: %d, %v", n, err)
	}
	if got := arEntries(t, b); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries after the second import differ")
	}
	if l := leftovers(t, b.Dir); len(l) != 0 {
		t.Errorf("temporaries left: %v", l)
	}

	// An empty cache exports an empty archive, which imports.
	e, _ := arCache(t)
	empty, n := arExport(t, e, nil)
	if n != 0 {
		t.Errorf("empty cache exported %d", n)
	}
	if n, err := arImport(b, empty); err != nil || n != 0 {
		t.Errorf("import of an empty archive: %d, %v", n, err)
	}
	if _, err := os.Stat(e.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("export created the cache directory: %v", err)
	}
}

func TestExportKeys(t *testing.T) {
	a, _ := arCache(t)
	keys := arFill(t, a)
	data, n := arExport(t, a, []Sum{keys[0], keys[3], keys[0]})
	if n != 2 {
		t.Errorf("exported %d, want 2 (a key listed twice is exported once)", n)
	}
	b, _ := arCache(t)
	if _, err := arImport(b, data); err != nil {
		t.Fatal(err)
	}
	got := arEntries(t, b)
	if len(got) != 2 || got[keys[0]].kind != KindResult || got[keys[3]].kind != KindDerived {
		t.Errorf("imported %v", got)
	}

	// An empty list exports nothing.
	if _, n := arExport(t, a, []Sum{}); n != 0 {
		t.Errorf("empty key list exported %d", n)
	}

	// A key without an entry is an error naming it, and nothing is
	// written.
	missing := arKey("missing")
	var buf bytes.Buffer
	if _, err := a.Export(&buf, []Sum{keys[0], missing}); err == nil || !strings.Contains(err.Error(), missing.String()) {
		t.Errorf("export of a missing key: %v", err)
	}
	if buf.Len() != 0 {
		t.Errorf("export of a missing key wrote %d bytes", buf.Len())
	}

	// A damaged blob: an error for the key, skipped by an export of all.
	blob := filepath.Join(a.Store.EntryDir(keys[0]), "out0")
	raw, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	raw[10] ^= 1
	if err := os.WriteFile(blob, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Export(io.Discard, []Sum{keys[0]}); err == nil || !strings.Contains(err.Error(), keys[0].String()) || !errors.Is(err, ErrCorrupt) && !strings.Contains(err.Error(), ErrCorrupt.Error()) {
		t.Errorf("export of a damaged entry: %v", err)
	}
	data, n = arExport(t, a, nil)
	if n != len(keys)-1 {
		t.Errorf("export of all with one damaged: %d entries, want %d", n, len(keys)-1)
	}
	c, _ := arCache(t)
	if _, err := arImport(c, data); err != nil {
		t.Fatal(err)
	}
	if got := arEntries(t, c); len(got) != len(keys)-2 { // the plan is not imported
		t.Errorf("imported %d entries", len(got))
	} else if _, ok := got[keys[0]]; ok {
		t.Errorf("the damaged entry was exported")
	}

	// Blob names that clash when case is ignored cannot be in an
	// archive: an error for the key, skipped by an export of all.
	clash := arKey("clash")
	src := t.TempDir()
	e := &Entry{Kind: KindResult}
	for _, name := range []string{"out0", "OUT0"} {
		p := filepath.Join(src, name+"-file")
		os.WriteFile(p, []byte(name), 0o644)
		e.Blobs = append(e.Blobs, Blob{Name: name, Size: 4, Sum: SumBytes([]byte(name)), Path: p})
	}
	if err := a.Store.Put(clash, e); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Export(io.Discard, []Sum{clash}); err == nil || !strings.Contains(err.Error(), "case") {
		t.Errorf("export of clashing names: %v", err)
	}
	if _, n := arExport(t, a, nil); n != len(keys)-1 {
		t.Errorf("export of all with a clash: %d", n)
	}
}

// rawArc builds archive bytes without any checks: base, then path, data
// pairs.
func rawArc(base string, entries ...string) []byte {
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

// arHostile returns hostile archives by name, built from a sound export
// of a result entry with two blobs and a plan entry.
func arHostile(t testing.TB) map[string][]byte {
	t.Helper()
	a, _ := arCache(t)
	rk, pk := arKey("result"), arKey("plan")
	arPut(t, a, rk, KindResult, `{"kind":"compile"}`, "object bytes", "more bytes")
	arPut(t, a, pk, KindPlan, "plan")
	good, _ := arExport(t, a, nil)
	arc, err := poclbin.ParseArchive(good)
	if err != nil {
		t.Fatal(err)
	}
	rdir, pdir := entryRelDir(rk), entryRelDir(pk)
	find := func(p string) []byte {
		for _, e := range arc.Entries {
			if e.Path == p {
				return e.Data
			}
		}
		t.Fatalf("no %s in the export", p)
		return nil
	}
	rindex, out0, out1 := find(rdir+"/index"), find(rdir+"/out0"), find(rdir+"/out1")
	pindex := find(pdir + "/index")
	// build writes an archive of path, data pairs with WriteArchive
	// (which checks only the poclbin rules).
	build := func(pairs ...any) []byte {
		var x poclbin.Archive
		for i := 0; i < len(pairs); i += 2 {
			d, _ := pairs[i+1].([]byte)
			if s, ok := pairs[i+1].(string); ok {
				d = []byte(s)
			}
			x.Entries = append(x.Entries, poclbin.Entry{Path: pairs[i].(string), Data: d})
		}
		var buf bytes.Buffer
		if err := poclbin.WriteArchive(&buf, &x); err != nil {
			t.Fatalf("WriteArchive: %v", err)
		}
		return buf.Bytes()
	}
	// sound is the whole good archive's pairs, then extra ones.
	sound := func(extra ...any) []any {
		return append([]any{rdir + "/index", rindex, rdir + "/out0", out0, rdir + "/out1", out1, pdir + "/index", pindex}, extra...)
	}
	reindex := func(e *Entry) []byte { return EncodeIndex(e) }
	re, err := DecodeIndex(rindex)
	if err != nil {
		t.Fatal(err)
	}
	other := SumBytes([]byte("another key")).String()
	badSum := bytes.Clone(rindex)
	badSum[len(indexMagic)+3] ^= 1
	badBody := bytes.Clone(rindex)
	badBody[len(badBody)-3] ^= 1
	listsMissing := *re
	listsMissing.Blobs = append(append([]Blob(nil), re.Blobs...), Blob{Name: "out2", Size: 1, Sum: SumBytes([]byte("x"))})
	unknownKind := *re
	unknownKind.Kind = "program"
	flipped := bytes.Clone(out0)
	flipped[0] ^= 1
	upper := strings.ToUpper(rk.String())

	many := rawArc("")
	for i := 0; i <= poclbin.MaxEntries; i++ {
		p := fmt.Sprintf("e%d", i)
		many = binary.LittleEndian.AppendUint32(many, uint32(len(p)))
		many = append(many, p...)
		many = binary.LittleEndian.AppendUint32(many, 0)
	}
	lying := rawArc("", rdir+"/index", string(rindex))
	binary.LittleEndian.PutUint32(lying[len(lying)-len(rindex)-4:], uint32(len(rindex)+100))
	huge := rawArc("", rdir+"/index", "")
	binary.LittleEndian.PutUint32(huge[len(huge)-4:], 0xffffffff)

	return map[string][]byte{
		"traversal ../x":              rawArc("", "../x", "evil"),
		"traversal aa/../../x":        rawArc("", "aa/../../x", "evil"),
		"traversal in a key dir":      rawArc("", rdir+"/../../../x", "evil"),
		"absolute":                    rawArc("", "/tmp/x", "evil"),
		"absolute key dir":            rawArc("", "/"+rdir+"/index", string(rindex)),
		"drive letter":                rawArc("", "C:/x", "evil"),
		"backslash":                   rawArc("", rdir+"\\index", string(rindex)),
		"not under a key dir":         build(sound("ab/index", "x")...),
		"top-level file":              build(sound("index", "x")...),
		"too deep":                    build(sound(rdir+"/sub/out0", out0)...),
		"shard is not the key's":      build(rk.String()[:1]+"z/"+rk.String()+"/index", rindex, rk.String()[:1]+"z/"+rk.String()+"/out0", out0, rk.String()[:1]+"z/"+rk.String()+"/out1", out1),
		"other key's shard":           build(other[:2]+"/"+rk.String()+"/index", rindex),
		"upper-case key":              build(upper[:2]+"/"+upper+"/index", rindex),
		"short key":                   build(rk.String()[:2]+"/"+rk.String()[:63]+"/index", rindex),
		"hidden blob name":            build(sound(rdir+"/.out2", "x")...),
		"blob bytes changed":          build(rdir+"/index", rindex, rdir+"/out0", flipped, rdir+"/out1", out1),
		"blob swapped":                build(rdir+"/index", rindex, rdir+"/out0", out1, rdir+"/out1", out0),
		"blob truncated":              build(rdir+"/index", rindex, rdir+"/out0", out0[:len(out0)-1], rdir+"/out1", out1),
		"blob extended":               build(rdir+"/index", rindex, rdir+"/out0", append(bytes.Clone(out0), '!'), rdir+"/out1", out1),
		"index checksum wrong":        build(rdir+"/index", badSum, rdir+"/out0", out0, rdir+"/out1", out1),
		"index body changed":          build(rdir+"/index", badBody, rdir+"/out0", out0, rdir+"/out1", out1),
		"index not an index":          build(rdir+"/index", "hello\n{}", rdir+"/out0", out0, rdir+"/out1", out1),
		"index of an unknown kind":    build(rdir+"/index", reindex(&unknownKind), rdir+"/out0", out0, rdir+"/out1", out1),
		"index lists a missing blob":  build(rdir+"/index", reindex(&listsMissing), rdir+"/out0", out0, rdir+"/out1", out1),
		"blob missing":                build(rdir+"/index", rindex, rdir+"/out0", out0),
		"extra file":                  build(sound(rdir+"/out2", "x")...),
		"extra file in another entry": build(sound(pdir+"/out0", "x")...),
		"blobs without an index":      build(pdir+"/index", pindex, rdir+"/out0", out0, rdir+"/out1", out1),
		"duplicate entry":             rawArc("", rdir+"/index", string(rindex), rdir+"/out0", string(out0), rdir+"/out0", string(out0), rdir+"/out1", string(out1)),
		"duplicate when case folds":   rawArc("", rdir+"/index", string(rindex), rdir+"/out0", string(out0), rdir+"/OUT0", string(out0), rdir+"/out1", string(out1)),
		"index is a directory":        rawArc("", rdir+"/index", string(rindex), rdir+"/index/x", "", rdir+"/out0", string(out0), rdir+"/out1", string(out1)),
		"lying size":                  lying,
		"huge size":                   huge,
		"huge entry count":            many,
		"trailing bytes":              append(bytes.Clone(good), 1, 2, 3),
		"truncated":                   good[:len(good)-1],
		"program binary":              append([]byte("poclbin\x00"), good[8:]...),
		"version 2":                   append(append([]byte("poclbin"), 2, 0, 0, 0), good[11:]...),
		"no magic":                    []byte("not an archive"),
		"empty":                       nil,
	}
}

// arHostileWhy is what each hostile archive's error says.
var arHostileWhy = map[string]string{
	"traversal ../x":              "'..' component",
	"traversal aa/../../x":        "'..' component",
	"traversal in a key dir":      "'..' component",
	"absolute":                    "absolute",
	"absolute key dir":            "absolute",
	"drive letter":                "drive letter",
	"backslash":                   "backslash",
	"not under a key dir":         "not of the form xx/<key>/<file>",
	"top-level file":              "not of the form xx/<key>/<file>",
	"too deep":                    "not of the form xx/<key>/<file>",
	"shard is not the key's":      "is not the key's first two digits",
	"other key's shard":           "is not the key's first two digits",
	"upper-case key":              "upper-case hex",
	"short key":                   "want 64 hex digits",
	"hidden blob name":            "not an index or a valid blob name",
	"blob bytes changed":          "do not match the index's SHA-256",
	"blob swapped":                "bytes, the index says",
	"blob truncated":              "bytes, the index says",
	"blob extended":               "bytes, the index says",
	"index checksum wrong":        "checksum mismatch",
	"index body changed":          "checksum mismatch",
	"index not an index":          "not an offcc cache index",
	"index of an unknown kind":    "unknown entry kind",
	"index lists a missing blob":  "listed in the index but missing from the archive",
	"blob missing":                "listed in the index but missing from the archive",
	"extra file":                  "not listed in the key's index",
	"extra file in another entry": "not listed in the key's index",
	"blobs without an index":      "index\": missing",
	"duplicate entry":             "duplicate path",
	"duplicate when case folds":   "when case is ignored",
	"index is a directory":        "a parent directory is the file entry",
	"lying size":                  "needs 0x",
	"huge size":                   "exceeds the per-entry cap",
	"huge entry count":            "more than 65536 entries",
	"trailing bytes":              "needs 0x",
	"truncated":                   "needs 0x",
	"program binary":              "pocl program binary",
	"version 2":                   "unsupported version 2",
	"no magic":                    "missing magic",
	"empty":                       "missing magic",
}

func TestImportRefusesHostileArchives(t *testing.T) {
	hostile := arHostile(t)
	if len(hostile) != len(arHostileWhy) {
		t.Errorf("%d hostile archives, %d reasons", len(hostile), len(arHostileWhy))
	}
	for name, data := range hostile {
		t.Run(name, func(t *testing.T) {
			c, parent := arCache(t)
			// A sibling of the cache directory, where an escaping
			// path would land.
			sibling := filepath.Join(parent, "elsewhere")
			if err := os.Mkdir(sibling, 0o777); err != nil {
				t.Fatal(err)
			}
			before := arFiles(t, parent)
			n, err := arImport(c, data)
			if err == nil {
				t.Fatalf("imported %d entries", n)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "cache import: ") {
				t.Errorf("error not one line starting \"cache import: \": %q", msg)
			}
			if why := arHostileWhy[name]; why == "" || !strings.Contains(msg, why) {
				t.Errorf("error %q does not say %q", msg, why)
			}
			if after := arFiles(t, parent); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the import changed the files:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}

// TestImportAllOrNothing: one bad entry among good ones stores none,
// in an empty cache or a cache with entries of its own.
func TestImportAllOrNothing(t *testing.T) {
	a, _ := arCache(t)
	keys := arFill(t, a)
	data, _ := arExport(t, a, nil)
	arc, err := poclbin.ParseArchive(data)
	if err != nil {
		t.Fatal(err)
	}
	// Damage the last blob of the archive (the sorted keys' last entry
	// with blobs).
	last := -1
	for i, e := range arc.Entries {
		if !strings.HasSuffix(e.Path, "/index") && len(e.Data) > 0 {
			last = i
		}
	}
	arc.Entries[last].Data = append(bytes.Clone(arc.Entries[last].Data), 'x')
	var buf bytes.Buffer
	if err := poclbin.WriteArchive(&buf, arc); err != nil {
		t.Fatal(err)
	}
	b, _ := arCache(t)
	own := arKey("own")
	arPut(t, b, own, KindResult, "{}", "mine")
	before := arFiles(t, b.Dir)
	if _, err := arImport(b, buf.Bytes()); err == nil || !strings.Contains(err.Error(), arc.Entries[last].Path) {
		t.Fatalf("import with one damaged blob: %v", err)
	}
	if after := arFiles(t, b.Dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("files changed:\nbefore %q\nafter  %q", before, after)
	}
	if got := arEntries(t, b); len(got) != 1 || got[own].blobs[0] != "mine" {
		t.Errorf("entries %v", got)
	}

	// A write failing midway removes the entries the import created,
	// and keeps those that were there.
	arPut(t, b, keys[0], KindResult, `{"kind":"compile","ms":12}`, strings.Repeat("object ", 500), "\x7fELF exe")
	fail := keys[3]
	importFault = func(k Sum) error {
		if k == fail {
			return errors.New("disk full")
		}
		return nil
	}
	defer func() { importFault = nil }()
	_, err = arImport(b, data)
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), entryRelDir(fail)) {
		t.Fatalf("import with a failing write: %v", err)
	}
	got := arEntries(t, b)
	if len(got) != 2 || got[own].kind == "" || got[keys[0]].kind == "" {
		t.Errorf("after a failed import: %d entries, want the 2 that were there", len(got))
	}
	if l := leftovers(t, b.Dir); len(l) != 0 {
		t.Errorf("temporaries left: %v", l)
	}
}

// TestImportSymlinks: a shard or entry directory that is a symbolic link
// (planted to reach outside the cache) refuses the import, which writes
// nothing, neither through it nor elsewhere; a cache directory that is
// itself a link (the user's choice) is used.
func TestImportSymlinks(t *testing.T) {
	a, _ := arCache(t)
	keys := arFill(t, a)
	data, _ := arExport(t, a, nil)
	k := keys[0].String()

	for _, where := range []string{"shard", "entry", "shard file"} {
		t.Run(where, func(t *testing.T) {
			c, parent := arCache(t)
			outside := filepath.Join(parent, "outside")
			if err := os.MkdirAll(outside, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(c.Dir, k[:2]), 0o777); err != nil {
				t.Fatal(err)
			}
			var link string
			switch where {
			case "shard":
				os.Remove(filepath.Join(c.Dir, k[:2]))
				link = filepath.Join(c.Dir, k[:2])
				if err := os.Symlink(outside, link); err != nil {
					t.Fatal(err)
				}
			case "entry":
				link = filepath.Join(c.Dir, k[:2], k)
				if err := os.Symlink(outside, link); err != nil {
					t.Fatal(err)
				}
			case "shard file":
				os.Remove(filepath.Join(c.Dir, k[:2]))
				link = filepath.Join(c.Dir, k[:2])
				if err := os.WriteFile(link, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := arFiles(t, parent)
			_, err := arImport(c, data)
			if err == nil || !strings.Contains(err.Error(), link) {
				t.Fatalf("import through a planted %s: %v", where, err)
			}
			if after := arFiles(t, parent); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the import changed the files:\nbefore %q\nafter  %q", before, after)
			}
		})
	}

	t.Run("cache dir is a link", func(t *testing.T) {
		_, parent := arCache(t)
		real := filepath.Join(parent, "real")
		os.Mkdir(real, 0o777)
		link := filepath.Join(parent, "link")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		c := Open(Config{Dir: link, MaxSize: DefaultMaxSize})
		if n, err := arImport(c, data); err != nil || n != len(keys)-1 {
			t.Fatalf("import into a linked cache directory: %d, %v", n, err)
		}
		if len(arEntries(t, Open(Config{Dir: real}))) != len(keys)-1 {
			t.Errorf("entries missing")
		}
	})
}

func TestClear(t *testing.T) {
	c, parent := arCache(t)
	keys := arFill(t, c)
	// A damaged entry, a temporary, trash, statistics, the trim marker,
	// a file of the user's, and links to outside.
	damaged := arKey("damaged")
	arPut(t, c, damaged, KindResult, "{}", "x")
	os.Remove(filepath.Join(c.Store.EntryDir(damaged), "index"))
	shard := filepath.Dir(c.Store.EntryDir(keys[0]))
	os.Mkdir(filepath.Join(shard, tmpPrefix+"abc"), 0o777)
	os.WriteFile(filepath.Join(shard, tmpPrefix+"abc", "out0"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(shard, trashPrefix+"abc"), 0o777)
	c.addStats(Stats{Kinds: map[string]*KindStats{"compile": {Hits: 3}}})
	os.WriteFile(filepath.Join(c.Dir, trimMarker), []byte("1\n"), 0o644)
	os.WriteFile(filepath.Join(c.Dir, "README"), []byte("mine"), 0o644)
	outside := filepath.Join(parent, "outside")
	os.MkdirAll(filepath.Join(outside, "keep"), 0o777)
	os.WriteFile(filepath.Join(outside, "keep", "index"), []byte("precious"), 0o644)
	linkKey := arKey("link")
	lk := linkKey.String()
	os.MkdirAll(filepath.Join(c.Dir, lk[:2]), 0o777)
	if err := os.Symlink(filepath.Join(outside, "keep"), filepath.Join(c.Dir, lk[:2], lk)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(c.Dir, "fe")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(outside, "keep"), filepath.Join(shard, tmpPrefix+"link"))
	outsideBefore := arFiles(t, outside)

	res, err := c.Clear()
	if err != nil {
		t.Fatal(err)
	}
	if res.Entries != int64(len(keys))+2 || res.Temporaries != 3 {
		t.Errorf("Clear: %+v, want %d entries and 3 temporaries", res, len(keys)+2)
	}
	if got := arEntries(t, c); len(got) != 0 {
		t.Errorf("%d entries left", len(got))
	}
	if st := c.ReadStats(); len(st.Kinds) != 0 {
		t.Errorf("statistics left: %v", st.Kinds)
	}
	var files []string
	for _, f := range arFiles(t, c.Dir) {
		if !strings.HasSuffix(f, "/") && !strings.HasSuffix(f, ".lock") {
			files = append(files, f)
		}
	}
	if fmt.Sprint(files) != fmt.Sprint([]string{"README", "fe -> " + outside, "stats/zeroed"}) {
		t.Errorf("left in the cache directory: %q", files)
	}
	if after := arFiles(t, outside); fmt.Sprint(after) != fmt.Sprint(outsideBefore) {
		t.Errorf("outside changed:\nbefore %q\nafter  %q", outsideBefore, after)
	}
	// An absent cache directory clears without error, creating nothing.
	e, _ := arCache(t)
	if _, err := e.Clear(); err != nil {
		t.Errorf("Clear of an absent cache: %v", err)
	}
	if _, err := os.Stat(e.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Clear created the directory")
	}
}

// TestExportAllSkipsMachineLocal: export --all leaves out tool digests
// (memoised by this machine's inodes) and last-stored key texts (its
// paths); named keys are exported whatever their kind.
func TestExportAllSkipsMachineLocal(t *testing.T) {
	c := Open(Config{Dir: t.TempDir(), MaxSize: DefaultMaxSize})
	keep, tool, last := arKey("keep"), arKey("tool"), arKey("last")
	arPut(t, c, keep, KindPlan, "plan")
	arPut(t, c, tool, KindTool, "sha256="+strings.Repeat("ab", 32))
	arPut(t, c, last, KindLast, `{"text":"cwd /home/someone/secret"}`)
	if _, n := arExport(t, c, nil); n != 1 {
		t.Errorf("export --all: %d entries, want 1 (the plan)", n)
	}
	if _, n := arExport(t, c, []Sum{tool, last}); n != 2 {
		t.Errorf("export of named keys: %d entries, want 2", n)
	}
}
