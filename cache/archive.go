package cache

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/offcc/offcc/poclbin"
	"github.com/offcc/offcc/trust"
)

// ArchiveBasePath is the base path Export writes in its archives. It is
// informational only: Import never uses it.
const ArchiveBasePath = "offcc-cache"

// An export archive (offcc cache export, offcc cache import) is a poclbin
// archive whose entries are the cache-relative files of whole entries:
// "xx/<key>/index" (the entry's index, as EncodeIndex writes it, with the
// exporter's signature when it has a key) and "xx/<key>/<blob name>" (each
// blob's bytes), where <key> is 64 lower-case hex digits and xx its first
// two. Nothing else may be in it.

// Export writes the entries under keys (every sound entry when keys is
// nil) to w as a poclbin archive and returns how many it wrote. A listed
// key without a sound entry, or whose blobs fail their digest, is an error
// naming it; with keys nil, damaged entries (and entries removed while
// the export runs) are skipped silently.
//
// With a signing key (c.Keys.SigningKey, OFFCC_SIGNING_KEY) every index
// written is signed with it for its key (SignEntry), whatever signature
// the entry had; without one an entry's own signature, if any (a shared
// entry keeps its writer's), is written as it is.
//
// The archive is streamed: one entry's blobs at a time are held in memory
// (read and verified before any of the entry is written, so that a damaged
// entry can be skipped whole). The archive's caps (poclbin.MaxEntries
// files, poclbin.MaxEntrySize bytes per file, poclbin.MaxTotalSize in
// all) are checked before anything is written. An error after the header
// is written leaves w with a truncated archive: write to a temporary file
// and rename it on success (offcc cache export does).
func (c *Cache) Export(w io.Writer, keys []Sum) (int, error) {
	type item struct {
		key Sum
		e   *Entry
	}
	var items []item
	explicit := keys != nil
	if explicit {
		seen := map[Sum]bool{}
		for _, k := range keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			e, err := c.Store.Get(k)
			if err != nil {
				return 0, fmt.Errorf("cache export: %s: no entry", k)
			}
			items = append(items, item{k, e})
		}
	} else {
		err := c.Store.Walk(func(k Sum, e *Entry) error {
			// Tool digests are memoised by this machine's inodes, and
			// last-stored key texts hold its paths: neither is of use
			// elsewhere, and the second has no place in a bug report.
			if !machineLocal[e.Kind] {
				items = append(items, item{k, e})
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("cache export: %v", err)
		}
	}

	if k := c.signingKey(); k != nil {
		for i := range items {
			signed := *items[i].e
			SignEntry(k, items[i].key, &signed)
			items[i].e = &signed
		}
	}

	// The caps, before anything is written (an upper bound when damaged
	// entries are skipped).
	var files, total uint64
	for _, it := range items {
		if err := exportable(it.e); err != nil {
			if explicit {
				return 0, fmt.Errorf("cache export: %s: %v", it.key, err)
			}
			continue
		}
		files += 1 + uint64(len(it.e.Blobs))
		total += uint64(len(EncodeIndex(it.e)))
		for _, b := range it.e.Blobs {
			total += uint64(b.Size)
		}
	}
	if files > poclbin.MaxEntries {
		return 0, fmt.Errorf("cache export: %d files, more than a poclbin archive holds (%d): export fewer keys", files, poclbin.MaxEntries)
	}
	if total > poclbin.MaxTotalSize {
		return 0, fmt.Errorf("cache export: %d bytes, more than a poclbin archive holds (%d): export fewer keys", total, uint64(poclbin.MaxTotalSize))
	}

	aw := newArchiveWriter(w, ArchiveBasePath)
	n := 0
	for _, it := range items {
		if exportable(it.e) != nil {
			continue
		}
		data := make([][]byte, len(it.e.Blobs))
		var err error
		for i, b := range it.e.Blobs {
			if data[i], err = c.readBlob(b); err != nil {
				break
			}
		}
		if err != nil {
			if explicit {
				return n, fmt.Errorf("cache export: %s: %v", it.key, err)
			}
			continue
		}
		dir := entryRelDir(it.key)
		aw.add(dir+"/"+indexName, EncodeIndex(it.e))
		for i, b := range it.e.Blobs {
			aw.add(dir+"/"+b.Name, data[i])
		}
		if aw.err != nil {
			return n, fmt.Errorf("cache export: %v", aw.err)
		}
		n++
	}
	if err := aw.flush(); err != nil {
		return n, fmt.Errorf("cache export: %v", err)
	}
	return n, nil
}

// exportable checks that an entry fits an archive: blob names that do not
// clash when case is ignored (which ParseArchive refuses) and blobs within
// the per-file cap.
func exportable(e *Entry) error {
	folded := map[string]bool{strings.ToLower(indexName): true}
	for _, b := range e.Blobs {
		f := strings.ToLower(b.Name)
		if folded[f] {
			return fmt.Errorf("blob name %q clashes with another when case is ignored", b.Name)
		}
		folded[f] = true
		if b.Size > poclbin.MaxEntrySize {
			return fmt.Errorf("blob %s is %d bytes, more than a poclbin archive holds in one file (%d)", b.Name, b.Size, poclbin.MaxEntrySize)
		}
	}
	return nil
}

// readBlob reads a blob's bytes, verified.
func (c *Cache) readBlob(b Blob) ([]byte, error) {
	r, err := c.Store.OpenBlob(b)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %v", b.Name, err)
	}
	defer r.Close()
	var buf bytes.Buffer
	buf.Grow(int(min(b.Size, 64<<20)))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("blob %s: %v", b.Name, err)
	}
	return buf.Bytes(), nil
}

// entryRelDir returns "xx/<key>", key's entry directory relative to the
// cache directory, '/'-separated.
func entryRelDir(key Sum) string {
	k := key.String()
	return k[:2] + "/" + k
}

// archiveWriter writes a poclbin archive as a stream, entry by entry,
// enforcing the rules poclbin.WriteArchive does for the paths Export
// writes (poclbin.CheckPath, the caps; paths are distinct by
// construction). Its layout is poclbin.WriteArchive's: a test checks that
// ParseArchive then WriteArchive gives the same bytes.
type archiveWriter struct {
	w     *bufio.Writer
	n     uint64
	total uint64
	err   error
}

func newArchiveWriter(w io.Writer, base string) *archiveWriter {
	aw := &archiveWriter{w: bufio.NewWriterSize(w, 1<<16)}
	hdr := []byte(poclbin.ArchiveMagic)
	hdr = binary.LittleEndian.AppendUint32(hdr, poclbin.ArchiveVersion)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(base)))
	hdr = append(hdr, base...)
	_, aw.err = aw.w.Write(hdr)
	return aw
}

func (aw *archiveWriter) add(path string, data []byte) {
	if aw.err != nil {
		return
	}
	if err := poclbin.CheckPath(path); err != nil {
		aw.err = err
		return
	}
	aw.n++
	aw.total += uint64(len(data))
	if aw.n > poclbin.MaxEntries || uint64(len(data)) > poclbin.MaxEntrySize || aw.total > poclbin.MaxTotalSize {
		aw.err = fmt.Errorf("%s: over the caps of a poclbin archive", path)
		return
	}
	h := binary.LittleEndian.AppendUint32(nil, uint32(len(path)))
	h = append(h, path...)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(data)))
	if _, aw.err = aw.w.Write(h); aw.err == nil {
		_, aw.err = aw.w.Write(data)
	}
}

func (aw *archiveWriter) flush() error {
	if aw.err != nil {
		return aw.err
	}
	return aw.w.Flush()
}

// importItem is one entry of an archive being imported, checked.
type importItem struct {
	key   Sum
	e     *Entry
	blobs map[string][]byte
}

// ImportOptions are the choices of an Import.
type ImportOptions struct {
	// TrustArchive takes the archive's entries whether or not a trusted
	// key signed them (offcc cache import --trust-archive).
	TrustArchive bool
}

// ImportResult is what an Import did.
type ImportResult struct {
	// Imported counts the entries stored (an entry already in the cache
	// is kept and counted).
	Imported int
	// Skipped counts, by kind, the entries never imported: plans
	// (KindPlan: a plan is a command line a later build runs, derived
	// again from the compiler rather than taken from elsewhere) and the
	// machine-local kinds (KindTool, KindLast: of use only where they
	// were made).
	Skipped map[Kind]int
}

// SkippedTotal returns the number of entries skipped.
func (r ImportResult) SkippedTotal() int {
	n := 0
	for _, v := range r.Skipped {
		n += v
	}
	return n
}

// neverImported says why Import skips entries of a kind, "" for kinds it
// imports.
func neverImported(k Kind) string {
	switch k {
	case KindPlan:
		return "plans are derived again, never imported"
	case KindTool, KindLast, KindPeak, KindCommand, KindCommandManifest, KindDigests:
		return "machine-local"
	}
	return ""
}

// Import reads a poclbin archive written by Export and stores its entries
// of the kinds it imports (results, manifests, derived digests); plans and
// machine-local entries (tool digests, last-stored key texts) are skipped
// and counted.
//
// Every entry of the archive is checked before anything is written, and
// any violation refuses the whole archive with one error naming the entry:
// the archive must parse (poclbin.ParseArchive: no absolute or ".." paths,
// no duplicates, sizes that fit, caps); every path must be "xx/<key>/index"
// or "xx/<key>/<blob name>", xx the first two of the key's 64 lower-case hex
// digits; each key's index must pass its checksum, be of a known kind and
// list exactly the blob files the archive holds for the key, each of the
// size and SHA-256 the index gives. Unless opt.TrustArchive, every entry
// to be imported must be signed for its key by a key of c.Keys.CacheWriters
// (OFFCC_TRUSTED_CACHE_KEYS; VerifyEntry): an unsigned entry, one signed
// by another key, or one moved to another key refuses the archive. The
// cache directory is checked too: a shard or entry directory the import
// would use that is a symbolic link (or not a directory) refuses the
// archive, so that nothing is written outside the cache directory. Only
// then is each entry stored through the store (DirStore.Put: whole or not
// at all), its blobs staged in a temporary directory inside the entry's
// shard. If writing fails, the entries this import created are removed
// again.
//
// An entry's key cannot be checked against its contents (a key is the
// digest of a job's inputs, not of its outputs): the signature is what
// says that a trusted writer stored those outputs under that key. With
// TrustArchive, import only archives from a source you trust with your
// builds' outputs.
func (c *Cache) Import(data []byte, opt ImportOptions) (ImportResult, error) {
	res := ImportResult{Skipped: map[Kind]int{}}
	a, err := poclbin.ParseArchive(data)
	if err != nil {
		return ImportResult{}, fmt.Errorf("cache import: %v", err)
	}
	all, err := checkImport(a)
	if err != nil {
		return ImportResult{}, fmt.Errorf("cache import: %v", err)
	}
	var items []*importItem
	for _, it := range all {
		if neverImported(it.e.Kind) != "" {
			res.Skipped[it.e.Kind]++
			continue
		}
		items = append(items, it)
	}
	if !opt.TrustArchive {
		if err := c.checkImportTrust(items); err != nil {
			return ImportResult{}, fmt.Errorf("cache import: %v", err)
		}
	}
	if err := c.checkImportDest(items); err != nil {
		return ImportResult{}, fmt.Errorf("cache import: %v", err)
	}
	var created []Sum
	for _, it := range items {
		isNew, err := c.importEntry(it)
		if isNew {
			created = append(created, it.key)
		}
		if err != nil {
			for _, k := range created {
				c.Store.Remove(k)
			}
			return ImportResult{}, fmt.Errorf("cache import: %s: %v", entryRelDir(it.key), err)
		}
	}
	res.Imported = len(items)
	return res, nil
}

// checkImportTrust checks that a trusted key signed every entry to be
// imported, for its key; the first that fails (in key order) is the error.
func (c *Cache) checkImportTrust(items []*importItem) error {
	if len(items) == 0 {
		return nil
	}
	trusted := c.trustedKeys()
	if trusted.Len() == 0 {
		return fmt.Errorf("entry %q: no trusted keys to check its signature with: set %s to the exporter's public key, or pass --trust-archive",
			entryRelDir(items[0].key)+"/"+indexName, trust.EnvCacheWriters)
	}
	for _, it := range items {
		if _, err := VerifyEntry(trusted, it.key, it.e); err != nil {
			return fmt.Errorf("entry %q: %v (import only archives signed by a key of %s, or pass --trust-archive)",
				entryRelDir(it.key)+"/"+indexName, err, trust.EnvCacheWriters)
		}
	}
	return nil
}

// machineLocal are the entry kinds export --all leaves out.
var machineLocal = map[Kind]bool{KindTool: true, KindLast: true, KindPeak: true, KindCommand: true, KindCommandManifest: true, KindDigests: true}

// knownKinds are the entry kinds an archive may hold (Import stores those
// neverImported does not name, and skips the rest).
var knownKinds = map[Kind]bool{
	KindResult: true, KindManifest: true, KindLast: true, KindPlan: true, KindTool: true, KindDerived: true, KindPeak: true,
	KindCommand: true, KindCommandManifest: true, KindDigests: true,
}

// checkImport checks an archive's entries, returning them by key, in key
// order.
func checkImport(a *poclbin.Archive) ([]*importItem, error) {
	byKey := map[Sum]*importItem{}
	index := map[Sum][]byte{}
	bad := func(path, format string, args ...any) error {
		return fmt.Errorf("entry %.300q: %s", path, fmt.Sprintf(format, args...))
	}
	for _, ae := range a.Entries {
		parts := strings.Split(ae.Path, "/")
		if len(parts) != 3 {
			return nil, bad(ae.Path, "not of the form xx/<key>/<file>")
		}
		key, err := ParseSum(parts[1])
		if err != nil {
			return nil, bad(ae.Path, "not under a key directory: %v", err)
		}
		if parts[0] != parts[1][:2] {
			return nil, bad(ae.Path, "shard directory %.80q is not the key's first two digits", parts[0])
		}
		name := parts[2]
		if name != indexName && !validBlobName(name) {
			return nil, bad(ae.Path, "not an index or a valid blob name")
		}
		it := byKey[key]
		if it == nil {
			it = &importItem{key: key, blobs: map[string][]byte{}}
			byKey[key] = it
		}
		if name == indexName {
			index[key] = ae.Data
		} else {
			it.blobs[name] = ae.Data
		}
	}
	keys := make([]Sum, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	items := make([]*importItem, 0, len(keys))
	for _, k := range keys {
		it := byKey[k]
		dir := entryRelDir(k)
		data, ok := index[k]
		if !ok {
			return nil, bad(dir+"/"+indexName, "missing: the archive has files of the key but not its index")
		}
		if len(data) > maxIndexSize {
			return nil, bad(dir+"/"+indexName, "%d bytes, more than an index may have (%d)", len(data), maxIndexSize)
		}
		e, err := DecodeIndex(data)
		if err != nil {
			return nil, bad(dir+"/"+indexName, "%v", err)
		}
		if !knownKinds[e.Kind] {
			return nil, bad(dir+"/"+indexName, "unknown entry kind %.40q", e.Kind)
		}
		listed := map[string]bool{}
		for _, b := range e.Blobs {
			listed[b.Name] = true
			p := dir + "/" + b.Name
			bd, ok := it.blobs[b.Name]
			switch {
			case !ok:
				return nil, bad(p, "listed in the index but missing from the archive")
			case int64(len(bd)) != b.Size:
				return nil, bad(p, "%d bytes, the index says %d", len(bd), b.Size)
			case SumBytes(bd) != b.Sum:
				return nil, bad(p, "bytes do not match the index's SHA-256")
			}
		}
		names := make([]string, 0, len(it.blobs))
		for name := range it.blobs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !listed[name] {
				return nil, bad(dir+"/"+name, "not listed in the key's index")
			}
		}
		it.e = e
		items = append(items, it)
	}
	return items, nil
}

// checkImportDest checks that the directories an import writes in are the
// cache's own: the cache directory a directory (or absent), and each
// shard and entry directory a real directory or absent, never a symbolic
// link, which writing through would reach outside the cache.
func (c *Cache) checkImportDest(items []*importItem) error {
	if info, err := os.Stat(c.Dir); err == nil && !info.IsDir() {
		return fmt.Errorf("cache directory %s is not a directory", c.Dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	check := func(p string) error {
		info, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case info.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: refusing to write through it (remove it)", p)
		case !info.IsDir():
			return fmt.Errorf("%s is not a directory (remove it)", p)
		}
		return nil
	}
	shards := map[string]bool{}
	for _, it := range items {
		dir := c.Store.EntryDir(it.key)
		shard := filepath.Dir(dir)
		if !shards[shard] {
			shards[shard] = true
			if err := check(shard); err != nil {
				return err
			}
		}
		if err := check(dir); err != nil {
			return err
		}
	}
	return nil
}

// importEntry stores one checked entry: its blobs are written to a
// temporary directory in the entry's shard (named like the store's
// temporaries, so that a trim removes it if the import dies), and the entry
// is put from there. isNew reports whether the key had no sound entry.
func (c *Cache) importEntry(it *importItem) (isNew bool, err error) {
	if importFault != nil {
		if err := importFault(it.key); err != nil {
			return false, err
		}
	}
	if _, err := c.Store.Get(it.key); err == nil {
		return false, nil // a sound entry is kept, as Put would
	}
	shard := filepath.Dir(c.Store.EntryDir(it.key))
	if err := os.MkdirAll(shard, 0o777); err != nil {
		return false, err
	}
	if info, err := os.Lstat(shard); err != nil || !info.IsDir() {
		return false, fmt.Errorf("%s is not a directory", shard)
	}
	tmp, err := os.MkdirTemp(shard, tmpPrefix+"import-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	e := *it.e
	e.Blobs = append([]Blob(nil), it.e.Blobs...)
	for i := range e.Blobs {
		b := &e.Blobs[i]
		b.Path = filepath.Join(tmp, b.Name)
		if err := writeNew(b.Path, it.blobs[b.Name], 0o600); err != nil {
			return false, err
		}
	}
	if err := c.Store.Put(it.key, &e); err != nil {
		return false, err
	}
	return true, nil
}

// importFault, set by tests, fails the import of a key.
var importFault func(key Sum) error

// writeNew writes data to a file that must not exist (no link followed),
// made with mode perm (less the umask). It is not fsynced (see put).
func writeNew(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
