package cache

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/trust"
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

// signingKey returns a new signing key named name.
func signingKey(t testing.TB, name string) *trust.PrivateKey {
	t.Helper()
	k, err := trust.Generate(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signed returns e signed by k for key.
func signed(k *trust.PrivateKey, key Sum, e *Entry) *Entry {
	c := *e
	SignEntry(k, key, &c)
	return &c
}

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
	ci := signingKey(t, "ci")
	trusted := trust.NewKeyring(&ci.PublicKey)
	a := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared, Sign: ci, Trusted: trusted}
	b := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared, Trusted: trusted}
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
	ci := signingKey(t, "ci")
	if err := shared.Put(key, signed(ci, key, layeredEntry(t, KindResult, "object bytes"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared.EntryDir(key), "out0"), []byte("OBJECT BYTES"), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	l := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared, Trusted: trust.NewKeyring(&ci.PublicKey),
		Warn: func(m string) { warnings = append(warnings, m) }}
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
	ci := signingKey(t, "ci")
	l := &Layered{Local: NewDirStore(t.TempDir()), Remote: down, Name: "redis://127.0.0.1:1",
		Sign: ci, Trusted: trust.NewKeyring(&ci.PublicKey), Warn: func(m string) { warnings = append(warnings, m) }}
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
	ci := signingKey(t, "ci")
	l := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared, ReadOnly: true, Sign: ci, Trusted: trust.NewKeyring(&ci.PublicKey)}
	key := SumBytes([]byte("result"))
	if err := l.Put(key, layeredEntry(t, KindResult, "object")); err != nil {
		t.Fatal(err)
	}
	if _, err := shared.Get(key); err == nil {
		t.Error("a read-only shared store was written")
	}
	other := SumBytes([]byte("other"))
	if err := shared.Put(other, signed(ci, other, layeredEntry(t, KindResult, "theirs"))); err != nil {
		t.Fatal(err)
	}
	if got := readLocalBlob(t, l, other); got != "theirs" {
		t.Errorf("read %q", got)
	}
}

// trustSetup is a shared store with entries written by a signing
// machine: "right" under keyA and "wrong" under keyB, both results.
type trustSetup struct {
	shared     *DirStore
	ci, rogue  *trust.PrivateKey
	trusted    *trust.Keyring
	keyA, keyB Sum
}

func newTrustSetup(t *testing.T) *trustSetup {
	t.Helper()
	s := &trustSetup{shared: NewDirStore(t.TempDir()), ci: signingKey(t, "ci"), rogue: signingKey(t, "rogue"),
		keyA: SumBytes([]byte("action A")), keyB: SumBytes([]byte("action B"))}
	s.trusted = trust.NewKeyring(&s.ci.PublicKey)
	w := &Layered{Local: NewDirStore(t.TempDir()), Remote: s.shared, Sign: s.ci, Trusted: s.trusted}
	if err := w.Put(s.keyA, layeredEntry(t, KindResult, "right")); err != nil {
		t.Fatal(err)
	}
	if err := w.Put(s.keyB, layeredEntry(t, KindResult, "wrong")); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Stores != 2 {
		t.Fatalf("the writer stored %+v", st)
	}
	return s
}

// reader returns a machine that trusts s's writer, with its debug
// messages.
func (s *trustSetup) reader(t *testing.T, insecure bool) (*Layered, *[]string) {
	var debug []string
	l := &Layered{Local: NewDirStore(t.TempDir()), Remote: s.shared, Trusted: s.trusted, Insecure: insecure,
		Debug: func(m string) { debug = append(debug, m) }, Warn: func(m string) { t.Errorf("warning: %s", m) }}
	return l, &debug
}

// sharedEntry returns the shared store's entry under key, blobs' paths
// set (to copy it).
func (s *trustSetup) sharedEntry(t *testing.T, key Sum) *Entry {
	t.Helper()
	e, err := s.shared.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestLayeredSignedEntries: what a trusted key signed is a hit; whatever
// someone with write access to the shared store does to an entry (copy
// another key's over it, re-sign it with their key, strip the signature,
// change the record, blob list or kind) makes it a miss, counted as
// untrusted, explained, and nothing of it kept locally. Insecure takes the
// same entries (the attack works), still counting them.
func TestLayeredSignedEntries(t *testing.T) {
	s := newTrustSetup(t)
	r, _ := s.reader(t, false)
	if got := readLocalBlob(t, r, s.keyA); got != "right" {
		t.Fatalf("signed entry: %q", got)
	}
	if st := r.Stats(); st.Hits != 1 || st.Untrusted != 0 {
		t.Errorf("stats %+v", st)
	}

	for _, tc := range []struct {
		name   string
		tamper func(s *trustSetup, e *Entry) // e: keyA's entry, to store under keyA
		want   string
	}{
		{"another key's entry copied over", func(s *trustSetup, e *Entry) { *e = *s.sharedEntry(t, s.keyB) }, "does not match"},
		{"re-signed by an untrusted key", func(s *trustSetup, e *Entry) {
			*e = *s.sharedEntry(t, s.keyB)
			SignEntry(s.rogue, s.keyA, e)
		}, "unknown key"},
		{"rogue signature under the trusted key's ID", func(s *trustSetup, e *Entry) {
			*e = *s.sharedEntry(t, s.keyB)
			SignEntry(s.rogue, s.keyA, e)
			e.Signature.Key = s.ci.ID
		}, "does not match"},
		{"unsigned", func(s *trustSetup, e *Entry) {
			*e = *s.sharedEntry(t, s.keyB)
			e.Signature = nil
		}, "unsigned"},
		{"record changed", func(s *trustSetup, e *Entry) { e.Record = []byte(`{"kind":"compile","stderr":"pwned"}`) }, "does not match"},
		{"blob list changed", func(s *trustSetup, e *Entry) { e.Blobs = s.sharedEntry(t, s.keyB).Blobs }, "does not match"},
		{"blob mode changed", func(s *trustSetup, e *Entry) { e.Blobs[0].Mode = 0o777 }, "does not match"},
		{"kind changed", func(s *trustSetup, e *Entry) { e.Kind = KindManifest }, "does not match"},
		{"signature truncated", func(s *trustSetup, e *Entry) { e.Signature.Sig = e.Signature.Sig[:32] }, "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTrustSetup(t)
			e := s.sharedEntry(t, s.keyA)
			tc.tamper(s, e)
			if err := s.shared.Replace(s.keyA, e); err != nil {
				t.Fatal(err)
			}
			r, debug := s.reader(t, false)
			if _, err := r.Get(s.keyA); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get of the tampered entry: %v, want a miss", err)
			}
			if _, err := r.Local.Get(s.keyA); err == nil {
				t.Error("the tampered entry was kept locally")
			}
			if st := r.Stats(); st.Hits != 0 || st.Misses != 1 || st.Untrusted != 1 || st.Errors != 0 || st.BytesDown != 0 {
				t.Errorf("stats %+v", st)
			}
			if len(*debug) != 1 || !strings.Contains((*debug)[0], s.keyA.String()[:16]) ||
				!strings.Contains((*debug)[0], "not signed by a trusted key") || !strings.Contains((*debug)[0], tc.want) {
				t.Errorf("debug %q, want one line saying %q", *debug, tc.want)
			}
			if !r.usable() {
				t.Error("an untrusted entry turned the shared store off")
			}
			// The other entry is unharmed.
			if got := readLocalBlob(t, r, s.keyB); got != "wrong" {
				t.Errorf("keyB: %q", got)
			}

			// Insecure: the tampered entry is taken, and counted.
			in, _ := s.reader(t, true)
			if _, err := in.Get(s.keyA); err != nil {
				t.Fatalf("insecure Get: %v", err)
			}
			if st := in.Stats(); st.Untrusted != 1 {
				t.Errorf("insecure stats %+v", st)
			}
		})
	}
}

// TestLayeredEveryKindSigned: results, manifests, plans and derived
// digests are all checked; machine-local kinds are never taken from the
// shared store, signed or not.
func TestLayeredEveryKindSigned(t *testing.T) {
	s := newTrustSetup(t)
	w := &Layered{Local: NewDirStore(t.TempDir()), Remote: s.shared, Sign: s.ci, Trusted: s.trusted}
	for _, kind := range []Kind{KindResult, KindManifest, KindPlan, KindDerived} {
		key := SumBytes([]byte("kind " + kind))
		if err := w.Put(key, &Entry{Kind: kind, Record: []byte("record of " + kind)}); err != nil {
			t.Fatal(err)
		}
		unsigned := SumBytes([]byte("unsigned kind " + kind))
		if err := s.shared.Put(unsigned, &Entry{Kind: kind, Record: []byte("record of " + kind)}); err != nil {
			t.Fatal(err)
		}
		r, _ := s.reader(t, false)
		if e, err := r.Get(key); err != nil || string(e.Record) != "record of "+string(kind) {
			t.Errorf("%s signed: %v", kind, err)
		}
		if _, err := r.Get(unsigned); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s unsigned: %v, want a miss", kind, err)
		}
		if st := r.Stats(); st.Hits != 1 || st.Misses != 1 || st.Untrusted != 1 {
			t.Errorf("%s: stats %+v", kind, st)
		}
	}
	for _, kind := range []Kind{KindTool, KindLast} {
		key := SumBytes([]byte("kind " + kind))
		if err := s.shared.Put(key, signed(s.ci, key, &Entry{Kind: kind, Record: []byte("x")})); err != nil {
			t.Fatal(err)
		}
		for _, insecure := range []bool{false, true} {
			r, debug := s.reader(t, insecure)
			if _, err := r.Get(key); !errors.Is(err, ErrNotFound) {
				t.Errorf("signed %s from the shared store (insecure %v): %v, want a miss", kind, insecure, err)
			}
			if len(*debug) != 1 || !strings.Contains((*debug)[0], "never shared") {
				t.Errorf("debug %q", *debug)
			}
		}
	}
}

// TestLayeredNoTrustedKeys: with no trusted key and not insecure, the
// shared store is not used at all (not even asked), with one warning.
func TestLayeredNoTrustedKeys(t *testing.T) {
	for _, trusted := range []*trust.Keyring{nil, trust.NewKeyring()} {
		down := &failingStore{}
		var warnings []string
		l := &Layered{Local: NewDirStore(t.TempDir()), Remote: down, Name: "redis://cache:6379", Sign: signingKey(t, "ci"),
			Trusted: trusted, Warn: func(m string) { warnings = append(warnings, m) }}
		key := SumBytes([]byte("result"))
		if _, err := l.Get(key); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get: %v", err)
		}
		if err := l.Put(key, layeredEntry(t, KindResult, "object")); err != nil {
			t.Fatal(err)
		}
		if got := readLocalBlob(t, l, key); got != "object" {
			t.Errorf("local entry %q", got)
		}
		l.Remove(key)
		l.Get(key)
		if down.calls != 0 {
			t.Errorf("the shared store was called %d times", down.calls)
		}
		want := "shared cache redis://cache:6379: no trusted keys (OFFCC_TRUSTED_CACHE_KEYS) and not marked insecure (OFFCC_REMOTE_CACHE_INSECURE=1); using the local cache only"
		if len(warnings) != 1 || warnings[0] != want {
			t.Errorf("warnings %q, want one: %q", warnings, want)
		}
		if st := l.Stats(); st != (RemoteStats{}) {
			t.Errorf("stats %+v", st)
		}
	}
	if SharedCacheOff(nil, true) != "" || SharedCacheOff(nil, false) != NoTrustedKeys {
		t.Error("SharedCacheOff")
	}
}

// TestLayeredVerifyOnly: a machine that trusts keys but has none to sign
// with reads the shared store and never writes or removes there.
func TestLayeredVerifyOnly(t *testing.T) {
	s := newTrustSetup(t)
	r, _ := s.reader(t, false)
	key := SumBytes([]byte("mine"))
	if err := r.Put(key, layeredEntry(t, KindResult, "mine")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.shared.Get(key); err == nil {
		t.Error("a machine without a signing key wrote to the shared store")
	}
	if got := readLocalBlob(t, r, s.keyA); got != "right" {
		t.Errorf("read %q", got)
	}
	r.Remove(s.keyA)
	if _, err := s.shared.Get(s.keyA); err != nil {
		t.Error("a machine without a signing key removed a shared entry")
	}
	if st := r.Stats(); st.Stores != 0 || st.Hits != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestLayeredUntrustedSigner: a machine whose signing key is not one of
// the keys it trusts for the cache (a developer's build farm key) writes
// nothing to the shared store.
func TestLayeredUntrustedSigner(t *testing.T) {
	s := newTrustSetup(t)
	dev := &Layered{Local: NewDirStore(t.TempDir()), Remote: s.shared, Sign: s.rogue, Trusted: s.trusted}
	key := SumBytes([]byte("mine"))
	if err := dev.Put(key, layeredEntry(t, KindResult, "mine")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.shared.Get(key); err == nil {
		t.Error("an untrusted signing key wrote to the shared store")
	}
	if got := readLocalBlob(t, dev, s.keyA); got != "right" {
		t.Errorf("read %q", got)
	}
}

// TestLayeredInsecure: insecure without a key writes unsigned entries and
// takes them; with a key it signs what it writes.
func TestLayeredInsecure(t *testing.T) {
	shared := NewDirStore(t.TempDir())
	a := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared, Insecure: true}
	b := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared, Insecure: true}
	key := SumBytes([]byte("result"))
	if err := a.Put(key, layeredEntry(t, KindResult, "object")); err != nil {
		t.Fatal(err)
	}
	if e, err := shared.Get(key); err != nil || e.Signature != nil {
		t.Fatalf("insecure write: %v, signature %v", err, e)
	}
	if got := readLocalBlob(t, b, key); got != "object" {
		t.Errorf("insecure read %q", got)
	}
	if st := b.Stats(); st.Hits != 1 || st.Untrusted != 1 {
		t.Errorf("stats %+v", st)
	}

	ci := signingKey(t, "ci")
	c := &Layered{Local: NewDirStore(t.TempDir()), Remote: shared, Insecure: true, Sign: ci}
	key2 := SumBytes([]byte("result 2"))
	if err := c.Put(key2, layeredEntry(t, KindResult, "object 2")); err != nil {
		t.Fatal(err)
	}
	e, err := shared.Get(key2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyEntry(trust.NewKeyring(&ci.PublicKey), key2, e); err != nil {
		t.Errorf("insecure with a key wrote an entry that does not verify: %v", err)
	}
}

// TestLayeredPutReplacesUntrusted: a signed Put over a shared entry that
// does not verify (unsigned, from before signing, or planted) replaces
// it; over one that verifies it keeps it, as Put does.
func TestLayeredPutReplacesUntrusted(t *testing.T) {
	s := newTrustSetup(t)
	key := SumBytes([]byte("planted"))
	if err := s.shared.Put(key, layeredEntry(t, KindResult, "poison")); err != nil {
		t.Fatal(err)
	}
	w := &Layered{Local: NewDirStore(t.TempDir()), Remote: s.shared, Sign: s.ci, Trusted: s.trusted}
	if err := w.Put(key, layeredEntry(t, KindResult, "good")); err != nil {
		t.Fatal(err)
	}
	r, _ := s.reader(t, false)
	if got := readLocalBlob(t, r, key); got != "good" {
		t.Errorf("after a signed Put over a planted entry: %q", got)
	}
	// A verified entry is kept.
	if err := w.Put(s.keyA, layeredEntry(t, KindResult, "other")); err != nil {
		t.Fatal(err)
	}
	r2, _ := s.reader(t, false)
	if got := readLocalBlob(t, r2, s.keyA); got != "right" {
		t.Errorf("a signed entry was replaced by Put: %q", got)
	}
	if st := w.Stats(); st.Stores != 1 {
		t.Errorf("writer stats %+v, want the one store", st)
	}
}
