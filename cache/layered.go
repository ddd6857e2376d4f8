package cache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/offcc/offcc/internal/tempname"
)

// Layered is the local cache in front of a shared one (a Redis server
// that several machines use): a lookup asks the local store first, then
// the shared one, and a shared hit is copied into the local store (its
// blobs verified on the way in) before it is used; what a build stores goes
// to both, unless ReadOnly. Entries only this machine can use (tool
// digests keyed by its inodes, last-stored key texts naming its paths)
// stay local.
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
	// Name names the shared store in the warning (its URL without
	// password).
	Name string
	// Warn, when not nil, is told once that the shared store failed.
	Warn func(message string)

	mu     sync.Mutex
	failed bool
	warned bool
	stats  RemoteStats
}

// RemoteStats count a process's use of the shared store.
type RemoteStats struct {
	Hits      int64 `json:"hits"`
	Misses    int64 `json:"misses"`
	Errors    int64 `json:"errors"`
	Stores    int64 `json:"stores"`
	BytesUp   int64 `json:"bytes_up"`
	BytesDown int64 `json:"bytes_down"`
}

func (r *RemoteStats) add(o RemoteStats) {
	r.Hits += o.Hits
	r.Misses += o.Misses
	r.Errors += o.Errors
	r.Stores += o.Stores
	r.BytesUp += o.BytesUp
	r.BytesDown += o.BytesDown
}

// Stats returns the counts so far.
func (l *Layered) Stats() RemoteStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// usable reports whether the shared store is still in use.
func (l *Layered) usable() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.failed
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
func machineLocalKind(k Kind) bool { return k == KindTool || k == KindLast }

// Put stores e locally and, unless ReadOnly, in the shared store.
func (l *Layered) Put(key Sum, e *Entry) error { return l.put(key, e, false) }

// Replace replaces e locally and, unless ReadOnly, in the shared store.
func (l *Layered) Replace(key Sum, e *Entry) error { return l.put(key, e, true) }

func (l *Layered) put(key Sum, e *Entry, replace bool) error {
	var err error
	if replace {
		err = l.Local.Replace(key, e)
	} else {
		err = l.Local.Put(key, e)
	}
	if err != nil || l.ReadOnly || machineLocalKind(e.Kind) || !l.usable() {
		return err
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

// Remove removes the local entry, and the shared one unless ReadOnly (a
// damaged entry is removed to be replaced).
func (l *Layered) Remove(key Sum) error {
	err := l.Local.Remove(key)
	if !l.ReadOnly && l.usable() {
		if rerr := l.Remote.Remove(key); rerr != nil {
			l.fail(rerr)
		}
	}
	return err
}

// Walk walks the local entries.
func (l *Layered) Walk(fn func(key Sum, e *Entry) error) error { return l.Local.Walk(fn) }
