package cache

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// failingStore is a shared store that is down: every call fails.
type failingStore struct{ calls int }

var errDown = errors.New("connection refused")

func (f *failingStore) Get(Sum) (*Entry, error)              { f.calls++; return nil, errDown }
func (f *failingStore) Put(Sum, *Entry) error                { f.calls++; return errDown }
func (f *failingStore) Replace(Sum, *Entry) error            { f.calls++; return errDown }
func (f *failingStore) OpenBlob(Blob) (io.ReadCloser, error) { f.calls++; return nil, errDown }
func (f *failingStore) Remove(Sum) error                     { f.calls++; return errDown }
func (f *failingStore) Walk(func(Sum, *Entry) error) error   { f.calls++; return errDown }

// layeredEntry is an entry with one blob of the given bytes.
func layeredEntry(t *testing.T, kind Kind, data string) *Entry {
	t.Helper()
	p := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return &Entry{Kind: kind, Record: []byte(`{"kind":"compile"}`),
		Blobs: []Blob{{Name: "out0", Size: int64(len(data)), Sum: SumBytes([]byte(data)), Path: p}}}
}

func readLocalBlob(t *testing.T, s Store, key Sum) string {
	t.Helper()
	e, err := s.Get(key)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	r, err := s.OpenBlob(e.Blobs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestLayeredSharesEntries: what one machine stores, another's local miss
// finds in the shared store and keeps locally.
func TestLayeredSharesEntries(t *testing.T) {
	shared := NewDirStore(t.TempDir())
	a := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared}
	b := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared}
	key := SumBytes([]byte("result"))
	if err := a.Put(key, layeredEntry(t, KindResult, "object bytes")); err != nil {
		t.Fatal(err)
	}
	if got := readLocalBlob(t, b, key); got != "object bytes" {
		t.Errorf("b read %q", got)
	}
	if _, err := b.Local.Get(key); err != nil {
		t.Errorf("the shared hit was not kept locally: %v", err)
	}
	if st := b.Stats(); st.Hits != 1 || st.BytesDown != int64(len("object bytes")) {
		t.Errorf("b's stats %+v", st)
	}
	if st := a.Stats(); st.Stores != 1 || st.BytesUp != int64(len("object bytes")) {
		t.Errorf("a's stats %+v", st)
	}
	// Machine-local kinds stay local.
	tool := SumBytes([]byte("tool"))
	a.Put(tool, &Entry{Kind: KindTool, Record: []byte("sha256=00")})
	if _, err := shared.Get(tool); err == nil {
		t.Error("a tool digest went to the shared store")
	}
	if _, err := b.Get(SumBytes([]byte("nothing"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a missing key: %v", err)
	}
	if st := b.Stats(); st.Misses != 1 {
		t.Errorf("b's misses %+v", st)
	}
}

// TestLayeredTamperedShared: a shared entry whose blob is not its bytes is
// a miss, and nothing of it is kept locally.
func TestLayeredTamperedShared(t *testing.T) {
	shared := NewDirStore(t.TempDir())
	key := SumBytes([]byte("result"))
	if err := shared.Put(key, layeredEntry(t, KindResult, "object bytes")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared.EntryDir(key), "out0"), []byte("OBJECT BYTES"), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	l := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared, Warn: func(m string) { warnings = append(warnings, m) }}
	if _, err := l.Get(key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a tampered shared entry: %v", err)
	}
	if _, err := l.Local.Get(key); err == nil {
		t.Error("the tampered entry was kept locally")
	}
	if len(warnings) != 0 || !l.usable() {
		t.Errorf("a tampered entry turned the shared store off: %q", warnings)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(l.Local.Dir, tmpPrefix+"*")); len(leftovers) != 0 {
		t.Errorf("temporaries left: %v", leftovers)
	}
}

// TestLayeredDown: a shared store that fails is warned about once and then
// left alone; the local store goes on.
func TestLayeredDown(t *testing.T) {
	down := &failingStore{}
	var warnings []string
	l := &Layered{Local: NewDirStore(t.TempDir()), Remote: down, Name: "redis://127.0.0.1:1",
		Warn: func(m string) { warnings = append(warnings, m) }}
	key := SumBytes([]byte("result"))
	if _, err := l.Get(key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get: %v", err)
	}
	if err := l.Put(key, layeredEntry(t, KindResult, "object")); err != nil {
		t.Fatalf("Put with the shared store down: %v", err)
	}
	if got := readLocalBlob(t, l, key); got != "object" {
		t.Errorf("local entry %q", got)
	}
	l.Get(SumBytes([]byte("other")))
	if down.calls != 1 {
		t.Errorf("the shared store was called %d times, want 1 (then left alone)", down.calls)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "redis://127.0.0.1:1") || !strings.Contains(warnings[0], "connection refused") {
		t.Errorf("warnings %q", warnings)
	}
	if st := l.Stats(); st.Errors != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestLayeredReadOnly: a read-only shared store is read, never written.
func TestLayeredReadOnly(t *testing.T) {
	shared := NewDirStore(t.TempDir())
	l := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared, ReadOnly: true}
	key := SumBytes([]byte("result"))
	if err := l.Put(key, layeredEntry(t, KindResult, "object")); err != nil {
		t.Fatal(err)
	}
	if _, err := shared.Get(key); err == nil {
		t.Error("a read-only shared store was written")
	}
	other := SumBytes([]byte("other"))
	if err := shared.Put(other, layeredEntry(t, KindResult, "theirs")); err != nil {
		t.Fatal(err)
	}
	if got := readLocalBlob(t, l, other); got != "theirs" {
		t.Errorf("read %q", got)
	}
}
