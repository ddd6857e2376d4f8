// Package trust holds offcc's signing keys and the lists of keys it
// trusts: Ed25519 (crypto/ed25519) key pairs that sign the build farm's
// job records and results and the shared cache's entries, so that a
// reader believes a record only when a key it trusts signed it, whoever
// could write to the Redis server in between.
//
// Keys are files, one line each, in the manner of OpenSSH's:
//
//	NAME.pub   offcc-ed25519 <base64 public key> NAME
//	NAME.key   offcc-ed25519-private <base64 seed> NAME   (mode 0600)
//
// A key is named in signatures by its ID: the first 16 hex digits of the
// SHA-256 of its public key. Every signature is over a domain (what is
// signed: "job", "job-result", "entry") and the message, so that a
// signature of one kind of record never verifies as another's.
package trust

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const (
	publicTag  = "offcc-ed25519"
	privateTag = "offcc-ed25519-private"
	sigContext = "offcc-signature-v1\x00"
)

// PublicKey is a key a reader may trust.
type PublicKey struct {
	// Name is the key's name (the third field of its file).
	Name string
	// ID names the key in signatures (see KeyID).
	ID  string
	Key ed25519.PublicKey
}

// PrivateKey is a signing key.
type PrivateKey struct {
	PublicKey
	key ed25519.PrivateKey
}

// KeyID returns the ID of a public key: 16 hex digits of its SHA-256.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// validName accepts key names of letters, digits, '.', '_', '-' and '@'
// that do not start with '.' or '-'.
func validName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '.' || name[0] == '-' {
		return false
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("._-@", c)) {
			return false
		}
	}
	return true
}

// Generate returns a new key pair named name.
func Generate(name string) (*PrivateKey, error) {
	if !validName(name) {
		return nil, fmt.Errorf("bad key name %q (letters, digits, '.', '_', '-', '@')", name)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &PrivateKey{PublicKey: PublicKey{Name: name, ID: KeyID(pub), Key: pub}, key: priv}, nil
}

// PublicText returns the public key's file: one line.
func (k *PublicKey) PublicText() []byte {
	return []byte(fmt.Sprintf("%s %s %s\n", publicTag, base64.StdEncoding.EncodeToString(k.Key), k.Name))
}

// PrivateText returns the private key's file: one line.
func (k *PrivateKey) PrivateText() []byte {
	return []byte(fmt.Sprintf("%s %s %s\n", privateTag, base64.StdEncoding.EncodeToString(k.key.Seed()), k.Name))
}

// WriteKeyPair writes k as base.key (mode 0600) and base.pub (0644); it
// refuses to overwrite either file.
func WriteKeyPair(base string, k *PrivateKey) (keyPath, pubPath string, err error) {
	keyPath, pubPath = base+".key", base+".pub"
	for _, p := range []string{keyPath, pubPath} {
		if _, err := os.Lstat(p); err == nil {
			return "", "", fmt.Errorf("%s exists: not overwriting a key", p)
		}
	}
	if err := writeNew(keyPath, k.PrivateText(), 0o600); err != nil {
		return "", "", err
	}
	if err := writeNew(pubPath, k.PublicText(), 0o644); err != nil {
		os.Remove(keyPath)
		return "", "", err
	}
	return keyPath, pubPath, nil
}

func writeNew(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// maxKeyFile bounds a key file's size.
const maxKeyFile = 4096

func readKeyFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, maxKeyFile+1)
	n, _ := f.Read(buf)
	if n > maxKeyFile {
		return nil, fmt.Errorf("%s: not a key file (too large)", path)
	}
	fields := strings.Fields(string(buf[:n]))
	if len(fields) != 3 {
		return nil, fmt.Errorf("%s: not an offcc key file (want one line: %s KEY NAME)", path, publicTag)
	}
	return fields, nil
}

// ParsePublicKey reads a public key file's text.
func ParsePublicKey(text string) (*PublicKey, error) {
	f := strings.Fields(text)
	if len(f) != 3 || f[0] != publicTag {
		return nil, fmt.Errorf("not an offcc public key (want: %s KEY NAME)", publicTag)
	}
	raw, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("not an Ed25519 public key")
	}
	if !validName(f[2]) {
		return nil, fmt.Errorf("bad key name %.80q", f[2])
	}
	pub := ed25519.PublicKey(raw)
	return &PublicKey{Name: f[2], ID: KeyID(pub), Key: pub}, nil
}

// LoadPublicKey reads a NAME.pub file.
func LoadPublicKey(path string) (*PublicKey, error) {
	fields, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePublicKey(strings.Join(fields, " "))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return k, nil
}

// LoadPrivateKey reads a NAME.key file. It says what the file is before
// anything else: a public key (NAME.pub) or another file is named so,
// never told to be chmod'ed. Like ssh, it then refuses a private key that
// others than its owner may read.
func LoadPrivateKey(path string) (*PrivateKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	notPrivate := fmt.Errorf("%s: not an offcc private key (want: %s SEED NAME)", path, privateTag)
	if fi.IsDir() {
		return nil, notPrivate
	}
	fields, err := readKeyFile(path)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, err
	case err != nil:
		return nil, notPrivate
	case fields[0] == publicTag:
		return nil, fmt.Errorf("%s: a public key, not a private one: the signing key is the NAME.key (%s SEED NAME, mode 0600) that 'offcc key generate NAME' writes beside NAME.pub", path, privateTag)
	case fields[0] != privateTag:
		return nil, notPrivate
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: a private key others may read (mode %04o; chmod 600 it)", path, fi.Mode().Perm())
	}
	seed, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%s: not an Ed25519 private key", path)
	}
	if !validName(fields[2]) {
		return nil, fmt.Errorf("%s: bad key name %.80q", path, fields[2])
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	return &PrivateKey{PublicKey: PublicKey{Name: fields[2], ID: KeyID(pub), Key: pub}, key: priv}, nil
}

// Signature is a signature and the ID of the key that made it.
type Signature struct {
	Key string `json:"key"`
	Sig []byte `json:"ed25519"`
}

func signed(domain string, msg []byte) []byte {
	b := make([]byte, 0, len(sigContext)+len(domain)+1+len(msg))
	b = append(b, sigContext...)
	b = append(b, domain...)
	b = append(b, 0)
	return append(b, msg...)
}

// Sign signs msg for domain.
func (k *PrivateKey) Sign(domain string, msg []byte) *Signature {
	return &Signature{Key: k.ID, Sig: ed25519.Sign(k.key, signed(domain, msg))}
}

// Keyring is a set of trusted public keys. The nil Keyring trusts no key.
type Keyring struct {
	byID map[string]*PublicKey
}

// NewKeyring returns a keyring of keys.
func NewKeyring(keys ...*PublicKey) *Keyring {
	r := &Keyring{byID: map[string]*PublicKey{}}
	for _, k := range keys {
		r.byID[k.ID] = k
	}
	return r
}

// Len returns the number of keys r trusts.
func (r *Keyring) Len() int {
	if r == nil {
		return 0
	}
	return len(r.byID)
}

// Names returns the names of the keys r trusts, sorted.
func (r *Keyring) Names() []string {
	var names []string
	if r != nil {
		for _, k := range r.byID {
			names = append(names, k.Name)
		}
	}
	sort.Strings(names)
	return names
}

// Trusts reports whether r holds k (the same key under the same ID): a
// writer whose own key its readers' keyring lacks writes nothing they
// would believe.
func (r *Keyring) Trusts(k *PublicKey) bool {
	if r == nil || k == nil {
		return false
	}
	have := r.byID[k.ID]
	return have != nil && have.Key.Equal(k.Key)
}

// ErrUntrusted is wrapped by Verify's errors.
var ErrUntrusted = errors.New("not signed by a trusted key")

// Verify checks that s is a signature of msg for domain by a key r
// trusts, and returns that key.
func (r *Keyring) Verify(domain string, msg []byte, s *Signature) (*PublicKey, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: unsigned", ErrUntrusted)
	}
	if r == nil {
		return nil, fmt.Errorf("%w: no keys are trusted", ErrUntrusted)
	}
	k := r.byID[s.Key]
	if k == nil {
		return nil, fmt.Errorf("%w: signed by unknown key %.40q", ErrUntrusted, s.Key)
	}
	if len(s.Sig) != ed25519.SignatureSize || !ed25519.Verify(k.Key, signed(domain, msg), s.Sig) {
		return nil, fmt.Errorf("%w: the signature of key %s (%s) does not match", ErrUntrusted, k.Name, k.ID)
	}
	return k, nil
}

// LoadKeyring reads the public keys a setting lists: paths separated by
// ':' or ',', each a NAME.pub file or a directory whose *.pub files are
// read. An empty list is an empty keyring.
func LoadKeyring(list string) (*Keyring, error) {
	r := NewKeyring()
	for _, p := range strings.FieldsFunc(list, func(c rune) bool { return c == ':' || c == ',' }) {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		paths := []string{p}
		if fi.IsDir() {
			paths = nil
			err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() && path != p {
					return filepath.SkipDir
				}
				if !d.IsDir() && strings.HasSuffix(path, ".pub") {
					paths = append(paths, path)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		for _, path := range paths {
			k, err := LoadPublicKey(path)
			if err != nil {
				return nil, err
			}
			r.byID[k.ID] = k
		}
	}
	return r, nil
}
