package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzImport feeds bytes to Import on a fresh cache: it never panics; when
// it fails the cache directory holds no file at all (no entry, no
// temporary) and nothing appears beside it; when it succeeds every entry
// it stored is got and its blobs verify, and nothing but entries was
// written.
func FuzzImport(f *testing.F) {
	a, _ := arCache(f)
	keys := arFill(f, a)
	all, _ := arExport(f, a, nil)
	f.Add(all)
	one, _ := arExport(f, a, keys[:1])
	f.Add(one)
	f.Add(rawArc(""))
	hostile := arHostile(f)
	for _, name := range []string{
		"traversal aa/../../x", "absolute", "not under a key dir", "shard is not the key's",
		"blob bytes changed", "index checksum wrong", "index lists a missing blob", "extra file",
		"duplicate entry", "lying size", "blobs without an index",
	} {
		f.Add(hostile[name])
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "cache")
		c := Open(Config{Dir: dir, MaxSize: DefaultMaxSize})
		n, err := arImport(c, in)
		if names, _ := os.ReadDir(parent); len(names) > 1 || len(names) == 1 && names[0].Name() != "cache" {
			t.Fatalf("the import wrote beside the cache directory: %v", names)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
			for _, f := range arFiles(t, dir) {
				if !strings.HasSuffix(f, "/") {
					t.Fatalf("failed import (%v) left %s", err, f)
				}
			}
			return
		}
		got := arEntries(t, c) // Gets every entry and reads its blobs, verified
		if len(got) != n {
			t.Fatalf("imported %d entries, the cache holds %d", n, len(got))
		}
		if l := leftovers(t, dir); len(l) != 0 {
			t.Fatalf("temporaries left: %v", l)
		}
		// What was imported exports, and the export imports.
		var out bytes.Buffer
		if m, err := c.Export(&out, nil); err != nil || m != n {
			t.Fatalf("export of the imported cache: %d, %v", m, err)
		}
		if n2, err := arImport(Open(Config{Dir: filepath.Join(parent, "again")}), out.Bytes()); err != nil || n2 != n {
			t.Fatalf("reimport of the export: %d, %v", n2, err)
		}
	})
}
