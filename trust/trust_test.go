package trust

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newPair generates a key pair named name and writes it under dir.
func newPair(t testing.TB, dir, name string) (*PrivateKey, string, string) {
	t.Helper()
	k, err := Generate(name)
	if err != nil {
		t.Fatal(err)
	}
	keyPath, pubPath, err := WriteKeyPair(filepath.Join(dir, name), k)
	if err != nil {
		t.Fatal(err)
	}
	return k, keyPath, pubPath
}

// TestKeyPairRoundTrip: a generated pair written and loaded again is the
// same key, the private file 0600 and the public one readable; what the
// loaded key signs, the loaded public key verifies.
func TestKeyPairRoundTrip(t *testing.T) {
	dir := t.TempDir()
	k, keyPath, pubPath := newPair(t, dir, "ci-cache")
	if keyPath != filepath.Join(dir, "ci-cache.key") || pubPath != filepath.Join(dir, "ci-cache.pub") {
		t.Errorf("paths %s, %s", keyPath, pubPath)
	}
	for path, want := range map[string]os.FileMode{keyPath: 0o600, pubPath: 0o644} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		// The umask may take bits away from the public key, never add.
		if got := fi.Mode().Perm(); got != want && !(path == pubPath && got&^want == 0) {
			t.Errorf("%s: mode %04o, want %04o", path, got, want)
		}
	}
	priv, err := LoadPrivateKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := LoadPublicKey(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	if priv.Name != "ci-cache" || pub.Name != "ci-cache" || priv.ID != k.ID || pub.ID != k.ID || !pub.Key.Equal(k.Key) || !priv.Key.Equal(k.Key) {
		t.Errorf("loaded %+v / %+v, generated %+v", priv.PublicKey, pub, k.PublicKey)
	}
	if len(k.ID) != 16 || k.ID != KeyID(k.Key) {
		t.Errorf("ID %q", k.ID)
	}
	sig := priv.Sign("entry", []byte("message"))
	if got, err := NewKeyring(pub).Verify("entry", []byte("message"), sig); err != nil || got.Name != "ci-cache" {
		t.Errorf("Verify: %v, %v", got, err)
	}
	// The public file is one line naming the key, without its seed.
	text, _ := os.ReadFile(pubPath)
	if strings.Count(string(text), "\n") != 1 || !strings.HasPrefix(string(text), "offcc-ed25519 ") || !strings.HasSuffix(string(text), " ci-cache\n") {
		t.Errorf("public key file %q", text)
	}
	if bytes.Contains(text, []byte(base64.StdEncoding.EncodeToString(k.key.Seed()))) {
		t.Errorf("the public key file holds the seed")
	}
}

// TestWriteKeyPairRefusesOverwrite: neither file of an existing pair (nor
// of half of one) is overwritten.
func TestWriteKeyPairRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	_, keyPath, _ := newPair(t, dir, "ci")
	before, _ := os.ReadFile(keyPath)
	k2, _ := Generate("ci")
	if _, _, err := WriteKeyPair(filepath.Join(dir, "ci"), k2); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("second WriteKeyPair: %v", err)
	}
	if after, _ := os.ReadFile(keyPath); !bytes.Equal(before, after) {
		t.Errorf("the private key was overwritten")
	}
	// Only the public half there: still refused, and no private key
	// left behind.
	os.Remove(keyPath)
	if _, _, err := WriteKeyPair(filepath.Join(dir, "ci"), k2); err == nil {
		t.Errorf("WriteKeyPair over a public key: no error")
	}
	if _, err := os.Stat(keyPath); !os.IsNotExist(err) {
		t.Errorf("a refused WriteKeyPair left %s", keyPath)
	}
}

// TestLoadPrivateKeyRefusesReadable: like ssh, a private key that others
// may read is refused, naming the fix.
func TestLoadPrivateKeyRefusesReadable(t *testing.T) {
	dir := t.TempDir()
	_, keyPath, _ := newPair(t, dir, "ci")
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		if err := os.Chmod(keyPath, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadPrivateKey(keyPath); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
	os.Chmod(keyPath, 0o400)
	if _, err := LoadPrivateKey(keyPath); err != nil {
		t.Errorf("mode 0400: %v", err)
	}
}

// TestLoadBadKeys: files that are not keys, or the wrong half, are
// refused with an error naming the file.
func TestLoadBadKeys(t *testing.T) {
	dir := t.TempDir()
	_, keyPath, pubPath := newPair(t, dir, "ci")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	short := base64.StdEncoding.EncodeToString(make([]byte, 31))
	for name, text := range map[string]string{
		"empty":       "",
		"two fields":  "offcc-ed25519 AAAA",
		"other tag":   "ssh-ed25519 " + base64.StdEncoding.EncodeToString(make([]byte, 32)) + " ci",
		"short key":   "offcc-ed25519 " + short + " ci",
		"not base64":  "offcc-ed25519 !!!! ci",
		"bad name":    "offcc-ed25519 " + base64.StdEncoding.EncodeToString(make([]byte, 32)) + " -ci",
		"huge":        strings.Repeat("x", 5000),
		"private tag": "offcc-ed25519-private " + base64.StdEncoding.EncodeToString(make([]byte, 32)) + " ci",
	} {
		p := write(strings.ReplaceAll(name, " ", "_")+".pub", text)
		if k, err := LoadPublicKey(p); err == nil || !strings.Contains(err.Error(), p) && name != "private tag" {
			t.Errorf("public %s: %v, %v", name, k, err)
		}
	}
	// The halves swapped: the public key is said to be one, whatever its
	// mode (a .pub is 0644: no chmod advice for it).
	for _, mode := range []os.FileMode{0o644, 0o600} {
		os.Chmod(pubPath, mode)
		if _, err := LoadPrivateKey(pubPath); err == nil || !strings.Contains(err.Error(), "a public key, not a private one") || strings.Contains(err.Error(), "chmod") {
			t.Errorf("LoadPrivateKey of a public key (%04o): %v", mode, err)
		}
	}
	// A file that is no key, readable by all, and a directory: not a
	// private key, with no chmod advice either.
	other := write("notes.txt", "hello\n")
	os.Chmod(other, 0o644)
	for _, p := range []string{other, dir} {
		if _, err := LoadPrivateKey(p); err == nil || !strings.Contains(err.Error(), p+": not an offcc private key") || strings.Contains(err.Error(), "chmod") {
			t.Errorf("LoadPrivateKey(%s): %v", p, err)
		}
	}
	if _, err := LoadPublicKey(keyPath); err == nil {
		t.Errorf("LoadPublicKey of a private key: no error")
	}
	if _, err := LoadPrivateKey(filepath.Join(dir, "missing.key")); err == nil {
		t.Errorf("LoadPrivateKey of a missing file: no error")
	}
	if _, err := Generate("../evil"); err == nil {
		t.Errorf("Generate with a bad name: no error")
	}
}

// TestSignatureDomains: a signature verifies for its own domain and
// message only, with a key the keyring holds.
func TestSignatureDomains(t *testing.T) {
	k, _ := Generate("ci")
	other, _ := Generate("other")
	ring := NewKeyring(&k.PublicKey)
	msg := []byte("job record")
	sig := k.Sign("job", msg)
	if _, err := ring.Verify("job", msg, sig); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	tampered := bytes.Clone(msg)
	tampered[0] ^= 1
	badSig := &Signature{Key: sig.Key, Sig: bytes.Clone(sig.Sig)}
	badSig.Sig[5] ^= 1
	for _, tc := range []struct {
		name   string
		ring   *Keyring
		domain string
		msg    []byte
		sig    *Signature
		want   string
	}{
		{"another domain", ring, "entry", msg, sig, "does not match"},
		{"a domain that is a prefix", ring, "jo", append([]byte("b\x00"), msg...), sig, "does not match"},
		{"tampered message", ring, "job", tampered, sig, "does not match"},
		{"tampered signature", ring, "job", msg, badSig, "does not match"},
		{"short signature", ring, "job", msg, &Signature{Key: sig.Key, Sig: sig.Sig[:10]}, "does not match"},
		{"unknown key", NewKeyring(&other.PublicKey), "job", msg, sig, "unknown key"},
		{"signed by another key under this key's ID", ring, "job", msg, &Signature{Key: k.ID, Sig: other.Sign("job", msg).Sig}, "does not match"},
		{"unsigned", ring, "job", msg, nil, "unsigned"},
		{"nil keyring", nil, "job", msg, sig, "no keys are trusted"},
		{"empty keyring", NewKeyring(), "job", msg, sig, "unknown key"},
	} {
		got, err := tc.ring.Verify(tc.domain, tc.msg, tc.sig)
		if err == nil || got != nil || !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, %v; want ErrUntrusted saying %q", tc.name, got, err, tc.want)
		}
	}
}

// TestLoadKeyring: a list of files and directories, by ':' or ','; a
// directory gives its *.pub files (not its subdirectories'); an empty
// list is an empty keyring; a bad file fails the whole list.
func TestLoadKeyring(t *testing.T) {
	dir := t.TempDir()
	ring := filepath.Join(dir, "ring")
	os.Mkdir(ring, 0o777)
	a, _, _ := newPair(t, ring, "a")
	b, _, _ := newPair(t, ring, "b")
	os.Mkdir(filepath.Join(ring, "sub"), 0o777)
	newPair(t, filepath.Join(ring, "sub"), "deep")
	os.WriteFile(filepath.Join(ring, "README"), []byte("not a key"), 0o644)
	c, _, cPub := newPair(t, dir, "c")

	r, err := LoadKeyring(ring + ":" + cPub)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "a,b,c" || r.Len() != 3 {
		t.Errorf("keyring %s (%d)", got, r.Len())
	}
	for _, k := range []*PrivateKey{a, b, c} {
		if _, err := r.Verify("entry", []byte("x"), k.Sign("entry", []byte("x"))); err != nil {
			t.Errorf("%s: %v", k.Name, err)
		}
	}
	if r2, err := LoadKeyring(" " + cPub + " , "); err != nil || r2.Len() != 1 {
		t.Errorf("comma list: %v, %v", r2.Names(), err)
	}
	for _, empty := range []string{"", " ", ":", ","} {
		if r, err := LoadKeyring(empty); err != nil || r.Len() != 0 {
			t.Errorf("LoadKeyring(%q): %v, %v", empty, r, err)
		}
	}
	if _, err := LoadKeyring(filepath.Join(dir, "missing.pub")); err == nil {
		t.Errorf("a missing file: no error")
	}
	os.WriteFile(filepath.Join(ring, "bad.pub"), []byte("garbage"), 0o644)
	if _, err := LoadKeyring(ring); err == nil || !strings.Contains(err.Error(), "bad.pub") {
		t.Errorf("a directory with a bad .pub: %v", err)
	}
	var nilRing *Keyring
	if nilRing.Len() != 0 || len(nilRing.Names()) != 0 {
		t.Errorf("the nil keyring is not empty")
	}
}

// TestFromEnv: each variable fills its field; a bad one is an error
// naming it.
func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	k, keyPath, pubPath := newPair(t, dir, "ci")
	env := map[string]string{EnvSigningKey: keyPath, EnvCacheWriters: pubPath, EnvWorkers: dir}
	s, err := FromEnv(func(n string) string { return env[n] })
	if err != nil {
		t.Fatal(err)
	}
	if s.SigningKey == nil || s.SigningKey.ID != k.ID || s.CacheWriters.Len() != 1 || s.Workers.Len() != 1 || s.Clients.Len() != 0 {
		t.Errorf("settings %+v", s)
	}
	if s, err := FromEnv(func(string) string { return "" }); err != nil || s.SigningKey != nil || s.CacheWriters.Len() != 0 {
		t.Errorf("empty environment: %+v, %v", s, err)
	}
	for _, name := range []string{EnvSigningKey, EnvCacheWriters, EnvClients} {
		bad := map[string]string{name: filepath.Join(dir, "missing")}
		if _, err := FromEnv(func(n string) string { return bad[n] }); err == nil || !strings.HasPrefix(err.Error(), name+": ") {
			t.Errorf("bad %s: %v", name, err)
		}
	}
	os.Chmod(keyPath, 0o644)
	if _, err := FromEnv(func(n string) string { return env[n] }); err == nil || !strings.Contains(err.Error(), EnvSigningKey) {
		t.Errorf("a readable signing key: %v", err)
	}
}

// FuzzParsePublicKey: ParsePublicKey never panics, and what it accepts
// is a 32-byte key with a valid name whose file text parses back to the
// same key.
func FuzzParsePublicKey(f *testing.F) {
	k, _ := Generate("ci")
	f.Add(string(k.PublicText()))
	f.Add(string(k.PrivateText()))
	f.Add("offcc-ed25519 " + base64.StdEncoding.EncodeToString(make([]byte, 32)) + " a@b.c-d_e")
	f.Add("offcc-ed25519 " + base64.StdEncoding.EncodeToString(make([]byte, 33)) + " x")
	f.Add("offcc-ed25519 AAAA== -x")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParsePublicKey(text)
		if err != nil {
			if p != nil {
				t.Fatalf("a key and an error: %v", err)
			}
			return
		}
		if len(p.Key) != ed25519.PublicKeySize || !validName(p.Name) || p.ID != KeyID(p.Key) {
			t.Fatalf("accepted %+v", p)
		}
		again, err := ParsePublicKey(string(p.PublicText()))
		if err != nil || again.Name != p.Name || !again.Key.Equal(p.Key) {
			t.Fatalf("PublicText does not parse back: %+v, %v", again, err)
		}
	})
}

func TestKeyringTrusts(t *testing.T) {
	a, _ := Generate("a")
	b, _ := Generate("b")
	r := NewKeyring(&a.PublicKey)
	if !r.Trusts(&a.PublicKey) || r.Trusts(&b.PublicKey) || r.Trusts(nil) {
		t.Error("Trusts")
	}
	impostor := b.PublicKey
	impostor.ID = a.ID
	if r.Trusts(&impostor) {
		t.Error("a key under another's ID is trusted")
	}
	var nilRing *Keyring
	if nilRing.Trusts(&a.PublicKey) {
		t.Error("the nil keyring trusts a key")
	}
}
