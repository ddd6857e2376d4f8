package cache

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/offcc/offcc/poclbin"
	"github.com/offcc/offcc/trust"
)

// TestSignEntry: a signature binds the entry to its key and to every
// field of its index; a blob's path, the entry's use time and mode bits
// beyond the permissions are not in it (a store does not keep them).
func TestSignEntry(t *testing.T) {
	k := signingKey(t, "ci")
	ring := trust.NewKeyring(&k.PublicKey)
	key := SumBytes([]byte("key"))
	e := &Entry{Kind: KindResult, Record: []byte(`{"kind":"compile"}`),
		Blobs: []Blob{{Name: "out0", Size: 3, Sum: SumBytes([]byte("abc")), Mode: 0o644, Path: "/tmp/a"}}}
	SignEntry(k, key, e)
	if got, err := VerifyEntry(ring, key, e); err != nil || got.ID != k.ID {
		t.Fatalf("VerifyEntry: %v, %v", got, err)
	}
	// What a store gives back verifies.
	back, err := DecodeIndex(EncodeIndex(e))
	if err != nil {
		t.Fatal(err)
	}
	back.Blobs[0].Path, back.Blobs[0].Mode = "/elsewhere", back.Blobs[0].Mode|0o100000
	if _, err := VerifyEntry(ring, key, back); err != nil {
		t.Errorf("the decoded index does not verify: %v", err)
	}
	// The signature does not sign itself: signing again verifies too.
	SignEntry(k, key, back)
	if _, err := VerifyEntry(ring, key, back); err != nil {
		t.Errorf("re-signed: %v", err)
	}

	for name, change := range map[string]func(e *Entry) Sum{
		"another key":  func(e *Entry) Sum { return SumBytes([]byte("other key")) },
		"kind":         func(e *Entry) Sum { e.Kind = KindManifest; return key },
		"record":       func(e *Entry) Sum { e.Record = append(e.Record, ' '); return key },
		"blob name":    func(e *Entry) Sum { e.Blobs[0].Name = "out1"; return key },
		"blob size":    func(e *Entry) Sum { e.Blobs[0].Size++; return key },
		"blob digest":  func(e *Entry) Sum { e.Blobs[0].Sum[0] ^= 1; return key },
		"blob mode":    func(e *Entry) Sum { e.Blobs[0].Mode = 0o755; return key },
		"blob added":   func(e *Entry) Sum { e.Blobs = append(e.Blobs, Blob{Name: "out1", Sum: SumBytes(nil)}); return key },
		"blob removed": func(e *Entry) Sum { e.Blobs = nil; return key },
	} {
		c := *e
		c.Blobs = append([]Blob(nil), e.Blobs...)
		k2 := change(&c)
		if _, err := VerifyEntry(ring, k2, &c); err == nil || !errors.Is(err, trust.ErrUntrusted) {
			t.Errorf("%s changed: %v, want ErrUntrusted", name, err)
		}
	}
	// A signature of another domain over the same bytes does not verify.
	c := *e
	c.Signature = k.Sign("job", signedBytes(key, e))
	if _, err := VerifyEntry(ring, key, &c); err == nil {
		t.Errorf("a job signature verifies as an entry's")
	}
}

// signedCache returns a cache in a fresh directory with the given keys.
func signedCache(t testing.TB, keys *trust.Settings) *Cache {
	c, _ := arCache(t)
	c.Keys = keys
	return c
}

// rewriteArchive applies f to each file of an archive.
func rewriteArchive(t *testing.T, data []byte, f func(e *poclbin.Entry)) []byte {
	t.Helper()
	a, err := poclbin.ParseArchive(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Entries {
		f(&a.Entries[i])
	}
	var buf bytes.Buffer
	if err := poclbin.WriteArchive(&buf, a); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestExportSigns: with a signing key every index in the archive is
// signed for its key, replacing a signature the entry had; without one, an
// entry's own signature is kept.
func TestExportSigns(t *testing.T) {
	ci, rogue := signingKey(t, "ci"), signingKey(t, "rogue")
	ring := trust.NewKeyring(&ci.PublicKey)
	a := signedCache(t, &trust.Settings{SigningKey: ci})
	keys := arFill(t, a)
	// One entry already signed by another key.
	e, _ := a.Store.Get(keys[0])
	SignEntry(rogue, keys[0], e)
	a.Store.Replace(keys[0], e)

	data, n := arExport(t, a, nil)
	if n != len(keys) {
		t.Fatalf("exported %d", n)
	}
	arc, err := poclbin.ParseArchive(data)
	if err != nil {
		t.Fatal(err)
	}
	indexes := 0
	for _, ae := range arc.Entries {
		if !strings.HasSuffix(ae.Path, "/index") {
			continue
		}
		indexes++
		key, _ := ParseSum(strings.Split(ae.Path, "/")[1])
		e, err := DecodeIndex(ae.Data)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := VerifyEntry(ring, key, e); err != nil {
			t.Errorf("%s: %v", ae.Path, err)
		}
	}
	if indexes != len(keys) {
		t.Errorf("%d indexes", indexes)
	}
	// The local entries are not changed by the export.
	if e, _ := a.Store.Get(keys[1]); e.Signature != nil {
		t.Errorf("export signed the local entry")
	}

	// Without a key: the rogue signature stays, the rest are unsigned.
	a.Keys = nil
	data, _ = arExport(t, a, []Sum{keys[0], keys[1]})
	arc, _ = poclbin.ParseArchive(data)
	for _, ae := range arc.Entries {
		if strings.HasSuffix(ae.Path, "/index") {
			e, _ := DecodeIndex(ae.Data)
			wantSigned := strings.Contains(ae.Path, keys[0].String())
			if (e.Signature != nil) != wantSigned || wantSigned && e.Signature.Key != rogue.ID {
				t.Errorf("%s: signature %+v", ae.Path, e.Signature)
			}
		}
	}
}

// TestImportTrust: an archive imports only when a trusted key signed
// every entry it would import; anything else refuses it whole, with one
// line naming the first bad entry, unless TrustArchive. Plans and
// machine-local entries are never imported, and counted.
func TestImportTrust(t *testing.T) {
	ci, rogue := signingKey(t, "ci"), signingKey(t, "rogue")
	trusted := &trust.Settings{CacheWriters: trust.NewKeyring(&ci.PublicKey)}

	src := signedCache(t, &trust.Settings{SigningKey: ci})
	keys := arFill(t, src) // result, manifest, plan, derived, result
	tool, last := arKey("tool entry"), arKey("last entry")
	arPut(t, src, tool, KindTool, "sha256=00")
	arPut(t, src, last, KindLast, `{"text":"/home/me/x.c"}`)
	all := append(append([]Sum(nil), keys...), tool, last)
	signedArc, n := arExport(t, src, all)
	if n != len(all) {
		t.Fatalf("exported %d", n)
	}
	src.Keys = nil
	unsignedArc, _ := arExport(t, src, all)
	src.Keys = &trust.Settings{SigningKey: rogue}
	rogueArc, _ := arExport(t, src, all)

	importable := map[Sum]bool{keys[0]: true, keys[1]: true, keys[3]: true, keys[4]: true}
	checkImported := func(t *testing.T, c *Cache, res ImportResult) {
		t.Helper()
		if res.Imported != len(importable) || res.Skipped[KindPlan] != 1 || res.Skipped[KindTool] != 1 || res.Skipped[KindLast] != 1 || res.SkippedTotal() != 3 {
			t.Errorf("result %+v", res)
		}
		got := arEntries(t, c)
		if len(got) != len(importable) {
			t.Errorf("imported %d entries, want %d", len(got), len(importable))
		}
		for k := range got {
			if !importable[k] {
				t.Errorf("%s (%s) imported", k, got[k].kind)
			}
		}
	}

	t.Run("signed", func(t *testing.T) {
		c := signedCache(t, trusted)
		res, err := c.Import(signedArc, ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkImported(t, c, res)
		// The entries keep their signatures (a later export without a
		// key passes them on).
		if e, err := c.Store.Get(keys[0]); err != nil || e.Signature == nil || e.Signature.Key != ci.ID {
			t.Errorf("imported entry's signature: %v, %v", e, err)
		}
	})

	first := func(keys []Sum) Sum { // the first importable key in key order
		var best Sum
		for _, k := range keys {
			if importable[k] && (best.IsZero() || k.String() < best.String()) {
				best = k
			}
		}
		return best
	}(all)
	moved := arKey("moved")
	movedArc := rewriteArchive(t, signedArc, func(e *poclbin.Entry) {
		// keys[4]'s files moved under another key.
		if d := entryRelDir(keys[4]); strings.HasPrefix(e.Path, d+"/") {
			e.Path = entryRelDir(moved) + strings.TrimPrefix(e.Path, d)
		}
	})
	// An unsigned entry among signed ones.
	mixedArc := rewriteArchive(t, signedArc, func(e *poclbin.Entry) {
		if e.Path == entryRelDir(keys[1])+"/index" {
			x, _ := DecodeIndex(e.Data)
			x.Signature = nil
			e.Data = EncodeIndex(x)
		}
	})
	for _, tc := range []struct {
		name    string
		keys    *trust.Settings
		archive []byte
		entry   Sum
		want    string
	}{
		{"unsigned", trusted, unsignedArc, first, "unsigned"},
		{"signed by an untrusted key", trusted, rogueArc, first, "unknown key"},
		{"entry moved to another key", trusted, movedArc, moved, "does not match"},
		{"one unsigned entry among signed", trusted, mixedArc, keys[1], "unsigned"},
		{"no trusted keys", nil, signedArc, first, "no trusted keys"},
		{"no trusted keys (empty keyring)", &trust.Settings{CacheWriters: trust.NewKeyring()}, signedArc, first, "no trusted keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, parent := arCache(t)
			c.Keys = tc.keys
			before := arFiles(t, parent)
			res, err := c.Import(tc.archive, ImportOptions{})
			if err == nil {
				t.Fatalf("imported: %+v", res)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "cache import: ") || !strings.Contains(msg, tc.want) ||
				!strings.Contains(msg, fmt.Sprintf("%q", entryRelDir(tc.entry)+"/index")) || !strings.Contains(msg, "--trust-archive") {
				t.Errorf("error %q: want one line naming %s/index and saying %q", msg, entryRelDir(tc.entry), tc.want)
			}
			if res.Imported != 0 {
				t.Errorf("result %+v", res)
			}
			if after := arFiles(t, parent); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("a refused import changed the files:\nbefore %q\nafter  %q", before, after)
			}

			// --trust-archive takes it (plans and machine-local
			// entries still skipped).
			c2 := signedCache(t, tc.keys)
			res, err = c2.Import(tc.archive, ImportOptions{TrustArchive: true})
			if err != nil {
				t.Fatalf("with TrustArchive: %v", err)
			}
			if res.Imported != len(importable) || res.SkippedTotal() != 3 {
				t.Errorf("with TrustArchive: %+v", res)
			}
		})
	}

	// An archive of plans and machine-local entries only imports
	// nothing, needing no signature.
	src.Keys = nil
	onlySkipped, _ := arExport(t, src, []Sum{keys[2], tool, last})
	c := signedCache(t, nil)
	res, err := c.Import(onlySkipped, ImportOptions{})
	if err != nil || res.Imported != 0 || res.SkippedTotal() != 3 {
		t.Errorf("archive of skipped kinds: %+v, %v", res, err)
	}
	if got := arEntries(t, c); len(got) != 0 {
		t.Errorf("imported %v", got)
	}
}
