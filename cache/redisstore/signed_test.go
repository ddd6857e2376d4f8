package redisstore_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/trust"
)

// The shared cache's signatures against a real Redis server and an
// attacker who can write to it (cache.Layered over a Store).

func genKey(t *testing.T, name string) *trust.PrivateKey {
	t.Helper()
	k, err := trust.Generate(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// machine is a Layered over the shared Redis store with a fresh local
// cache: a CI runner when sign is set, a developer's machine otherwise.
func machine(t *testing.T, s *redisstore.Store, sign *trust.PrivateKey, trusted *trust.Keyring, insecure bool) *cache.Layered {
	return &cache.Layered{Local: cache.NewDirStore(t.TempDir()), Remote: s, Name: s.Name(),
		Sign: sign, Trusted: trusted, Insecure: insecure,
		Warn: func(m string) { t.Errorf("warning: %s", m) }}
}

// object returns the object a machine has for key: its restored blob, or
// on a miss the one it builds (build) and stores.
func object(t *testing.T, l *cache.Layered, key cache.Sum, build string) (string, bool) {
	t.Helper()
	e, err := l.Get(key)
	if errors.Is(err, cache.ErrNotFound) {
		b := blob(t, t.TempDir(), "out0", []byte(build))
		if err := l.Put(key, &cache.Entry{Kind: cache.KindResult, Record: []byte(`{"kind":"compile"}`), Blobs: []cache.Blob{b}}); err != nil {
			t.Fatal(err)
		}
		return build, false
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.OpenBlob(e.Blobs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), true
}

// TestSignedEntriesAgainstAttacker: CI stores objects A and B; an
// attacker copies the index of B (offcc:e:<keyB>) over A's. Without
// signatures (insecure) a fresh client restores B's object for A and calls
// it a hit; with them A's entry is a miss, the client builds A, and its
// object is right. So are an entry re-signed with the attacker's key, an
// unsigned one, a tampered record and a tampered blob list.
func TestSignedEntriesAgainstAttacker(t *testing.T) {
	s, _, rc := setup(t, redisstore.Options{})
	ctx := context.Background()
	ci, attacker := genKey(t, "ci"), genKey(t, "attacker")
	trusted := trust.NewKeyring(&ci.PublicKey)
	keyA, keyB := key("compile a.c"), key("compile b.c")
	runner := machine(t, s, ci, trusted, false)
	if got, hit := object(t, runner, keyA, "object of a.c"); hit || got != "object of a.c" {
		t.Fatal("CI hit on an empty cache")
	}
	object(t, runner, keyB, "object of b.c")
	if st := runner.Stats(); st.Stores != 2 {
		t.Fatalf("CI stored %+v", st)
	}
	entryA, entryB := "offcc:e:"+keyA.String(), "offcc:e:"+keyB.String()
	good, err := rc.Get(ctx, entryA).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	indexB, err := rc.Get(ctx, entryB).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	// A developer's machine restores A, signed.
	if got, hit := object(t, machine(t, s, nil, trusted, false), keyA, "object of a.c"); !hit || got != "object of a.c" {
		t.Fatalf("developer: %q, hit %v", got, hit)
	}

	decodedB, err := cache.DecodeIndex(indexB)
	if err != nil {
		t.Fatal(err)
	}
	resigned := *decodedB
	cache.SignEntry(attacker, keyA, &resigned)
	unsigned := *decodedB
	unsigned.Signature = nil
	decodedA, _ := cache.DecodeIndex(good)
	record := *decodedA
	record.Record = []byte(`{"kind":"compile","stderr":"all good"}`)
	blobs := *decodedA
	blobs.Blobs = decodedB.Blobs
	for _, tc := range []struct {
		name  string
		index []byte
		// insecure is what a client without signatures restores (a
		// tampered record keeps A's object, with the attacker's
		// diagnostics).
		insecure string
	}{
		{"B's index copied over A's", indexB, "object of b.c"},
		{"re-signed by the attacker's key", cache.EncodeIndex(&resigned), "object of b.c"},
		{"unsigned", cache.EncodeIndex(&unsigned), "object of b.c"},
		{"tampered record", cache.EncodeIndex(&record), "object of a.c"},
		{"tampered blob list", cache.EncodeIndex(&blobs), "object of b.c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := rc.Set(ctx, entryA, tc.index, 0).Err(); err != nil {
				t.Fatal(err)
			}
			// Without signatures the attack works.
			if got, hit := object(t, machine(t, s, nil, nil, true), keyA, "object of a.c"); !hit || got != tc.insecure {
				t.Errorf("insecure client: %q, hit %v; want the attacker's hit, %q", got, hit, tc.insecure)
			}
			dev := machine(t, s, nil, trusted, false)
			var debug []string
			dev.Debug = func(m string) { debug = append(debug, m) }
			got, hit := object(t, dev, keyA, "object of a.c")
			if hit || got != "object of a.c" {
				t.Errorf("client: %q, hit %v; want a miss and A's object", got, hit)
			}
			if st := dev.Stats(); st.Untrusted != 1 || st.Misses != 1 || st.Hits != 0 || st.Errors != 0 {
				t.Errorf("client stats %+v", st)
			}
			if len(debug) != 1 || !strings.Contains(debug[0], "not signed by a trusted key") {
				t.Errorf("debug %q", debug)
			}
			// The client has no signing key: Redis is not written.
			if now, _ := rc.Get(ctx, entryA).Bytes(); string(now) != string(tc.index) {
				t.Errorf("a client without a signing key wrote the shared entry")
			}
			// Its local copy is its own build's, and stays a hit.
			if got, hit := object(t, dev, keyA, "rebuilt"); !hit || got != "object of a.c" {
				t.Errorf("client's second lookup: %q, hit %v", got, hit)
			}
		})
	}

	// CI, missing on the planted entry, replaces it with a signed one.
	rc.Set(ctx, entryA, indexB, 0)
	fresh := machine(t, s, ci, trusted, false)
	if got, hit := object(t, fresh, keyA, "object of a.c"); hit || got != "object of a.c" {
		t.Errorf("CI over the planted entry: %q, hit %v", got, hit)
	}
	if got, hit := object(t, machine(t, s, nil, trusted, false), keyA, "x"); !hit || got != "object of a.c" {
		t.Errorf("after CI's repair: %q, hit %v", got, hit)
	}
	if n, _ := rc.Exists(ctx, entryA).Result(); n != 1 {
		t.Error("entry gone")
	}
}
