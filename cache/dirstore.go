package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/offcc/offcc/internal/tempname"
	"github.com/offcc/offcc/trust"
)

// DirStore is a Store in a directory, sharded like pocl's kernel cache:
// the entry for key K is the directory DIR/K[:2]/K/, holding "index" (the
// entry's kind, record and blob list, headed by the SHA-256 of the rest)
// and one file per blob, zstd-compressed at Compression's level unless that
// does not make it smaller (see compress.go: a blob file starting with the
// zstd magic is compressed, any other holds the bytes as they are; an index
// of more than 1 KiB, a manifest's list of headers, is compressed too). An
// entry is written as a temporary directory beside its final name
// (.tmp-*) and renamed into place, so readers see a whole entry or none;
// entries are never written in place. Replacing one renames the old entry
// away (.trash-*) first. No lock is held while a compile runs; concurrent
// writers of one key race harmlessly (the first sound entry stays).
type DirStore struct {
	Dir string
	// RefreshAge: Get marks an entry used (its index's modification time)
	// only when the mark is older than this, to save writes.
	RefreshAge time.Duration
	// Compression is how Put writes blobs (the zero value: zstd level
	// 1). Reading takes every blob as it was written, whatever this says.
	Compression Compression

	codec Codec
	// evictFound, when not nil, is called for each entry EvictOlderThan
	// found old, before it looks again (tests use it as a build's hit in
	// between).
	evictFound func(key Sum)
}

// NewDirStore returns the store in dir (created on first Put).
func NewDirStore(dir string) *DirStore {
	return &DirStore{Dir: dir, RefreshAge: time.Minute}
}

const (
	indexName    = "index"
	indexMagic   = "offcc-cache v1"
	tmpPrefix    = ".tmp-"
	trashPrefix  = ".trash-"
	maxIndexSize = 64 << 20
)

// EntryDir returns the directory of key's entry.
func (s *DirStore) EntryDir(key Sum) string {
	k := key.String()
	return filepath.Join(s.Dir, k[:2], k)
}

// indexJSON is the body of an index file.
type indexJSON struct {
	Kind   Kind   `json:"kind"`
	Record string `json:"record"`
	// RecordBytes holds, base64, a record that is not valid UTF-8 (a
	// plan naming a Latin-1 path), which a JSON string would change.
	RecordBytes []byte     `json:"record_bytes,omitempty"`
	Blobs       []blobJSON `json:"blobs,omitempty"`
	// Signature signs the rest of the index and the entry's key (see
	// SignEntry).
	Signature *trust.Signature `json:"signature,omitempty"`

	// recordRaw is Record's bytes, when fastIndex read it (Record is
	// then "").
	recordRaw []byte
}

type blobJSON struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	Sum  string `json:"sha256"`
	Mode uint32 `json:"mode,omitempty"`
}

// EncodeIndex returns the index file of e: a header line with the
// SHA-256 of the body, then the body (JSON).
func EncodeIndex(e *Entry) []byte {
	ij := indexJSON{Kind: e.Kind, Record: string(e.Record), Signature: e.Signature}
	if !utf8.Valid(e.Record) {
		ij.Record, ij.RecordBytes = "", e.Record
	}
	for _, b := range e.Blobs {
		ij.Blobs = append(ij.Blobs, blobJSON{b.Name, b.Size, b.Sum.String(), b.Mode})
	}
	body, _ := json.Marshal(ij)
	sum := sha256.Sum256(body)
	return append([]byte(fmt.Sprintf("%s %x\n", indexMagic, sum)), body...)
}

// DecodeIndex reads an index file, checking its checksum and that blob
// names are plain file names, distinct and not "index".
func DecodeIndex(data []byte) (*Entry, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, errors.New("index: no header line")
	}
	head, body := string(data[:nl]), data[nl+1:]
	sumText, ok := strings.CutPrefix(head, indexMagic+" ")
	if !ok {
		return nil, errors.New("index: not an offcc cache index (or another version)")
	}
	want, err := ParseSum(sumText)
	if err != nil {
		return nil, fmt.Errorf("index: %v", err)
	}
	if Sum(sha256.Sum256(body)) != want {
		return nil, errors.New("index: checksum mismatch")
	}
	ij, ok := fastIndex(body)
	if !ok {
		ij = &indexJSON{}
		if err := json.Unmarshal(body, ij); err != nil {
			return nil, fmt.Errorf("index: %v", err)
		}
	}
	e := &Entry{Kind: ij.Kind, Record: ij.recordRaw, Signature: ij.Signature}
	if e.Record == nil {
		e.Record = []byte(ij.Record)
	}
	if ij.RecordBytes != nil {
		if ij.Record != "" || utf8.Valid(ij.RecordBytes) {
			return nil, errors.New("index: record given twice or as bytes that are UTF-8")
		}
		e.Record = ij.RecordBytes
	}
	seen := map[string]bool{indexName: true}
	for _, b := range ij.Blobs {
		if !validBlobName(b.Name) || seen[b.Name] {
			return nil, fmt.Errorf("index: bad or repeated blob name %.80q", b.Name)
		}
		seen[b.Name] = true
		sum, err := ParseSum(b.Sum)
		if err != nil {
			return nil, fmt.Errorf("index: blob %s: %v", b.Name, err)
		}
		if b.Size < 0 {
			return nil, fmt.Errorf("index: blob %s: negative size", b.Name)
		}
		e.Blobs = append(e.Blobs, Blob{Name: b.Name, Size: b.Size, Sum: sum, Mode: b.Mode & 0o777})
	}
	return e, nil
}

// validBlobName accepts short names of letters, digits, '.', '_' and '-'
// that do not start with '.'.
func validBlobName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '.' {
		return false
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Get returns key's entry. The entry's blobs are not read: OpenBlob
// verifies each as it is read.
func (s *DirStore) Get(key Sum) (*Entry, error) {
	dir := s.EntryDir(key)
	name := filepath.Join(dir, indexName)
	data, info, err := readSmallStat(name, maxIndexSize)
	if err != nil {
		return nil, ErrNotFound
	}
	if data, err = s.codec.ExpandIndex(data, maxIndexSize); err != nil {
		return nil, ErrNotFound
	}
	e, err := DecodeIndex(data)
	if err != nil {
		return nil, ErrNotFound
	}
	for i := range e.Blobs {
		e.Blobs[i].Path = filepath.Join(dir, e.Blobs[i].Name)
	}
	now := time.Now()
	if info != nil {
		e.Used = info.ModTime()
		if now.Sub(info.ModTime()) > s.RefreshAge {
			os.Chtimes(name, now, now) // best effort: a failure only ages the entry
			e.Used = now
		}
	}
	return e, nil
}

// readSmallStat reads a file of at most limit bytes, and stats it (the
// stat is nil if that fails).
func readSmallStat(name string, limit int64) ([]byte, os.FileInfo, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		info = nil
	}
	size := int64(512)
	if info != nil && info.Size() < limit {
		size = info.Size() + 1 // one more to see the end
	}
	data := make([]byte, 0, size)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if int64(len(data)) > limit {
			return nil, nil, errors.New("too large")
		}
		if err == io.EOF {
			return data, info, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

// readSmall reads a file of at most limit bytes.
func readSmall(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errors.New("too large")
	}
	return data, nil
}

// OpenBlob opens a blob for reading, decompressing it if it was stored
// compressed; the reader fails with ErrCorrupt at the end if the bytes do
// not have the blob's size and SHA-256 (or as soon as there are more), or
// if a compressed blob does not decode.
func (s *DirStore) OpenBlob(b Blob) (io.ReadCloser, error) {
	f, err := os.Open(b.Path)
	if err != nil {
		return nil, err
	}
	// (Shorter than the magic, it cannot have been compressed.)
	if b.Size >= int64(len(zstdMagic)) {
		var head [4]byte
		if n, _ := f.ReadAt(head[:], 0); isZstd(head[:n]) {
			r, err := s.codec.NewReader(f, b.Size)
			if err != nil {
				return nil, err
			}
			return NewVerifier(r, b), nil
		}
	}
	return NewVerifier(f, b), nil
}

// Verifier reads a blob's bytes and fails with ErrCorrupt at the end if
// they are not the blob's.
type Verifier struct {
	r    io.ReadCloser
	b    Blob
	h    hash.Hash
	n    int64
	done bool
}

// ErrCorrupt is a blob whose bytes do not match its size or digest.
var ErrCorrupt = errors.New("cache: blob does not match its digest")

// NewVerifier wraps r, which reads b's bytes.
func NewVerifier(r io.ReadCloser, b Blob) *Verifier {
	return &Verifier{r: r, b: b, h: sha256.New()}
}

// Read reads the blob's bytes; at their end it reports ErrCorrupt if they
// were not the blob's.
func (v *Verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.b.Size {
		return n, ErrCorrupt
	}
	if err == io.EOF && !v.done {
		v.done = true
		if v.n != v.b.Size || Sum(v.h.Sum(nil)) != v.b.Sum {
			return n, ErrCorrupt
		}
	}
	return n, err
}

// Close closes the underlying reader.
func (v *Verifier) Close() error { return v.r.Close() }

// Put stores e under key unless a sound entry is there already.
func (s *DirStore) Put(key Sum, e *Entry) error { return s.put(key, e, false) }

// Replace stores e under key, replacing what is there.
func (s *DirStore) Replace(key Sum, e *Entry) error { return s.put(key, e, true) }

func (s *DirStore) put(key Sum, e *Entry, replace bool) error {
	final := s.EntryDir(key)
	shard := filepath.Dir(final)
	if err := os.MkdirAll(shard, 0o777); err != nil {
		return err
	}
	if fi, err := os.Lstat(shard); err != nil || !fi.IsDir() {
		// A link planted in the cache would take entries elsewhere.
		return fmt.Errorf("cache: %s is not a directory", shard)
	}
	if replace && len(e.Blobs) == 0 && s.replaceIndex(final, e) == nil {
		return nil
	}
	tmp := filepath.Join(shard, tmpPrefix+key.String()[:16]+"-"+tempname.Hex6()+tempname.Hex6())
	if err := os.Mkdir(tmp, 0o777); err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	stored := *e
	stored.Blobs = append([]Blob(nil), e.Blobs...)
	for i, b := range stored.Blobs {
		if !validBlobName(b.Name) || b.Name == indexName {
			return fmt.Errorf("cache: bad blob name %q", b.Name)
		}
		if err := s.writeBlob(filepath.Join(tmp, b.Name), b); err != nil {
			return err
		}
		stored.Blobs[i].Path = ""
	}
	// Nothing is fsynced, as ccache does not (a cold HIP compile made 61
	// fsyncs): a crash may lose the newest entries or leave one torn,
	// and a torn entry is a miss, never a wrong hit (the index carries
	// its own SHA-256, each blob is verified as it is read).
	index := s.codec.CompressIndex(EncodeIndex(&stored), s.Compression)
	if err := writeNew(filepath.Join(tmp, indexName), index, 0o666); err != nil {
		return err
	}
	// Something may be there already: keep a sound entry (Put), or move
	// it away and retry (Replace, or a damaged one). Writers racing for
	// one key may take the name from each other between the renames; a
	// few attempts settle it.
	for attempt := 0; ; attempt++ {
		err := os.Rename(tmp, final)
		if err == nil {
			ok = true
			return nil
		}
		if !replace || attempt >= 4 {
			if _, gerr := s.Get(key); gerr == nil {
				// Another writer's entry is as good as ours.
				return nil
			}
		}
		if attempt >= 4 {
			return err
		}
		trash := filepath.Join(shard, trashPrefix+tempname.Hex6()+tempname.Hex6())
		if err := os.Rename(final, trash); err == nil {
			defer os.RemoveAll(trash)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
}

// replaceIndex replaces the index of the entry directory final with e's,
// which has no blobs (a manifest, a last-stored key text, a learned peak:
// a cold build replaces two or three per compile), by renaming a new
// index file over the old: readers see the old index or the new one, as
// with a whole entry's rename, for a third of the system calls. It fails,
// having changed nothing, when final is not a directory (not there yet:
// the caller writes a whole entry). (Were the old entry one with blobs,
// their files would stay until the entry is removed: keys of blob-less
// kinds never hold blobs.)
func (s *DirStore) replaceIndex(final string, e *Entry) error {
	if fi, err := os.Lstat(final); err != nil || !fi.IsDir() {
		return fmt.Errorf("cache: %s is not a directory", final)
	}
	stored := *e
	tmp := filepath.Join(filepath.Dir(final), tmpPrefix+filepath.Base(final)[:16]+"-"+tempname.Hex6()+tempname.Hex6()+".index")
	if err := writeNew(tmp, s.codec.CompressIndex(EncodeIndex(&stored), s.Compression), 0o666); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(final, indexName)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// CopyBlob copies b's bytes (from b.Path) to the new file name, checking
// them against b's size and digest. The copy is not fsynced: whoever
// reads it verifies it.
func CopyBlob(name string, b Blob) error {
	src, err := os.Open(b.Path)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, NewVerifier(src, b))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeBlob writes b's bytes (from b.Path) to the new file name as the
// store keeps them: compressed at s.Compression (see Codec.Encode) or,
// with compression off, copied by the kernel. The bytes must be b.Size
// long; their SHA-256 is not computed again: the caller hashed them (a
// job's outputs, a download or an import, each verified), and every
// reader verifies them, so bytes changed in between are a miss, never a
// wrong hit. The file is not fsynced (see put).
func (s *DirStore) writeBlob(name string, b Blob) (err error) {
	if s.storedHere(b.Path) {
		// A blob of this store's (an entry got from it, put again): as
		// it is stored, compressed or not. Entries' files are never
		// written in place, so a link is safe.
		return os.Link(b.Path, name)
	}
	src, err := os.Open(b.Path)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}()
	if s.Compression.Off {
		var head [4]byte
		if n, _ := src.ReadAt(head[:], 0); !isZstd(head[:n]) {
			n, err := dst.ReadFrom(io.LimitReader(src, b.Size+1)) // copy_file_range
			if err == nil && n != b.Size {
				err = fmt.Errorf("cache: blob %s: %s is not %d bytes long", b.Name, b.Path, b.Size)
			}
			return err
		}
	}
	_, _, err = s.codec.Encode(src, b.Size, s.Compression, func(p []byte) error {
		_, err := dst.Write(p)
		return err
	})
	if err != nil {
		return fmt.Errorf("cache: blob %s (%s): %w", b.Name, b.Path, err)
	}
	return nil
}

// storedHere reports whether path names a blob file of one of s's entries
// (DIR/xx/<key>/NAME).
func (s *DirStore) storedHere(path string) bool {
	entry := filepath.Dir(path)
	shard := filepath.Dir(entry)
	k := filepath.Base(entry)
	if _, err := ParseSum(k); err != nil || filepath.Base(shard) != k[:2] {
		return false
	}
	return filepath.Dir(shard) == filepath.Clean(s.Dir)
}

// Remove removes key's entry: renamed away first, so that readers see it
// whole or not at all, then deleted.
func (s *DirStore) Remove(key Sum) error {
	final := s.EntryDir(key)
	trash := filepath.Join(filepath.Dir(final), trashPrefix+tempname.Hex6()+tempname.Hex6())
	if err := os.Rename(final, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return os.RemoveAll(trash)
}

// Walk calls fn for every sound entry, in key order. Damaged entries and
// leftovers are skipped (Trim removes them).
func (s *DirStore) Walk(fn func(key Sum, e *Entry) error) error {
	return s.walk(func(key Sum, dir string, e *Entry, info os.FileInfo) error {
		if e == nil {
			return nil
		}
		return fn(key, e)
	}, nil)
}

// walk visits every entry directory: e is nil for a damaged entry. Other
// names in the shards (temporaries, trash) go to other, if not nil.
func (s *DirStore) walk(fn func(key Sum, dir string, e *Entry, info os.FileInfo) error, other func(path string, info os.FileInfo)) error {
	shards, err := os.ReadDir(s.Dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, sh := range shards {
		if !sh.IsDir() || len(sh.Name()) != 2 || !isHex(sh.Name()) {
			continue
		}
		shard := filepath.Join(s.Dir, sh.Name())
		names, err := readDirNames(shard)
		if err != nil {
			continue
		}
		for _, n := range names {
			p := filepath.Join(shard, n)
			key, err := ParseSum(n)
			if err != nil || !strings.HasPrefix(n, sh.Name()) {
				if other != nil {
					if info, err := os.Lstat(p); err == nil {
						other(p, info)
					}
				}
				continue
			}
			index := filepath.Join(p, indexName)
			info, err := os.Stat(index)
			var e *Entry
			raw := 0
			if err == nil {
				data, rerr := readSmall(index, maxIndexSize)
				if rerr == nil {
					data, rerr = s.codec.ExpandIndex(data, maxIndexSize)
				}
				if rerr == nil {
					e, _ = DecodeIndex(data)
					raw = len(data)
				}
			} else if info, err = os.Lstat(p); err != nil {
				continue
			}
			if e != nil {
				e.Used = info.ModTime()
				e.indexBytes, e.indexRaw = info.Size(), int64(raw)
				for i := range e.Blobs {
					b := &e.Blobs[i]
					b.Path = filepath.Join(p, b.Name)
					if bi, err := os.Lstat(b.Path); err == nil {
						b.Stored = bi.Size()
					}
				}
			}
			if err := fn(key, p, e, info); err != nil {
				return err
			}
		}
	}
	return nil
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// TrimResult says what a trim did.
type TrimResult struct {
	Entries, Bytes               int64 // kept
	RemovedEntries, RemovedBytes int64
}

// staleTemp is the age after which a trim removes a temporary or trash
// directory (of a writer that died).
const staleTemp = time.Hour

// damagedAge is the age after which a trim removes a damaged entry (one
// younger may be a Replace in progress; a damaged entry is a miss anyway,
// and restoring removes it).
const damagedAge = time.Minute

// Trim removes damaged entries and stale temporaries, then the least
// recently used entries until the entries' bytes are at most target.
// Entries are removed whole (renamed away, then deleted); a build using
// one meanwhile sees a miss or still reads the blobs it opened.
func (s *DirStore) Trim(target int64, now time.Time) (TrimResult, error) {
	type kept struct {
		key  Sum
		used time.Time
		size int64
	}
	var all []kept
	var res TrimResult
	err := s.walk(func(key Sum, dir string, e *Entry, info os.FileInfo) error {
		if e == nil {
			// A key directory without a sound index: entries appear
			// whole (by rename), so this one is damaged, unless a
			// Replace is between its two renames (then it is new).
			if now.Sub(info.ModTime()) > damagedAge && s.Remove(key) == nil {
				res.RemovedEntries++
			}
			return nil
		}
		all = append(all, kept{key, e.Used, e.DiskSize()})
		return nil
	}, func(path string, info os.FileInfo) {
		base := filepath.Base(path)
		if (strings.HasPrefix(base, tmpPrefix) || strings.HasPrefix(base, trashPrefix)) && now.Sub(info.ModTime()) > staleTemp {
			os.RemoveAll(path)
		}
	})
	if err != nil {
		return res, err
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].used.Equal(all[j].used) {
			return all[i].used.After(all[j].used)
		}
		return all[i].key.String() < all[j].key.String()
	})
	var total int64
	full := false
	for _, k := range all {
		if full = full || total+k.size > target; full {
			if s.Remove(k.key) == nil {
				res.RemovedEntries++
				res.RemovedBytes += k.size
			}
			continue
		}
		total += k.size
		res.Entries++
	}
	res.Bytes = total
	return res, nil
}
