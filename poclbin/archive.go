package poclbin

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ArchiveMagic starts an export archive. Byte 7, the low byte of the
// version, is never 0 for supported versions, which tells an archive apart
// from a program binary.
const ArchiveMagic = "poclbin"

// ArchiveVersion is the only archive version ParseArchive accepts and
// WriteArchive writes.
const ArchiveVersion = 1

// Caps enforced by ParseArchive, WriteArchive and Extract.
const (
	MaxPathLen   = 4096    // bytes in an entry path or the base path
	MaxEntries   = 1 << 16 // entries per archive
	MaxEntrySize = 1 << 30 // bytes in one entry
	MaxTotalSize = 1 << 32 // bytes in all entries together
)

const archiveHeaderSize = 7 + 4 + 4

// Archive is offcc's cache-export archive: magic "poclbin", u32 version,
// u32-length base path, then until the end of data entries of u32-length
// path, u32 size and blob. All integers are little-endian.
type Archive struct {
	Version  uint32 // ArchiveVersion (0 is written as ArchiveVersion)
	BasePath string // informational only; never used as a destination
	Entries  []Entry
}

// Entry is one file of an archive. Path is '/'-separated and relative.
type Entry struct {
	Path string
	Data []byte // aliases the input after ParseArchive
}

// IsArchive reports whether b starts with "poclbin" followed by a non-zero
// byte (a version's low byte), i.e. is not a pocl program binary.
func IsArchive(b []byte) bool {
	return len(b) >= 8 && string(b[:7]) == ArchiveMagic && b[7] != 0
}

type limits struct {
	pathLen, entries, entrySize, total uint64
}

var defaultLimits = limits{MaxPathLen, MaxEntries, MaxEntrySize, MaxTotalSize}

// ParseArchive parses an export archive. It requires version 1, a base path
// and entry paths that are valid UTF-8 without NULs, entry paths that pass
// CheckPath, no duplicate paths (also under Unicode simple case folding, so
// that "A" and "a" or "ß" and "ẞ" clash; full folding such as "ß" to "ss" and
// Unicode normalisation are not applied) and no path that is both a file and
// a parent directory of another, entries within the Max* caps, and the data
// to end exactly after the last entry.
func ParseArchive(b []byte) (*Archive, error) { return parseArchive(b, defaultLimits) }

func parseArchive(b []byte, lim limits) (*Archive, error) {
	r := &reader{b: b, end: len(b), format: "poclbin archive"}
	if len(b) < 7 || string(b[:7]) != ArchiveMagic {
		return nil, r.errf("header", 0, "missing magic \"poclbin\"")
	}
	if len(b) >= 8 && b[7] == 0 {
		return nil, r.errf("header", 7, "byte 7 is 0: this is a pocl program binary, not an archive")
	}
	if len(b) < archiveHeaderSize {
		return nil, r.errf("header", 0, "truncated: %d bytes, header needs %d", len(b), archiveHeaderSize)
	}
	r.pos = 7
	a := &Archive{}
	a.Version, _ = r.u32("version")
	if a.Version != ArchiveVersion {
		return nil, r.errf("header", 7, "unsupported version %d (want %d)", a.Version, ArchiveVersion)
	}
	at := r.pos
	n, _ := r.u32("base path length")
	if uint64(n) > lim.pathLen {
		return nil, r.errf("base path", at, "length %#x exceeds the cap of %#x", n, lim.pathLen)
	}
	base, err := r.bytes("base path", uint64(n))
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(base) || strings.IndexByte(string(base), 0) >= 0 {
		return nil, r.errf("base path", at, "not valid UTF-8 or contains NUL")
	}
	a.BasePath = string(base)

	c := newChecker(lim)
	for i := 0; r.pos < len(b); i++ {
		what := fmt.Sprintf("entry %d", i)
		at := r.pos
		n, err := r.u32(what + " path length")
		if err != nil {
			return nil, err
		}
		if uint64(n) > lim.pathLen {
			return nil, r.errf(what, at, "path length %#x exceeds the cap of %#x", n, lim.pathLen)
		}
		pb, err := r.bytes(what+" path", uint64(n))
		if err != nil {
			return nil, err
		}
		path := string(pb)
		if err := c.add(path); err != nil {
			return nil, r.errf(what, at, "%v", err)
		}
		sat := r.pos
		size, err := r.u32(fmt.Sprintf("entry %d (%.64q) size", i, path))
		if err != nil {
			return nil, err
		}
		if err := c.addSize(uint64(size)); err != nil {
			return nil, r.errf(fmt.Sprintf("entry %d (%.64q)", i, path), sat, "%v", err)
		}
		data, err := r.bytes(fmt.Sprintf("entry %d (%.64q) data", i, path), uint64(size))
		if err != nil {
			return nil, err
		}
		a.Entries = append(a.Entries, Entry{Path: path, Data: data})
	}
	return a, nil
}

// PathError reports an entry path that CheckPath rejects.
type PathError struct {
	Path   string
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("path %.256q: %s", e.Path, e.Reason) }

// CheckPath reports whether p is a safe relative entry path: non-empty, at
// most MaxPathLen bytes, valid UTF-8, free of NUL and '\', not absolute (no
// leading '/', which also covers UNC "//", and no drive letter such as
// "C:"), without empty, "." or ".." components, and local by
// filepath.IsLocal.
func CheckPath(p string) error { return checkPath(p, MaxPathLen) }

func checkPath(p string, maxLen uint64) error {
	bad := func(reason string) error { return &PathError{Path: p, Reason: reason} }
	switch {
	case p == "":
		return bad("empty")
	case uint64(len(p)) > maxLen:
		return bad(fmt.Sprintf("longer than %d bytes", maxLen))
	case !utf8.ValidString(p):
		return bad("not valid UTF-8")
	case strings.IndexByte(p, 0) >= 0:
		return bad("contains NUL")
	case strings.IndexByte(p, '\\') >= 0:
		return bad("contains a backslash")
	case strings.HasPrefix(p, "//"):
		return bad("UNC path")
	case p[0] == '/':
		return bad("absolute")
	case len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z'):
		return bad("starts with a drive letter")
	}
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "":
			return bad("empty component")
		case ".":
			return bad("'.' component")
		case "..":
			return bad("'..' component")
		}
	}
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		return bad("not a local path")
	}
	return nil
}

// checker enforces path rules, uniqueness and caps over a sequence of
// entries.
type checker struct {
	lim   limits
	exact map[string]bool
	files map[string]string // folded path -> original
	dirs  map[string]string // folded parent directory -> a path under it
	n     uint64
	total uint64
}

func newChecker(lim limits) *checker {
	return &checker{lim: lim, exact: map[string]bool{}, files: map[string]string{}, dirs: map[string]string{}}
}

func (c *checker) add(p string) error {
	if c.n++; c.n > c.lim.entries {
		return fmt.Errorf("more than %d entries", c.lim.entries)
	}
	if err := checkPath(p, c.lim.pathLen); err != nil {
		return err
	}
	if c.exact[p] {
		return &PathError{Path: p, Reason: "duplicate path"}
	}
	f := foldPath(p)
	if prev, ok := c.files[f]; ok {
		return &PathError{Path: p, Reason: fmt.Sprintf("duplicate of %.256q when case is ignored", prev)}
	}
	if under, ok := c.dirs[f]; ok {
		return &PathError{Path: p, Reason: fmt.Sprintf("is a file and the parent directory of %.256q", under)}
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '/' {
			continue
		}
		d := f[:i]
		if prev, ok := c.files[d]; ok {
			return &PathError{Path: p, Reason: fmt.Sprintf("a parent directory is the file entry %.256q", prev)}
		}
		if _, ok := c.dirs[d]; !ok {
			c.dirs[d] = p
		}
	}
	c.exact[p] = true
	c.files[f] = p
	return nil
}

func (c *checker) addSize(size uint64) error {
	if size > c.lim.entrySize {
		return fmt.Errorf("size %#x exceeds the per-entry cap of %#x", size, c.lim.entrySize)
	}
	if c.total += size; c.total > c.lim.total {
		return fmt.Errorf("entries total %#x bytes, more than the cap of %#x", c.total, c.lim.total)
	}
	return nil
}

// foldPath maps each rune to the smallest rune of its Unicode simple case
// folding orbit, so that paths equal under case-insensitive comparison map
// to the same key. Folding keeps '/' in place and, for ASCII, byte offsets.
func foldPath(p string) string {
	ascii := true
	for i := 0; i < len(p); i++ {
		if p[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(p)
	}
	var b strings.Builder
	for _, r := range p {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < m {
				m = f
			}
		}
		b.WriteRune(m)
	}
	return b.String()
}

// validate checks a whole in-memory archive.
func (a *Archive) validate(lim limits) error {
	if a.Version != 0 && a.Version != ArchiveVersion {
		return fmt.Errorf("poclbin archive: unsupported version %d", a.Version)
	}
	if uint64(len(a.BasePath)) > lim.pathLen || !utf8.ValidString(a.BasePath) || strings.IndexByte(a.BasePath, 0) >= 0 {
		return fmt.Errorf("poclbin archive: base path %.256q is too long, not UTF-8 or contains NUL", a.BasePath)
	}
	c := newChecker(lim)
	for i, e := range a.Entries {
		if err := c.add(e.Path); err != nil {
			return fmt.Errorf("poclbin archive entry %d: %w", i, err)
		}
		if err := c.addSize(uint64(len(e.Data))); err != nil {
			return fmt.Errorf("poclbin archive entry %d (%.256q): %w", i, e.Path, err)
		}
	}
	return nil
}

// WriteArchive writes a as an export archive, after checking it against
// every rule ParseArchive enforces, so that what it writes parses back.
func WriteArchive(w io.Writer, a *Archive) error {
	if a == nil {
		return errNilArchive
	}
	if err := a.validate(defaultLimits); err != nil {
		return err
	}
	hdr := []byte(ArchiveMagic)
	hdr = le32(hdr, ArchiveVersion)
	hdr = appendStr(hdr, a.BasePath)
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	for _, e := range a.Entries {
		h := appendStr(nil, e.Path)
		h = le32(h, uint32(len(e.Data)))
		if _, err := w.Write(h); err != nil {
			return err
		}
		if _, err := w.Write(e.Data); err != nil {
			return err
		}
	}
	return nil
}

var errNilArchive = errors.New("poclbin: nil archive")
