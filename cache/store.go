package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/offcc/offcc/trust"
)

// Sum is a SHA-256 digest: of a key's text (a key) or of a file's bytes
// (a blob's content hash).
type Sum [sha256.Size]byte

// String returns the digest in lower-case hex.
func (s Sum) String() string { return hex.EncodeToString(s[:]) }

// IsZero reports whether s is the zero digest (no digest).
func (s Sum) IsZero() bool { return s == Sum{} }

// ParseSum reads a digest written by Sum.String.
func ParseSum(text string) (Sum, error) {
	var s Sum
	if len(text) != 2*len(s) {
		return s, fmt.Errorf("digest %.80q: want %d hex digits", text, 2*len(s))
	}
	if _, err := hex.Decode(s[:], []byte(text)); err != nil {
		return s, fmt.Errorf("digest %.80q: not hex", text)
	}
	for _, c := range text {
		if 'A' <= c && c <= 'F' {
			return s, fmt.Errorf("digest %.80q: upper-case hex", text)
		}
	}
	return s, nil
}

// SumBytes returns the SHA-256 of data.
func SumBytes(data []byte) Sum { return sha256.Sum256(data) }

// Kind says what an entry holds.
type Kind string

// The kinds of entry.
const (
	// KindResult is one action's outputs (blobs) and its diagnostics.
	KindResult Kind = "result"
	// KindManifest lists, for an action's known inputs, the header sets
	// seen so far and the result each gave (direct mode).
	KindManifest Kind = "manifest"
	// KindLast is the key text last stored for an action, for explain.
	KindLast Kind = "last"
	// KindPlan is clang's job list for a command line (the plan cache).
	KindPlan Kind = "plan"
	// KindTool is a tool file's content digest, memoised by its identity.
	KindTool Kind = "tool"
	// KindDerived is a digest computed from a file's bytes (the OpenMP
	// offload entries of a host IR), memoised by the bytes' digest.
	KindDerived Kind = "derived"
)

// Blob is one file of an entry, addressed by its content hash.
type Blob struct {
	// Name names the blob within its entry ("out0", "out1", ...).
	Name string
	// Size and Sum describe the bytes.
	Size int64
	Sum  Sum
	// Mode is the file's permission bits, restored with it.
	Mode uint32
	// Path is where the bytes are: a file to copy from when putting, the
	// stored file when got from a local store.
	Path string
	// Stored is the bytes the blob's file takes in a DirStore
	// (compressed, or not), as DirStore.Walk found it; 0 otherwise.
	Stored int64
}

// Entry is what a store keeps under one key: a small record and blobs.
type Entry struct {
	Kind Kind
	// Record is the entry's metadata, opaque to the store (JSON for
	// results and manifests, text for plans).
	Record []byte
	Blobs  []Blob
	// Used is when the entry was last used (local stores: its index's
	// modification time); set by Get and Stat.
	Used time.Time
	// Signature, when set, is a writer's signature of the entry under
	// its key (SignEntry, VerifyEntry); stores keep it in the index.
	Signature *trust.Signature

	// indexBytes is the size of the entry's index file, when
	// DirStore.Walk read it (its blobs' Stored are then set), and
	// indexRaw its size uncompressed; 0 otherwise.
	indexBytes, indexRaw int64
}

// Size returns the bytes an entry occupies: its record and blobs.
func (e *Entry) Size() int64 {
	n := int64(len(e.Record))
	for _, b := range e.Blobs {
		n += b.Size
	}
	return n
}

// DiskSize returns the bytes an entry takes in a DirStore: its index
// (which holds the record) and its blobs as stored, compressed or not,
// for an entry DirStore.Walk found; otherwise (not stored yet, or got
// elsewhere) its UncompressedSize.
func (e *Entry) DiskSize() int64 {
	if e.indexBytes == 0 {
		return e.UncompressedSize()
	}
	n := e.indexBytes
	for _, b := range e.Blobs {
		n += b.Stored
	}
	return n
}

// UncompressedSize returns the bytes an entry takes in a DirStore that
// does not compress: its index and its blobs' bytes.
func (e *Entry) UncompressedSize() int64 {
	n := e.indexRaw
	if n == 0 {
		n = int64(len(EncodeIndex(e)))
	}
	for _, b := range e.Blobs {
		n += b.Size
	}
	return n
}

// ErrNotFound is returned by Get and Stat for a key with no sound entry:
// none stored, removed, or damaged (a damaged entry is a miss).
var ErrNotFound = errors.New("cache: no entry")

// Store keeps entries by key. Implementations are safe for concurrent use
// by goroutines and by processes sharing the same backing storage; a store
// never returns an entry whose index fails its checksum, and readers of a
// blob verify its Sum as they read (OpenBlob).
type Store interface {
	// Get returns the entry stored under key, or ErrNotFound. It marks
	// the entry used.
	Get(key Sum) (*Entry, error)
	// Put stores e under key atomically: readers see the old entry or the
	// whole new one. A sound entry already stored under key is kept.
	Put(key Sum, e *Entry) error
	// Replace stores e under key like Put, replacing any entry there
	// (manifests and last-key records change over time).
	Replace(key Sum, e *Entry) error
	// OpenBlob opens a blob of an entry got from this store for reading.
	OpenBlob(b Blob) (io.ReadCloser, error)
	// Remove removes the entry under key; a missing entry is not an error.
	Remove(key Sum) error
	// Walk calls fn for every entry (without blobs' bytes being read).
	Walk(fn func(key Sum, e *Entry) error) error
}
