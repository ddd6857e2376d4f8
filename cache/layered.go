package cache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/offcc/offcc/internal/tempname"
	"github.com/offcc/offcc/trust"
)

// Layered is the local cache in front of a shared one (a Redis server
// that several machines use): a lookup asks the local store first, then
// the shared one, and a shared hit is copied into the local store (its
// blobs verified on the way in) before it is used; what a build stores goes
// to both, unless ReadOnly. Entries only this machine can use (tool
// digests keyed by its inodes, last-stored key texts naming its paths)
// stay local, and are never taken from the shared store.
//
// The shared store is not trusted: anyone who can write to the Redis
// server could otherwise copy one entry's index over another's key, and
// every build would restore the wrong object and call it a hit. So a
// shared entry of any kind (results, manifests, plans, derived digests)
// is a hit only when it verifies (VerifyEntry) with a key of Trusted: the
// signature binds the entry to its key. An unsigned entry, one signed by
// an unknown key, one moved to another key or changed in any way (kind,
// record, blob list) is a miss, counted in RemoteStats.Untrusted and, when
// Debug is set, explained. Entries are written to the shared store only
// when Sign is set and Trusted holds it, signed with it: a developer who
// only verifies needs no private key, and their shared cache is read-only;
// one whose key signs other things (build farm jobs) but is not a trusted
// cache writer writes nothing either. With no trusted keys (and not
// Insecure) the shared store is not used at all, with one warning.
//
// Insecure (OFFCC_REMOTE_CACHE_INSECURE=1) is the old trust-everyone
// mode: an entry that does not verify is still a hit (and still counted
// in Untrusted, so that stats show how much of the cache is unsigned), and
// without Sign entries are written unsigned.
//
// A slow, unreachable or failing shared store never fails a build: its
// first error (a timeout included) turns it off for the rest of the
// process, with one warning. A shared entry whose blobs do not match their
// digests is a miss.
type Layered struct {
	Local  *DirStore
	Remote Store
	// ReadOnly: read the shared store, never write it.
	ReadOnly bool
	// Sign signs the entries written to the shared store. Without it, or
	// when Trusted does not hold it, nothing is written there (unless
	// Insecure: entries then go unsigned, or signed when Sign is set).
	Sign *trust.PrivateKey
	// Trusted holds the keys whose shared entries are hits.
	Trusted *trust.Keyring
	// Insecure accepts shared entries that do not verify (see above).
	Insecure bool
	// Name names the shared store in the warning (its URL without
	// password).
	Name string
	// Warn, when not nil, is told once that the shared store failed, or
	// is not used for want of trusted keys.
	Warn func(message string)
	// Debug, when not nil, is told why a shared entry was not used or
	// was used though untrusted (OFFCC_CACHE_DEBUG).
	Debug func(message string)

	mu      sync.Mutex
	checked bool
	failed  bool
	warned  bool
	stats   RemoteStats
}

// RemoteStats count a process's use of the shared store.
type RemoteStats struct {
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	Errors int64 `json:"errors"`
	Stores int64 `json:"stores"`
	// Untrusted counts shared entries that did not verify with a trusted
	// key: misses, or with OFFCC_REMOTE_CACHE_INSECURE=1 hits taken
	// anyway (counted in Hits too).
	Untrusted int64 `json:"untrusted"`
	BytesUp   int64 `json:"bytes_up"`
	BytesDown int64 `json:"bytes_down"`
}

func (r *RemoteStats) add(o RemoteStats) {
	r.Hits += o.Hits
	r.Misses += o.Misses
	r.Errors += o.Errors
	r.Stores += o.Stores
	r.Untrusted += o.Untrusted
	r.BytesUp += o.BytesUp
	r.BytesDown += o.BytesDown
}

// NoTrustedKeys is why a shared cache without trusted keys, not marked
// insecure, is not used.
const NoTrustedKeys = "no trusted keys (" + trust.EnvCacheWriters + ") and not marked insecure (OFFCC_REMOTE_CACHE_INSECURE=1)"

// SharedCacheOff returns why a shared cache must not be used with the
// trusted keys and insecure setting given (NoTrustedKeys), or "" when it
// may be.
func SharedCacheOff(trusted *trust.Keyring, insecure bool) string {
	if !insecure && trusted.Len() == 0 {
		return NoTrustedKeys
	}
	return ""
}

// Stats returns the counts so far.
func (l *Layered) Stats() RemoteStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// usable reports whether the shared store is still in use. The first
// call turns it off, with one warning, when no key is trusted.
func (l *Layered) usable() bool {
	l.mu.Lock()
	warn := ""
	if !l.checked {
		l.checked = true
		if why := SharedCacheOff(l.Trusted, l.Insecure); why != "" {
			l.failed = true
			if !l.warned && l.Warn != nil {
				warn = fmt.Sprintf("shared cache %s: %s; using the local cache only", l.Name, why)
			}
			l.warned = true
		}
	}
	ok := !l.failed
	l.mu.Unlock()
	if warn != "" {
		l.Warn(warn)
	}
	return ok
}

// writes reports whether entries go to the shared store: not ReadOnly,
// and signed by a trusted key (or Insecure).
func (l *Layered) writes() bool {
	return !l.ReadOnly && (l.Insecure || l.signsTrusted())
}

// signsTrusted reports whether Sign is a key Trusted holds.
func (l *Layered) signsTrusted() bool {
	return l.Sign != nil && l.Trusted.Trusts(&l.Sign.PublicKey)
}

// debugf tells Debug, if set.
func (l *Layered) debugf(format string, args ...any) {
	if l.Debug != nil {
		l.Debug(fmt.Sprintf(format, args...))
	}
}

// accept reports whether a shared entry got under key may be used: not of
// a machine-local kind, and signed by a trusted key (or Insecure). An
// entry that does not verify is counted Untrusted.
func (l *Layered) accept(key Sum, e *Entry) bool {
	if machineLocalKind(e.Kind) {
		l.debugf("shared cache: entry %s: a %s entry, which is never shared: not used", key.String()[:16], e.Kind)
		return false
	}
	_, err := VerifyEntry(l.Trusted, key, e)
	if err == nil {
		return true
	}
	l.count(func(s *RemoteStats) { s.Untrusted++ })
	if l.Insecure {
		l.debugf("shared cache: entry %s: %v: used anyway (OFFCC_REMOTE_CACHE_INSECURE=1)", key.String()[:16], err)
		return true
	}
	l.debugf("shared cache: entry %s: %v: a miss", key.String()[:16], err)
	return false
}

// fail turns the shared store off after an error, warning once.
func (l *Layered) fail(err error) {
	l.mu.Lock()
	l.stats.Errors++
	l.failed = true
	warn := !l.warned && l.Warn != nil
	l.warned = true
	l.mu.Unlock()
	if warn {
		l.Warn(fmt.Sprintf("shared cache %s: %v; using the local cache only", l.Name, err))
	}
}

func (l *Layered) count(f func(*RemoteStats)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(&l.stats)
}

// Get returns the local entry, else the shared one, copied into the local
// store first.
func (l *Layered) Get(key Sum) (*Entry, error) {
	if e, err := l.Local.Get(key); err == nil {
		return e, nil
	}
	if !l.usable() {
		return nil, ErrNotFound
	}
	e, err := l.Remote.Get(key)
	switch {
	case errors.Is(err, ErrNotFound):
		l.count(func(s *RemoteStats) { s.Misses++ })
		return nil, ErrNotFound
	case err != nil:
		l.fail(err)
		return nil, ErrNotFound
	}
	if !l.accept(key, e) {
		l.count(func(s *RemoteStats) { s.Misses++ })
		return nil, ErrNotFound
	}
	if err := l.download(key, e); err != nil {
		if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotFound) {
			// A damaged, tampered or half-evicted shared entry: a miss.
			l.count(func(s *RemoteStats) { s.Misses++ })
		} else {
			l.fail(err)
		}
		return nil, ErrNotFound
	}
	l.count(func(s *RemoteStats) { s.Hits++ })
	return l.Local.Get(key)
}

// download copies a shared entry's blobs, verified, into a temporary
// directory of the local cache and stores the entry locally from there.
func (l *Layered) download(key Sum, e *Entry) error {
	if err := os.MkdirAll(l.Local.Dir, 0o777); err != nil {
		return err
	}
	tmp := filepath.Join(l.Local.Dir, tmpPrefix+"remote-"+tempname.Hex6()+tempname.Hex6())
	if err := os.Mkdir(tmp, 0o777); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	local := *e
	local.Blobs = append([]Blob(nil), e.Blobs...)
	var down int64
	for i, b := range local.Blobs {
		name := filepath.Join(tmp, b.Name)
		if err := WriteBlob(l.Remote, b, name); err != nil {
			return err
		}
		local.Blobs[i].Path = name
		down += b.Size
	}
	l.count(func(s *RemoteStats) { s.BytesDown += down })
	return l.Local.Put(key, &local)
}

// WriteBlob writes blob b of store s to the new file name, its bytes
// verified as they are read (every Store's OpenBlob checks them), with b's
// permission bits (rw for everyone when it has none) and write permission
// for its owner. A partial file is removed.
func WriteBlob(s Store, b Blob, name string) error {
	r, err := s.OpenBlob(b)
	if err != nil {
		return err
	}
	defer r.Close()
	perm := os.FileMode(b.Mode) & 0o777
	if perm == 0 {
		perm = 0o666
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o200)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// machineLocalKind reports whether entries of kind k are of use on this
// machine only.
func machineLocalKind(k Kind) bool {
	return k == KindTool || k == KindLast || k == KindPeak || k == KindCommand || k == KindCommandManifest || k == KindDigests
}

// Put stores e locally and, unless ReadOnly or without a trusted signing
// key (and not Insecure), signed in the shared store. A shared entry already
// under key is kept only when it verifies: one that does not (unsigned,
// from before signing, or an attacker's) is replaced.
func (l *Layered) Put(key Sum, e *Entry) error { return l.put(key, e, false) }

// Replace replaces e locally and, as Put does, in the shared store.
func (l *Layered) Replace(key Sum, e *Entry) error { return l.put(key, e, true) }

func (l *Layered) put(key Sum, e *Entry, replace bool) error {
	var err error
	if replace {
		err = l.Local.Replace(key, e)
	} else {
		err = l.Local.Put(key, e)
	}
	if err != nil || !l.writes() || machineLocalKind(e.Kind) || !l.usable() {
		return err
	}
	if l.Sign != nil {
		signed := *e
		SignEntry(l.Sign, key, &signed)
		e = &signed
	}
	if !replace && l.signsTrusted() {
		// Put keeps what is there: only if it verifies.
		old, gerr := l.Remote.Get(key)
		switch {
		case gerr == nil:
			if _, verr := VerifyEntry(l.Trusted, key, old); verr == nil {
				return nil
			}
			replace = true
		case !errors.Is(gerr, ErrNotFound):
			l.fail(gerr)
			return nil
		}
	}
	var rerr error
	if replace {
		rerr = l.Remote.Replace(key, e)
	} else {
		rerr = l.Remote.Put(key, e)
	}
	if rerr != nil {
		l.fail(rerr)
		return nil // stored locally: the build does not care
	}
	var up int64
	for _, b := range e.Blobs {
		up += b.Size
	}
	l.count(func(s *RemoteStats) { s.Stores++; s.BytesUp += up })
	return nil
}

// OpenBlob reads a blob of an entry got from this store (always local).
func (l *Layered) OpenBlob(b Blob) (io.ReadCloser, error) { return l.Local.OpenBlob(b) }

// Remove removes the local entry, and the shared one when the shared
// store is written (see Put; a damaged entry is removed to be replaced).
func (l *Layered) Remove(key Sum) error {
	err := l.Local.Remove(key)
	if l.writes() && l.usable() {
		if rerr := l.Remote.Remove(key); rerr != nil {
			l.fail(rerr)
		}
	}
	return err
}

// Walk walks the local entries.
func (l *Layered) Walk(fn func(key Sum, e *Entry) error) error { return l.Local.Walk(fn) }
