package cache

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDigestMemo: a settled file's digest taken by one build is what the
// next build gets without reading the file; a file edited since (same
// size, its modification time put back: only ctime tells) is hashed
// again; a file that had not settled is never kept; files in the build's
// temporary directory and relative names are never kept.
func TestDigestMemo(t *testing.T) {
	dir := t.TempDir()
	store := NewDirStore(filepath.Join(dir, "cache"))
	h := filepath.Join(dir, "inc", "h.h")
	if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h, []byte("#define V 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	temp := filepath.Join(dir, "tmp")
	build := func(clock time.Time) *fileDigests {
		d := newFileDigests(temp, newDigestMemo(store, true))
		d.now = func() time.Time { return clock }
		return d
	}
	now := time.Now()

	// Not settled when hashed: not kept.
	d := build(now)
	if fi := d.get(h); fi.err != nil || fi.settled {
		t.Fatalf("a file written now: err %v, settled %v", fi.err, fi.settled)
	}
	d.memo.flush()
	if fi := build(now).memo.lookup(h); fi != nil {
		t.Fatalf("an unsettled file's digest was kept")
	}

	// Settled: kept, and the next build's lookup needs no read.
	later := now.Add(2 * trustStatAge)
	d = build(later)
	want := d.get(h)
	d.memo.flush()
	got := build(later).memo.lookup(h)
	if got == nil || got.sum != want.sum || got.sum != SumBytes([]byte("#define V 1\n")) || !got.settled {
		t.Fatalf("the next build's lookup: %+v, want the digest of the file", got)
	}
	// (Proof that the memo answers, not the file: a forged entry with the
	// file's stat is believed.)
	forged := map[string]memoRecord{"h.h": {stat: got.stat, sum: SumBytes([]byte("forged"))}}
	store.Replace(memoKey(filepath.Dir(h)+"/"), &Entry{Kind: KindDigests, Record: encodeDigests(forged)})
	if fi := build(later).get(h); fi.sum != SumBytes([]byte("forged")) {
		t.Fatalf("the memo was not used: the file was read")
	}

	// Edited: same size, old mtime; ctime differs, so it is hashed.
	st, _ := os.Stat(h)
	if err := os.WriteFile(h, []byte("#define V 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(h, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if fi := build(later).get(h); fi.sum != SumBytes([]byte("#define V 2\n")) {
		t.Errorf("an edited file got its old digest from the memo")
	}

	// Never kept: the temporary directory, relative names.
	if memoable(filepath.Join(temp, "reg.s"), []byte(temp+"/")) || memoable("inc/h.h", []byte(temp+"/")) || memoable(dir+"/inc/../inc/h.h", []byte(temp+"/")) {
		t.Errorf("memoable accepts a temporary, relative or unclean name")
	}
}

// TestDigestMemoDamaged: an entry that does not decode is no digest.
func TestDigestMemoDamaged(t *testing.T) {
	for _, rec := range []string{
		"h.h 1 2 3 4 5 0 " + SumBytes(nil).String() + "\n",                                                       // no NUL
		"h.h\x001 2 3 4 5 0 " + SumBytes(nil).String(),                                                           // no newline
		"a/b\x001 2 3 4 5 0 " + SumBytes(nil).String() + "\n",                                                    // a slash
		"h.h\x001 2 3 4 5 4 " + SumBytes(nil).String() + "\n",                                                    // flags
		"h.h\x00-1 2 3 4 5 0 " + SumBytes(nil).String() + "\n",                                                   // size
		"h.h\x001 2 3 4 5 0 abc\n",                                                                               // digest
		"h.h\x001 2 3 4 5 0 " + SumBytes(nil).String() + " extra\n",                                              // fields
		"h.h\x001 2 3 4 5 0 " + SumBytes(nil).String() + "\nh.h\x001 2 3 4 5 0 " + SumBytes(nil).String() + "\n", // twice
	} {
		if _, ok := decodeDigests([]byte(rec)); ok {
			t.Errorf("decodeDigests(%q) accepted", rec)
		}
	}
}

// FuzzDecodeDigests: decodeDigests never panics, and what it accepts
// encodes back to a record that decodes to the same files.
func FuzzDecodeDigests(f *testing.F) {
	f.Add(encodeDigests(map[string]memoRecord{"a.h": {stat: FileStat{Size: 3, Mtime: 1, Ctime: 2, Dev: 1 << 63, Ino: 9}, timeMacros: true}}))
	f.Add([]byte("x\x001 2 3 4 5 0 " + SumBytes(nil).String() + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, ok := decodeDigests(data)
		if !ok {
			return
		}
		again, ok := decodeDigests(encodeDigests(files))
		if !ok || len(again) != len(files) {
			t.Fatalf("re-encoded record: ok %v, %d files, want %d", ok, len(again), len(files))
		}
		for n, r := range files {
			if again[n] != r {
				t.Fatalf("file %q: %+v, re-encoded %+v", n, r, again[n])
			}
		}
	})
}
