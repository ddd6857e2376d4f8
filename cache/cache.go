// Package cache is offcc's build cache: every action of a build whose
// outputs are a function of its inputs is keyed by content and its outputs
// kept, so that a later build restores them instead of running the action
// (in the spirit of pocl's kernel cache, per job of offcc's graph). It owns
// the keys (key.go, toolchain.go), the store interface and its directory
// implementation (store.go, dirstore.go), direct mode's header manifests
// (manifest.go), statistics (stats.go), trimming, the poclbin
// export/import of entries (archive.go) and the shared cache behind the
// local one (layered.go). The executor consults it through actions.Cache
// (Session); no offload kind knows of it.
//
// The local cache is trusted as the machine's own. What comes from
// elsewhere, a shared cache's entry or an imported archive's, is believed
// only when a trusted key signed it (sign.go, package trust): the
// signature covers the entry's key, kind, record and blob digests, so that
// whoever can write to the Redis server (or hand over an archive) cannot
// make a build restore outputs that a trusted writer did not store under
// that key.
package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/offcc/offcc/config"
	"github.com/offcc/offcc/trust"
)

// Mode says whether a build reads and writes the cache.
type Mode int

// The modes.
const (
	ReadWrite Mode = iota
	ReadOnly
	Off
)

// DefaultMaxSize is the cache size limit when OFFCC_CACHE_SIZE is unset.
const DefaultMaxSize = 5 << 30

// TrimInterval is how often, at most, a build trims the cache.
const TrimInterval = 10 * time.Minute

// Config is the cache a build uses, from the environment and options.
type Config struct {
	// Dir is the cache directory.
	Dir string
	// Mode is ReadWrite, ReadOnly or Off.
	Mode Mode
	// MaxSize is the size limit in bytes; a trim brings the cache under
	// 90% of it. 0 means no limit.
	MaxSize int64
	// Debug, when set, makes builds explain every action's hit or miss
	// (OFFCC_CACHE_DEBUG=1).
	Debug bool
	// RemoteURL is the shared cache behind the local one
	// (OFFCC_REMOTE_CACHE=redis://...), "" for none; RemoteReadOnly
	// says it is read, never written ("|readonly" after the URL, or
	// OFFCC_REMOTE_CACHE_READONLY=1).
	RemoteURL      string
	RemoteReadOnly bool
	// RemoteInsecure accepts shared entries that no trusted key signed
	// (OFFCC_REMOTE_CACHE_INSECURE=1), and lets a build without a
	// signing key write unsigned entries: the shared cache is then only
	// as trustworthy as everyone who can write to the Redis server.
	RemoteInsecure bool
	// Compression is how blobs are written, locally and to the shared
	// cache (OFFCC_CACHE_COMPRESSION_LEVEL; the zero value: zstd level 1).
	Compression Compression
}

// ConfigFromEnv reads OFFCC_CACHE ("0"/"off" or "readonly"),
// OFFCC_CACHE_DIR (else $XDG_CACHE_HOME/offcc, else ~/.cache/offcc),
// OFFCC_CACHE_SIZE (bytes, or with a K, M, G or T suffix, powers of 1024;
// 0 for no limit)
// and OFFCC_CACHE_DEBUG. A cache with no usable directory is Off.
//
// The shared cache: OFFCC_REMOTE_CACHE (a redis:// URL, with "|readonly"
// after it to read without writing), OFFCC_REMOTE_CACHE_READONLY=1 (the
// same) and OFFCC_REMOTE_CACHE_INSECURE=1, which turns off the signature
// check of shared entries: without it a shared entry is a hit only when a
// key of OFFCC_TRUSTED_CACHE_KEYS signed it, entries are written only by a
// process whose OFFCC_SIGNING_KEY is one of those keys (and signs them),
// and with no trusted keys the shared cache is not used at all (see
// Layered; the keys are read by trust.FromEnv, not here).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{MaxSize: DefaultMaxSize}
	switch v := strings.ToLower(getenv("OFFCC_CACHE")); v {
	case "", "1", "on", "yes", "true", "readwrite":
	case "0", "off", "no", "false":
		c.Mode = Off
	case "readonly", "read-only", "ro":
		c.Mode = ReadOnly
	default:
		return c, fmt.Errorf("OFFCC_CACHE=%s (from the environment): not one of 0, 1, readonly; use one of them, such as readonly", v)
	}
	if v := getenv("OFFCC_CACHE_SIZE"); v != "" {
		n, err := config.ParseSize(v)
		if err != nil {
			return c, fmt.Errorf("OFFCC_CACHE_SIZE=%s (from the environment): not a size; use a number of bytes with an optional K, M, G or T suffix, such as 10G", v)
		}
		c.MaxSize = n
	}
	comp, err := CompressionFromEnv(getenv)
	if err != nil {
		return c, err
	}
	c.Compression = comp
	switch getenv("OFFCC_CACHE_DEBUG") {
	case "", "0", "off", "no", "false":
	default:
		c.Debug = true
	}
	if v := strings.TrimSpace(getenv("OFFCC_REMOTE_CACHE")); v != "" {
		url, ro := strings.CutSuffix(v, "|readonly")
		c.RemoteURL, c.RemoteReadOnly = url, ro
		c.RemoteReadOnly = c.RemoteReadOnly || envTrue(getenv("OFFCC_REMOTE_CACHE_READONLY"))
		c.RemoteInsecure = envTrue(getenv("OFFCC_REMOTE_CACHE_INSECURE"))
	}
	c.Dir = DefaultDir(getenv)
	if c.Dir == "" {
		c.Mode = Off
	}
	return c, nil
}

// envTrue reports whether a boolean setting is on: set, and not "0",
// "off", "no" or "false".
func envTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "off", "no", "false":
		return false
	}
	return true
}

// DefaultDir returns OFFCC_CACHE_DIR, else $XDG_CACHE_HOME/offcc, else
// $HOME/.cache/offcc, or "" when none is known.
func DefaultDir(getenv func(string) string) string {
	if d := getenv("OFFCC_CACHE_DIR"); d != "" {
		// Relative to where offcc starts, then fixed: one cache for
		// every directory a build runs in.
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return filepath.Clean(d)
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "offcc")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "offcc")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".cache", "offcc")
	}
	return ""
}

// Cache is an open cache: its configuration and store.
type Cache struct {
	Config
	Store *DirStore
	// Remote, when not nil, is the shared store behind Store (see
	// Layered); RemoteName names it in messages.
	Remote     Store
	RemoteName string
	// Keys are the process's keys (trust.FromEnv), nil for none:
	// Keys.SigningKey signs the entries a build writes to the shared
	// store and those Export writes; Keys.CacheWriters are the keys whose
	// shared entries are hits and whose archives Import takes.
	Keys *trust.Settings
}

// signingKey returns the key that signs what c writes elsewhere, or nil.
func (c *Cache) signingKey() *trust.PrivateKey {
	if c.Keys == nil {
		return nil
	}
	return c.Keys.SigningKey
}

// trustedKeys returns the keys whose entries c believes, or nil.
func (c *Cache) trustedKeys() *trust.Keyring {
	if c.Keys == nil {
		return nil
	}
	return c.Keys.CacheWriters
}

// Open returns the cache of c, or nil when c is Off.
func Open(c Config) *Cache {
	if c.Mode == Off || c.Dir == "" {
		return nil
	}
	s := NewDirStore(c.Dir)
	s.Compression = c.Compression
	return &Cache{Config: c, Store: s}
}

// Writable reports whether builds store results.
func (c *Cache) Writable() bool { return c != nil && c.Mode == ReadWrite }
