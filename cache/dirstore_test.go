package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// blobFile writes data to a file in dir and returns the blob that
// describes it, ready to be put.
func blobFile(t *testing.T, dir, name string, data []byte) Blob {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("src-%s-%d", name, rand.Int63()))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return Blob{Name: name, Size: int64(len(data)), Sum: SumBytes(data), Mode: 0o644, Path: path}
}

// testKey returns a key for a short name.
func testKey(name string) Sum { return SumBytes([]byte("test key " + name)) }

// readBlob reads a blob of an entry got from s, verified.
func readBlob(s Store, b Blob) ([]byte, error) {
	r, err := s.OpenBlob(b)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// putEntry puts an entry of kind KindResult with record rec and blobs
// holding the given bytes, named out0, out1, ...
func putEntry(t *testing.T, s *DirStore, key Sum, rec string, blobs ...string) {
	t.Helper()
	src := t.TempDir()
	e := &Entry{Kind: KindResult, Record: []byte(rec)}
	for i, data := range blobs {
		e.Blobs = append(e.Blobs, blobFile(t, src, fmt.Sprintf("out%d", i), []byte(data)))
	}
	if err := s.Put(key, e); err != nil {
		t.Fatal(err)
	}
}

// leftovers lists the temporaries and trash under a store's shards.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	shards, _ := os.ReadDir(dir)
	for _, sh := range shards {
		names, _ := os.ReadDir(filepath.Join(dir, sh.Name()))
		for _, n := range names {
			if strings.HasPrefix(n.Name(), tmpPrefix) || strings.HasPrefix(n.Name(), trashPrefix) {
				found = append(found, filepath.Join(sh.Name(), n.Name()))
			}
		}
	}
	return found
}

func TestDirStoreRoundTrip(t *testing.T) {
	s := NewDirStore(filepath.Join(t.TempDir(), "cache"))
	if _, err := s.Get(testKey("a")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get from a store never written: %v, want ErrNotFound", err)
	}
	if err := s.Walk(func(Sum, *Entry) error { return errors.New("called") }); err != nil {
		t.Fatalf("Walk of a store never written: %v", err)
	}
	src := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 20000)
	exe := blobFile(t, src, "out1", []byte("#!/bin/sh\n"))
	exe.Mode = 0o755
	in := &Entry{Kind: KindResult, Record: []byte(`{"kind":"compile","stderr":"warning: x\n"}`), Blobs: []Blob{
		blobFile(t, src, "out0", big),
		exe,
		blobFile(t, src, "out2", nil), // an empty file
	}}
	key := testKey("a")
	if err := s.Put(key, in); err != nil {
		t.Fatal(err)
	}
	if in.Blobs[0].Path == "" || !strings.HasPrefix(in.Blobs[0].Path, src) {
		t.Errorf("Put changed the caller's entry: blob path %q", in.Blobs[0].Path)
	}
	got, err := s.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != in.Kind || string(got.Record) != string(in.Record) || len(got.Blobs) != len(in.Blobs) {
		t.Fatalf("Get = %+v, want %+v", got, in)
	}
	if got.Used.IsZero() || time.Since(got.Used) > time.Minute {
		t.Errorf("Used = %v, want about now", got.Used)
	}
	if want := int64(len(in.Record)) + int64(len(big)) + 10; got.Size() != want {
		t.Errorf("Size = %d, want %d", got.Size(), want)
	}
	for i, b := range got.Blobs {
		w := in.Blobs[i]
		if b.Name != w.Name || b.Size != w.Size || b.Sum != w.Sum || b.Mode != w.Mode {
			t.Errorf("blob %d = %+v, want %+v", i, b, w)
		}
		if filepath.Dir(b.Path) != s.EntryDir(key) {
			t.Errorf("blob %d path %s, not in the entry's directory %s", i, b.Path, s.EntryDir(key))
		}
		data, err := readBlob(s, b)
		want, _ := os.ReadFile(w.Path)
		if err != nil || !bytes.Equal(data, want) {
			t.Errorf("blob %d: read %d bytes, %v; want %d bytes", i, len(data), err, len(want))
		}
	}
	if filepath.Base(filepath.Dir(s.EntryDir(key))) != key.String()[:2] {
		t.Errorf("entry %s is not in shard %s", s.EntryDir(key), key.String()[:2])
	}
	// Records are opaque: bytes that are not UTF-8 come back unchanged.
	raw := &Entry{Kind: KindPlan, Record: []byte("\"-o\" \"/tmp/d\xe9j\xe0/m.o\"\x00\xff")}
	if err := s.Put(testKey("raw"), raw); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(testKey("raw")); err != nil || !bytes.Equal(got.Record, raw.Record) {
		t.Errorf("record not UTF-8: Get = %q, %v; want %q", got.Record, err, raw.Record)
	}
	if leftover := leftovers(t, s.Dir); len(leftover) > 0 {
		t.Errorf("left behind: %q", leftover)
	}
}

func TestDirStorePutKeepsReplaceReplaces(t *testing.T) {
	s := NewDirStore(t.TempDir())
	key := testKey("k")
	record := func() string {
		t.Helper()
		e, err := s.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		data, err := readBlob(s, e.Blobs[0])
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != "bytes of "+string(e.Record) {
			t.Fatalf("entry %q has blob %q", e.Record, data)
		}
		return string(e.Record)
	}
	putEntry(t, s, key, "first", "bytes of first")
	putEntry(t, s, key, "second", "bytes of second")
	if got := record(); got != "first" {
		t.Errorf("Put over a sound entry: got %q, want the first kept", got)
	}
	src := t.TempDir()
	third := &Entry{Kind: KindResult, Record: []byte("third"), Blobs: []Blob{blobFile(t, src, "out0", []byte("bytes of third"))}}
	if err := s.Replace(key, third); err != nil {
		t.Fatal(err)
	}
	if got := record(); got != "third" {
		t.Errorf("Replace: got %q, want third", got)
	}
	// Put over a damaged entry replaces it.
	if err := os.WriteFile(filepath.Join(s.EntryDir(key), indexName), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	putEntry(t, s, key, "fourth", "bytes of fourth")
	if got := record(); got != "fourth" {
		t.Errorf("Put over a damaged entry: got %q, want fourth", got)
	}
	if leftover := leftovers(t, s.Dir); len(leftover) > 0 {
		t.Errorf("left behind: %q", leftover)
	}
	// Remove, twice: the second is not an error.
	for i := 0; i < 2; i++ {
		if err := s.Remove(key); err != nil {
			t.Errorf("Remove %d: %v", i, err)
		}
	}
	if _, err := s.Get(key); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Remove: %v", err)
	}
}

// TestDirStoreDamage damages a stored entry in every way a crash, a disk
// or a person might: each is a miss, never wrong bytes.
func TestDirStoreDamage(t *testing.T) {
	const rec = `{"kind":"compile"}`
	blob0 := strings.Repeat("object file bytes ", 100)
	index := func(s *DirStore, key Sum) string { return filepath.Join(s.EntryDir(key), indexName) }
	blob := func(s *DirStore, key Sum) string { return filepath.Join(s.EntryDir(key), "out0") }
	edit := func(t *testing.T, name string, f func([]byte) []byte) {
		t.Helper()
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, f(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		// indexDamage: Get misses; else Get hits and reading the blob fails.
		indexDamage bool
		// missing: the blob is gone (OpenBlob fails with ErrNotExist).
		missing bool
		damage  func(t *testing.T, s *DirStore, key Sum)
	}{
		{name: "blob bytes changed, same size", damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, blob(s, key), func(b []byte) []byte { b[len(b)/2] ^= 1; return b })
		}},
		{name: "blob zero-filled, same size (a crash before its data reached the disk)", damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, blob(s, key), func(b []byte) []byte { return make([]byte, len(b)) })
		}},
		{name: "blob truncated", damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, blob(s, key), func(b []byte) []byte { return b[:len(b)-1] })
		}},
		{name: "blob emptied", damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, blob(s, key), func(b []byte) []byte { return nil })
		}},
		{name: "blob extended", damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, blob(s, key), func(b []byte) []byte { return append(b, '!') })
		}},
		{name: "blob replaced by another entry's", damage: func(t *testing.T, s *DirStore, key Sum) {
			putEntry(t, s, testKey("other"), rec, strings.Repeat("other bytes ", 150))
			if err := os.Rename(blob(s, testKey("other")), blob(s, key)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "blob deleted", missing: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			if err := os.Remove(blob(s, key)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "index truncated", indexDamage: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, index(s, key), func(b []byte) []byte { return b[:len(b)-3] })
		}},
		{name: "index header only", indexDamage: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, index(s, key), func(b []byte) []byte { return b[:bytes.IndexByte(b, '\n')+1] })
		}},
		{name: "index zero-filled, same size (a crash before its data reached the disk)", indexDamage: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, index(s, key), func(b []byte) []byte { return make([]byte, len(b)) })
		}},
		{name: "index emptied", indexDamage: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, index(s, key), func(b []byte) []byte { return nil })
		}},
		{name: "index byte edited", indexDamage: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, index(s, key), func(b []byte) []byte { return bytes.Replace(b, []byte("compile"), []byte("cumpile"), 1) })
		}},
		{name: "index checksum edited", indexDamage: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, index(s, key), func(b []byte) []byte { b[len(indexMagic)+5] ^= 1; return b })
		}},
		{name: "index of another version", indexDamage: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			edit(t, index(s, key), func(b []byte) []byte { return bytes.Replace(b, []byte(indexMagic), []byte("offcc-cache v0"), 1) })
		}},
		{name: "index deleted", indexDamage: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			if err := os.Remove(index(s, key)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "index is a directory", indexDamage: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			os.Remove(index(s, key))
			if err := os.Mkdir(index(s, key), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "index too large", indexDamage: true, damage: func(t *testing.T, s *DirStore, key Sum) {
			if err := os.Truncate(index(s, key), maxIndexSize+1); err != nil {
				t.Fatal(err)
			}
		}},
		// A sound index whose blob digest is not the bytes' (an index
		// written for other bytes): the blob check catches it.
		{name: "index rewritten for other bytes", damage: func(t *testing.T, s *DirStore, key Sum) {
			e, err := DecodeIndex(mustRead(t, index(s, key)))
			if err != nil {
				t.Fatal(err)
			}
			e.Blobs[0].Sum = SumBytes([]byte("something else"))
			if err := os.WriteFile(index(s, key), EncodeIndex(e), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewDirStore(t.TempDir())
			key := testKey("damaged")
			putEntry(t, s, key, rec, blob0)
			putEntry(t, s, testKey("sound"), rec, "sound bytes")
			tt.damage(t, s, key)

			e, err := s.Get(key)
			if tt.indexDamage {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("Get = %+v, %v; want ErrNotFound", e, err)
				}
			} else {
				if err != nil {
					t.Fatalf("Get: %v (the index is sound)", err)
				}
				data, err := readBlob(s, e.Blobs[0])
				switch {
				case tt.missing && !errors.Is(err, fs.ErrNotExist):
					t.Errorf("reading a deleted blob: %v, want ErrNotExist", err)
				case !tt.missing && !errors.Is(err, ErrCorrupt):
					t.Errorf("reading a damaged blob: %d bytes, %v; want ErrCorrupt", len(data), err)
				}
			}
			// Walk skips an entry with a damaged index, and still
			// visits the sound one.
			var walked []Sum
			if err := s.Walk(func(k Sum, e *Entry) error { walked = append(walked, k); return nil }); err != nil {
				t.Fatal(err)
			}
			visited := map[Sum]bool{}
			for _, k := range walked {
				visited[k] = true
			}
			if !visited[testKey("sound")] || visited[key] == tt.indexDamage {
				t.Errorf("Walk visited %d entries: sound %v, damaged %v", len(walked), visited[testKey("sound")], visited[key])
			}
			// Trim removes an entry with a damaged index (and only it),
			// once it is older than a Replace in progress could be.
			res, err := s.Trim(1<<40, time.Now().Add(damagedAge+time.Second))
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(s.EntryDir(key))
			if removed := errors.Is(statErr, fs.ErrNotExist); removed != tt.indexDamage {
				t.Errorf("after Trim, damaged entry removed = %v, want %v (%+v)", removed, tt.indexDamage, res)
			}
			if _, err := s.Get(testKey("sound")); err != nil {
				t.Errorf("Trim removed the sound entry: %v", err)
			}
			// A Put over the damage stores a sound entry (a damaged
			// blob under a sound index is replaced by Replace, as the
			// session does after removing it).
			s.Remove(key)
			putEntry(t, s, key, rec, blob0)
			e, err = s.Get(key)
			if err != nil {
				t.Fatal(err)
			}
			if data, err := readBlob(s, e.Blobs[0]); err != nil || string(data) != blob0 {
				t.Errorf("after a new Put: %d bytes, %v", len(data), err)
			}
		})
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDirStoreWalk(t *testing.T) {
	s := NewDirStore(t.TempDir())
	want := map[Sum]string{}
	for i := 0; i < 20; i++ {
		k := testKey(fmt.Sprint(i))
		want[k] = fmt.Sprint("record ", i)
		putEntry(t, s, k, want[k], fmt.Sprint("blob ", i))
	}
	// Things a walk must pass over: a damaged entry, temporaries,
	// trash, stray files, an entry in the wrong shard, a foreign shard.
	damaged := testKey("damaged")
	putEntry(t, s, damaged, "damaged", "x")
	os.WriteFile(filepath.Join(s.EntryDir(damaged), indexName), []byte("offcc-cache v1 00\n{}"), 0o644)
	shard := filepath.Dir(s.EntryDir(damaged))
	os.Mkdir(filepath.Join(shard, tmpPrefix+"0123456789abcdef-000000000000"), 0o755)
	os.Mkdir(filepath.Join(shard, trashPrefix+"000000000000"), 0o755)
	os.WriteFile(filepath.Join(shard, "README"), nil, 0o644)
	os.WriteFile(filepath.Join(s.Dir, "trim.txt"), []byte("1\n"), 0o644)
	os.MkdirAll(filepath.Join(s.Dir, "stats"), 0o755)
	os.MkdirAll(filepath.Join(s.Dir, "zz", "x"), 0o755)
	wrongShard := testKey("wrong shard")
	other := "00"
	if wrongShard.String()[:2] == other {
		other = "01"
	}
	os.MkdirAll(filepath.Join(s.Dir, other), 0o755)
	putEntry(t, s, wrongShard, "wrong shard", "w")
	os.Rename(s.EntryDir(wrongShard), filepath.Join(s.Dir, other, wrongShard.String()))

	var last string
	got := map[Sum]string{}
	err := s.Walk(func(k Sum, e *Entry) error {
		if k.String() <= last {
			t.Errorf("Walk out of key order: %s after %s", k, last)
		}
		last = k.String()
		got[k] = string(e.Record)
		if len(e.Blobs) != 1 || filepath.Dir(e.Blobs[0].Path) != s.EntryDir(k) || e.Used.IsZero() {
			t.Errorf("entry %s: blobs %+v used %v", k, e.Blobs, e.Used)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("Walk visited %d entries, want %d", len(got), len(want))
	}
	for k, rec := range want {
		if got[k] != rec {
			t.Errorf("entry %s: record %q, want %q", k, got[k], rec)
		}
	}
	// fn's error stops the walk and is returned.
	stop := errors.New("stop")
	n := 0
	if err := s.Walk(func(Sum, *Entry) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Walk with a failing fn: %v after %d calls", err, n)
	}
}

// setUsed sets when an entry was last used (its index's mtime).
func setUsed(t *testing.T, s *DirStore, key Sum, when time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(s.EntryDir(key), indexName), when, when); err != nil {
		t.Fatal(err)
	}
}

func TestDirStoreTrim(t *testing.T) {
	s := NewDirStore(t.TempDir())
	now := time.Now()
	// Ten entries of the same size, entry i last used i hours ago.
	const n = 10
	var keys []Sum
	for i := 0; i < n; i++ {
		k := testKey(fmt.Sprintf("lru %d", i))
		keys = append(keys, k)
		putEntry(t, s, k, fmt.Sprintf("record %02d", i), strings.Repeat("x", 1000))
		setUsed(t, s, k, now.Add(-time.Duration(i)*time.Hour))
	}
	// The size on disk, compressed, as a trim counts it.
	var size int64
	s.Walk(func(k Sum, e *Entry) error {
		if k == keys[0] {
			size = e.DiskSize()
		}
		return nil
	})

	// Damage: a key directory without an index, one with a bad index.
	noIndex, badIndex := testKey("no index"), testKey("bad index")
	putEntry(t, s, noIndex, "x", "x")
	os.Remove(filepath.Join(s.EntryDir(noIndex), indexName))
	putEntry(t, s, badIndex, "x", "x")
	os.WriteFile(filepath.Join(s.EntryDir(badIndex), indexName), []byte("junk\n"), 0o644)
	for _, p := range []string{s.EntryDir(noIndex), s.EntryDir(badIndex), filepath.Join(s.EntryDir(badIndex), indexName)} {
		when := now.Add(-2 * damagedAge)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}

	// Leftovers of writers that died, stale and fresh.
	shard := filepath.Dir(s.EntryDir(keys[0]))
	leftover := map[string]bool{ // name: kept
		tmpPrefix + "aaaaaaaaaaaaaaaa-000000000001":   false,
		trashPrefix + "000000000002":                  false,
		tmpPrefix + "bbbbbbbbbbbbbbbb-000000000003":   true,
		trashPrefix + "000000000004":                  true,
		"not-ours":                                    true,
		tmpPrefix + "cccccccccccccccc-000000000005.f": false, // a file, not a directory
	}
	for name, kept := range leftover {
		p := filepath.Join(shard, name)
		if strings.HasSuffix(name, ".f") || name == "not-ours" {
			os.WriteFile(p, []byte("x"), 0o644)
		} else {
			os.MkdirAll(filepath.Join(p, "out0"), 0o755)
		}
		when := now.Add(-30 * time.Minute)
		if !kept || name == "not-ours" {
			when = now.Add(-2 * time.Hour)
		}
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}

	// Room for four entries and a bit.
	res, err := s.Trim(4*size+size/2, now)
	if err != nil {
		t.Fatal(err)
	}
	// present looks without a Get, which would mark the entry used.
	present := func(k Sum) bool {
		_, err := os.Stat(filepath.Join(s.EntryDir(k), indexName))
		return err == nil
	}
	for i, k := range keys {
		if kept := present(k); kept != (i < 4) {
			t.Errorf("entry used %d hours ago: kept = %v, want %v", i, kept, i < 4)
		}
	}
	if want := (TrimResult{Entries: 4, Bytes: 4 * size, RemovedEntries: n - 4 + 2, RemovedBytes: (n - 4) * size}); res != want {
		t.Errorf("Trim = %+v, want %+v", res, want)
	}
	for _, k := range []Sum{noIndex, badIndex} {
		if _, err := os.Stat(s.EntryDir(k)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("damaged entry %s not removed: %v", k, err)
		}
	}
	for name, kept := range leftover {
		_, err := os.Lstat(filepath.Join(shard, name))
		if (err == nil) != kept {
			t.Errorf("%s: kept = %v, want %v", name, err == nil, kept)
		}
	}

	// A Get marks an entry used: the oldest of those kept survives the
	// next trim, over newer ones.
	for i := 0; i < 4; i++ {
		setUsed(t, s, keys[i], now.Add(-time.Duration(10+i)*time.Minute))
	}
	if _, err := s.Get(keys[3]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Trim(size+size/2, time.Now()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if kept := present(keys[i]); kept != (i == 3) {
			t.Errorf("after a Get of entry 3 and a trim to one entry, entry %d kept = %v", i, kept)
		}
	}
	// A Get within RefreshAge of the last mark does not write it.
	old := now.Add(-30 * time.Second)
	setUsed(t, s, keys[3], old)
	if e, err := s.Get(keys[3]); err != nil {
		t.Error(err)
	} else if info, _ := os.Stat(filepath.Join(s.EntryDir(keys[3]), indexName)); !e.Used.Equal(old) || !info.ModTime().Equal(old) {
		t.Errorf("Get of an entry used 30 s ago: used %v, index mtime %v; want both left at %v", e.Used, info.ModTime(), old)
	}
	// Trim to zero empties the store.
	if res, err := s.Trim(0, now); err != nil || res.Entries != 0 || res.Bytes != 0 {
		t.Errorf("Trim(0) = %+v, %v", res, err)
	}
	s.Walk(func(k Sum, _ *Entry) error { t.Errorf("entry %s left after Trim(0)", k); return nil })
	// Trimming a store never written is not an error.
	if _, err := NewDirStore(filepath.Join(t.TempDir(), "none")).Trim(0, now); err != nil {
		t.Errorf("Trim of a missing store: %v", err)
	}
}

func TestDirStorePutFailure(t *testing.T) {
	src := t.TempDir()
	good := blobFile(t, src, "out0", []byte("good"))
	tests := []struct {
		name string
		blob func() Blob
	}{
		{"blob file missing", func() Blob { b := good; b.Path = filepath.Join(src, "no such file"); return b }},
		{"blob shorter than its size", func() Blob { b := good; b.Size++; return b }},
		{"blob longer than its size", func() Blob { b := good; b.Size--; return b }},
		{"blob a directory", func() Blob { b := good; b.Path = src; return b }},
		{"blob named index", func() Blob { b := good; b.Name = indexName; return b }},
		{"blob named ../x", func() Blob { b := good; b.Name = "../x"; return b }},
		{"blob named .hidden", func() Blob { b := good; b.Name = ".hidden"; return b }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewDirStore(t.TempDir())
			key := testKey("fail")
			e := &Entry{Kind: KindResult, Record: []byte("{}"), Blobs: []Blob{good, tt.blob()}}
			e.Blobs[0].Name = "first"
			if err := s.Put(key, e); err == nil {
				t.Fatal("Put succeeded")
			}
			if _, err := s.Get(key); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get after a failed Put: %v", err)
			}
			if l := leftovers(t, s.Dir); len(l) > 0 {
				t.Errorf("left behind: %q", l)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(s.EntryDir(key)), "..", "x")); err == nil {
				t.Error("a blob named ../x was written outside its entry")
			}
		})
	}
	// A blob whose bytes are not its digest: Put trusts the caller's
	// digest (it does not hash the bytes again), so the entry is stored,
	// but reading the blob fails: a miss, never those bytes.
	for _, comp := range []Compression{{}, {Off: true}} {
		s := NewDirStore(t.TempDir())
		s.Compression = comp
		key := testKey("not its digest")
		b := good
		b.Sum = SumBytes([]byte("bad!"))
		if err := s.Put(key, &Entry{Kind: KindResult, Blobs: []Blob{b}}); err != nil {
			t.Fatal(err)
		}
		e, err := s.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		if data, err := readBlob(s, e.Blobs[0]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("compression %v: read of a blob whose bytes are not its digest: %q, %v", comp, data, err)
		}
	}

	// A failed Replace leaves the old entry.
	s := NewDirStore(t.TempDir())
	key := testKey("keep")
	putEntry(t, s, key, "old", "old bytes")
	bad := good
	bad.Path = filepath.Join(src, "no such file")
	if err := s.Replace(key, &Entry{Kind: KindResult, Blobs: []Blob{bad}}); err == nil {
		t.Fatal("Replace succeeded")
	}
	if e, err := s.Get(key); err != nil || string(e.Record) != "old" {
		t.Errorf("after a failed Replace: %v", err)
	}
	if l := leftovers(t, s.Dir); len(l) > 0 {
		t.Errorf("left behind: %q", l)
	}
}

// TestDirStoreConcurrent has many goroutines put, replace, get, remove and
// trim entries of a few keys, as the offcc processes of parallel builds
// do: every Get is a miss or one whole entry that was put (its record and
// all its blobs' bytes from the same Put), never a mix or a part.
func TestDirStoreConcurrent(t *testing.T) {
	s := NewDirStore(t.TempDir())
	const keys, versions, workers = 4, 5, 12
	iterations := 150
	if testing.Short() {
		iterations = 40
	}
	// blobData is blob j of version v of key k: sizes differ by version,
	// so that a torn read shows as a wrong size as well as wrong bytes.
	blobData := func(k, v, j int) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("key %d version %d blob %d;", k, v, j)), 50+300*v)
	}
	src := t.TempDir()
	entries := make([][]*Entry, keys)
	for k := range entries {
		for v := 0; v < versions; v++ {
			e := &Entry{Kind: KindResult, Record: []byte(fmt.Sprintf("key %d version %d", k, v))}
			for j := 0; j < 1+v%3; j++ {
				e.Blobs = append(e.Blobs, blobFile(t, src, fmt.Sprintf("out%d", j), blobData(k, v, j)))
			}
			entries[k] = append(entries[k], e)
		}
	}
	var hits sync.Map
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < iterations; i++ {
				k := rng.Intn(keys)
				key := testKey(fmt.Sprint("concurrent ", k))
				switch op := rng.Intn(10); {
				case op < 2:
					putOK(t, "Put", s.Put(key, entries[k][rng.Intn(versions)]))
				case op < 4:
					putOK(t, "Replace", s.Replace(key, entries[k][rng.Intn(versions)]))
				case op < 5:
					if err := s.Remove(key); err != nil {
						t.Errorf("Remove: %v", err)
					}
				case op < 6 && w == 0:
					if _, err := s.Trim(int64(rng.Intn(40000)), time.Now()); err != nil {
						t.Errorf("Trim: %v", err)
					}
				default:
					e, err := s.Get(key)
					if err != nil {
						if !errors.Is(err, ErrNotFound) {
							t.Errorf("Get: %v", err)
						}
						continue
					}
					var v int
					if _, err := fmt.Sscanf(string(e.Record), fmt.Sprintf("key %d version %%d", k), &v); err != nil || v < 0 || v >= versions || string(e.Record) != string(entries[k][v].Record) {
						t.Errorf("key %d: record %q was never put", k, e.Record)
						continue
					}
					if len(e.Blobs) != len(entries[k][v].Blobs) {
						t.Errorf("key %d version %d: %d blobs, want %d", k, v, len(e.Blobs), len(entries[k][v].Blobs))
						continue
					}
					whole := true
					for j, b := range e.Blobs {
						data, err := readBlob(s, b)
						if err != nil {
							// Replaced or removed under the reader:
							// the blob check or the open says so.
							if !errors.Is(err, ErrCorrupt) && !errors.Is(err, fs.ErrNotExist) {
								t.Errorf("key %d blob %d: %v", k, j, err)
							}
							whole = false
							break
						}
						if !bytes.Equal(data, blobData(k, v, j)) {
							t.Errorf("key %d version %d blob %d: got %d wrong bytes", k, v, j, len(data))
						}
					}
					if whole {
						hits.Store(w, true)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	if l := leftovers(t, s.Dir); len(l) > 0 {
		t.Errorf("left behind: %q", l)
	}
	// Whatever is left is sound.
	s.Walk(func(k Sum, e *Entry) error {
		for _, b := range e.Blobs {
			if _, err := readBlob(s, b); err != nil {
				t.Errorf("entry %s left damaged: %v", k, err)
			}
		}
		return nil
	})
	n := 0
	hits.Range(func(any, any) bool { n++; return true })
	if n == 0 {
		t.Error("no Get hit: the test tested nothing")
	}
}

// putOK checks the error of a Put or Replace racing with others. Losing a
// race of renames (the final name taken, then removed again, between a
// writer's attempts) may fail one: that only costs a later miss.
func putOK(t *testing.T, what string, err error) {
	var le *os.LinkError
	if err != nil && !errors.As(err, &le) {
		t.Errorf("%s: %v", what, err)
	} else if err != nil {
		t.Logf("%s lost a race: %v", what, err)
	}
}

// TestVerifier checks the blob reader's verdicts directly, with reads of
// every size.
func TestVerifier(t *testing.T) {
	data := []byte(strings.Repeat("verified bytes ", 1000))
	b := Blob{Name: "out0", Size: int64(len(data)), Sum: SumBytes(data)}
	tests := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"same", data, true},
		{"shorter", data[:len(data)-1], false},
		{"longer", append(append([]byte{}, data...), 'x'), false},
		{"empty", nil, false},
		{"changed", append([]byte{'V'}, data[1:]...), false},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 7, 4096, 1 << 20} {
			v := NewVerifier(io.NopCloser(&chunked{data: tt.data, n: chunk}), b)
			got, err := io.ReadAll(v)
			if tt.ok && (err != nil || !bytes.Equal(got, data)) {
				t.Errorf("%s, reads of %d: %d bytes, %v", tt.name, chunk, len(got), err)
			}
			if !tt.ok && !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s, reads of %d: %v, want ErrCorrupt", tt.name, chunk, err)
			}
		}
	}
}

// chunked reads data at most n bytes at a time, returning io.EOF with the
// last bytes (as some readers do).
type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	n := copy(p, c.data[:min(len(c.data), c.n)])
	c.data = c.data[n:]
	if len(c.data) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// rawIndex returns an index file with body as its JSON and a correct
// checksum, to test what DecodeIndex accepts beyond the checksum.
func rawIndex(body string) []byte {
	return []byte(fmt.Sprintf("%s %s\n%s", indexMagic, SumBytes([]byte(body)), body))
}

func TestDecodeIndex(t *testing.T) {
	sum := SumBytes([]byte("x")).String()
	blob := func(name, digest string, size int64) string {
		return fmt.Sprintf(`{"name":%q,"size":%d,"sha256":%q}`, name, size, digest)
	}
	entry := func(blobs ...string) string {
		return `{"kind":"result","record":"r","blobs":[` + strings.Join(blobs, ",") + `]}`
	}
	tests := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"one blob", rawIndex(entry(blob("out0", sum, 1))), true},
		{"no blobs", rawIndex(`{"kind":"plan","record":"jobs"}`), true},
		{"names of letters, digits, dot, dash, underscore", rawIndex(entry(blob("a.B-9_z", sum, 1), blob("out0.o", sum, 1))), true},
		{"64-character name", rawIndex(entry(blob(strings.Repeat("n", 64), sum, 1))), true},
		{"zero size", rawIndex(entry(blob("out0", sum, 0))), true},
		{"unknown field", rawIndex(`{"kind":"plan","record":"jobs","later":1}`), true},

		{"name ../x", rawIndex(entry(blob("../x", sum, 1))), false},
		{"name ..", rawIndex(entry(blob("..", sum, 1))), false},
		{"name .", rawIndex(entry(blob(".", sum, 1))), false},
		{"name .hidden", rawIndex(entry(blob(".hidden", sum, 1))), false},
		{"name index", rawIndex(entry(blob("index", sum, 1))), false},
		{"name a/b", rawIndex(entry(blob("a/b", sum, 1))), false},
		{"name /abs", rawIndex(entry(blob("/abs", sum, 1))), false},
		{"name with a backslash", rawIndex(entry(blob(`a\b`, sum, 1))), false},
		{"name with a NUL", rawIndex(entry(blob("a\x00b", sum, 1))), false},
		{"name with a space", rawIndex(entry(blob("a b", sum, 1))), false},
		{"name not ASCII", rawIndex(entry(blob("é", sum, 1))), false},
		{"empty name", rawIndex(entry(blob("", sum, 1))), false},
		{"65-character name", rawIndex(entry(blob(strings.Repeat("n", 65), sum, 1))), false},
		{"duplicate names", rawIndex(entry(blob("out0", sum, 1), blob("out0", sum, 2))), false},
		{"digest short", rawIndex(entry(blob("out0", sum[:63], 1))), false},
		{"digest long", rawIndex(entry(blob("out0", sum+"0", 1))), false},
		{"digest upper-case", rawIndex(entry(blob("out0", strings.ToUpper(sum), 1))), false},
		{"digest not hex", rawIndex(entry(blob("out0", "g"+sum[1:], 1))), false},
		{"digest empty", rawIndex(entry(blob("out0", "", 1))), false},
		{"negative size", rawIndex(entry(blob("out0", sum, -1))), false},
		{"size not a number", rawIndex(`{"kind":"result","record":"r","blobs":[{"name":"out0","size":"1","sha256":"` + sum + `"}]}`), false},
		{"body not JSON", rawIndex(`kind=result`), false},
		{"body a JSON array", rawIndex(`[]`), false},
		{"record given twice", rawIndex(`{"kind":"plan","record":"a","record_bytes":"/w=="}`), false},
		{"record bytes that are UTF-8", rawIndex(`{"kind":"plan","record_bytes":"YWJj"}`), false},

		{"empty", nil, false},
		{"no newline", []byte(indexMagic + " " + sum), false},
		{"other magic", []byte(strings.Replace(string(rawIndex(`{}`)), indexMagic, "offcc-cache v2", 1)), false},
		{"checksum of other bytes", []byte(indexMagic + " " + sum + "\n{}"), false},
		{"checksum upper-case", []byte(indexMagic + " " + strings.ToUpper(SumBytes([]byte("{}")).String()) + "\n{}"), false},
		{"checksum missing", []byte(indexMagic + " \n{}"), false},
		{"CRLF header", []byte(indexMagic + " " + SumBytes([]byte("{}")).String() + "\r\n{}"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := DecodeIndex(tt.data)
			if (err == nil) != tt.ok {
				t.Fatalf("DecodeIndex(%q) = %+v, %v; want ok %v", tt.data, e, err, tt.ok)
			}
			if err == nil {
				checkDecoded(t, e)
			}
		})
	}
}

// checkDecoded checks the promises of a decoded index: safe, distinct
// blob names, sizes not negative, modes only permission bits, no paths;
// and that it encodes back to the same entry.
func checkDecoded(t *testing.T, e *Entry) {
	t.Helper()
	seen := map[string]bool{}
	for _, b := range e.Blobs {
		if b.Name == indexName || seen[b.Name] || b.Name == "" || b.Name[0] == '.' || strings.ContainsAny(b.Name, "/\\\x00") || len(b.Name) > 64 {
			t.Errorf("decoded blob name %q", b.Name)
		}
		seen[b.Name] = true
		if b.Size < 0 || b.Mode&^0o777 != 0 || b.Path != "" {
			t.Errorf("decoded blob %+v", b)
		}
	}
	again, err := DecodeIndex(EncodeIndex(e))
	if err != nil {
		t.Fatalf("re-encoded index does not decode: %v", err)
	}
	if !sameEntry(e, again) {
		t.Errorf("re-encoded index decodes to %+v, want %+v", again, e)
	}
}

func sameEntry(a, b *Entry) bool {
	if a.Kind != b.Kind || !bytes.Equal(a.Record, b.Record) || len(a.Blobs) != len(b.Blobs) {
		return false
	}
	if (a.Signature == nil) != (b.Signature == nil) ||
		a.Signature != nil && (a.Signature.Key != b.Signature.Key || !bytes.Equal(a.Signature.Sig, b.Signature.Sig)) {
		return false
	}
	for i := range a.Blobs {
		if a.Blobs[i] != b.Blobs[i] {
			return false
		}
	}
	return true
}

func TestEncodeIndexRoundTrip(t *testing.T) {
	for _, e := range []*Entry{
		{Kind: KindPlan, Record: []byte("clang version 22\n \"/usr/bin/clang\" \"-cc1\"\n")},
		{Kind: KindPlan, Record: []byte("\"-o\" \"/tmp/d\xe9j\xe0/m.o\"")},
		{Kind: KindTool, Record: []byte("sha256=" + SumBytes(nil).String())},
		{Kind: KindResult, Record: []byte(`{"kind":"compile","stderr":"<&>\u2028"}`), Blobs: []Blob{
			{Name: "out0", Size: 3, Sum: SumBytes([]byte("abc")), Mode: 0o644},
			{Name: "out1", Size: 0, Sum: SumBytes(nil), Mode: 0o755},
		}},
		{Kind: KindManifest},
		{Kind: "some later kind", Record: []byte{0, 1, 2, 0xff}},
	} {
		got, err := DecodeIndex(EncodeIndex(e))
		if err != nil || !sameEntry(got, e) {
			t.Errorf("round trip of %+v: %+v, %v", e, got, err)
		}
	}
}

// incompressible returns n bytes that zstd cannot shrink (the cache's
// sizes on disk are then their sizes), the same for the same seed.
func incompressible(n int, seed int64) string {
	data := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(data)
	return string(data)
}

// TestDirStoreReplaceIndex: replacing an entry without blobs renames a new
// index over the old; concurrent replaces and gets see one whole index or
// another, never a miss once the entry exists, and leave no temporaries.
func TestDirStoreReplaceIndex(t *testing.T) {
	s := NewDirStore(t.TempDir())
	key := testKey("manifest")
	records := []string{string(compressible(5000)), "small", string(compressible(3000)) + "x"}
	if err := s.Replace(key, &Entry{Kind: KindManifest, Record: []byte(records[0])}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if g%2 == 0 {
					if err := s.Replace(key, &Entry{Kind: KindManifest, Record: []byte(records[(g+i)%len(records)])}); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				e, err := s.Get(key)
				if err != nil {
					t.Errorf("Get during replaces: %v", err)
					return
				}
				found := false
				for _, r := range records {
					found = found || string(e.Record) == r
				}
				if !found {
					t.Errorf("Get returned a record of %d bytes that was never put", len(e.Record))
					return
				}
			}
		}(g)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if l := leftovers(t, s.Dir); len(l) > 0 {
		t.Errorf("left behind: %q", l)
	}
	names, _ := os.ReadDir(s.EntryDir(key))
	if len(names) != 1 || names[0].Name() != indexName {
		t.Errorf("entry directory holds %v", names)
	}
}
