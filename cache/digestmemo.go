package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// KindDigests is a directory's file digests, kept across builds by the
// files' stats (digestMemo). Machine-local: never exported, imported or
// shared.
const KindDigests Kind = "digests"

// digestMemo keeps the digests of the files builds read (headers, above
// all) across builds, as ccache's inode cache does: one entry per
// directory, naming each file with the stat it had when it was hashed and
// its digest. A file whose stat is the one recorded has the bytes
// recorded: only files that had settled when hashed (trustStatAge) are
// recorded, so that an edit within one timestamp tick of the hash cannot
// keep the stat. A HIP compile reads some 300 headers (4 MB), hashed by
// every compile of a build without it.
//
// Only files named by absolute paths outside the build's temporary
// directory are kept. Write errors are ignored; an unreadable or damaged
// entry is a directory without digests.
type digestMemo struct {
	store Store
	write bool
	mu    sync.Mutex
	// dirs are the entries read, by directory.
	dirs map[string]map[string]memoRecord
	// fresh are the digests this build took that its entries lack.
	fresh map[string]map[string]memoRecord
}

// memoRecord is one file of a directory's entry.
type memoRecord struct {
	stat       FileStat
	sum        Sum
	timeMacros bool
	exec       bool
}

// maxMemoFiles bounds a directory's entry.
const maxMemoFiles = 4096

func newDigestMemo(store Store, write bool) *digestMemo {
	if store == nil {
		return nil
	}
	return &digestMemo{store: store, write: write, dirs: map[string]map[string]memoRecord{}, fresh: map[string]map[string]memoRecord{}}
}

func memoKey(dir string) Sum { return sha256.Sum256([]byte("offcc digests v1\x00" + dir)) }

// memoable reports whether the digest of name may be kept: an absolute,
// clean path outside temp (the temporary directory with a slash).
func memoable(name string, temp []byte) bool {
	return filepath.IsAbs(name) && filepath.Clean(name) == name && !strings.HasPrefix(name, string(temp))
}

// lookup returns the digest recorded for name if its stat now is the one
// recorded, else nil.
func (m *digestMemo) lookup(name string) *fileInfo {
	dir, base := filepath.Split(name)
	m.mu.Lock()
	files, ok := m.dirs[dir]
	if !ok {
		files = m.load(dir)
		m.dirs[dir] = files
	}
	rec, ok := files[base]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	st, err := statPath(name)
	if err != nil || st != rec.stat {
		return nil
	}
	return &fileInfo{stat: st, sum: rec.sum, timeMacros: rec.timeMacros, exec: rec.exec, settled: true}
}

// load reads dir's entry. m.mu is held.
func (m *digestMemo) load(dir string) map[string]memoRecord {
	e, err := m.store.Get(memoKey(dir))
	if err != nil || e.Kind != KindDigests {
		return nil
	}
	files, ok := decodeDigests(e.Record)
	if !ok {
		return nil
	}
	return files
}

// add records a digest taken in this build, if the file had settled.
func (m *digestMemo) add(name string, fi *fileInfo) {
	if !fi.settled || fi.err != nil || fi.mentionsTemp {
		return
	}
	dir, base := filepath.Split(name)
	rec := memoRecord{stat: fi.stat, sum: fi.sum, timeMacros: fi.timeMacros, exec: fi.exec}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.dirs[dir][base]; ok && old == rec {
		return
	}
	if m.fresh[dir] == nil {
		m.fresh[dir] = map[string]memoRecord{}
	}
	m.fresh[dir][base] = rec
}

// flush writes the directories' entries that this build added to: each
// read again and merged, the newest digest of a name winning.
func (m *digestMemo) flush() {
	if m == nil || !m.write {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for dir, fresh := range m.fresh {
		files := m.load(dir)
		if files == nil {
			files = map[string]memoRecord{}
		}
		changed := false
		for base, rec := range fresh {
			if old, ok := files[base]; ok && old == rec {
				continue
			}
			if _, ok := files[base]; !ok && len(files) >= maxMemoFiles {
				continue
			}
			files[base], changed = rec, true
		}
		if changed {
			m.store.Replace(memoKey(dir), &Entry{Kind: KindDigests, Record: encodeDigests(files)}) // best effort
		}
	}
	m.fresh = map[string]map[string]memoRecord{}
}

// encodeDigests writes a directory's records: per file, its name, a NUL,
// then "size mtime ctime dev ino flags sha256" and a newline, by name.
func encodeDigests(files map[string]memoRecord) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		r := files[n]
		flags := 0
		if r.timeMacros {
			flags |= 1
		}
		if r.exec {
			flags |= 2
		}
		fmt.Fprintf(&b, "%s\x00%d %d %d %d %d %d %s\n", n, r.stat.Size, r.stat.Mtime, r.stat.Ctime, r.stat.Dev, r.stat.Ino, flags, r.sum)
	}
	return b.Bytes()
}

// decodeDigests reads what encodeDigests wrote; ok is false for anything
// else.
func decodeDigests(data []byte) (map[string]memoRecord, bool) {
	files := map[string]memoRecord{}
	for len(data) > 0 {
		nul := bytes.IndexByte(data, 0)
		if nul <= 0 {
			return nil, false
		}
		name := string(data[:nul])
		data = data[nul+1:]
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 || strings.ContainsRune(name, '/') || name == "." || name == ".." {
			return nil, false
		}
		fields := strings.Fields(string(data[:nl]))
		data = data[nl+1:]
		if len(fields) != 7 || len(files) >= maxMemoFiles {
			return nil, false
		}
		var n [3]int64
		for i := range n {
			v, err := strconv.ParseInt(fields[i], 10, 64)
			if err != nil {
				return nil, false
			}
			n[i] = v
		}
		dev, err1 := strconv.ParseUint(fields[3], 10, 64)
		ino, err2 := strconv.ParseUint(fields[4], 10, 64)
		flags, err3 := strconv.ParseUint(fields[5], 10, 2)
		sum, err := hex.DecodeString(fields[6])
		if err != nil || err1 != nil || err2 != nil || err3 != nil || len(sum) != len(Sum{}) || n[0] < 0 {
			return nil, false
		}
		r := memoRecord{stat: FileStat{Size: n[0], Mtime: n[1], Ctime: n[2], Dev: dev, Ino: ino},
			timeMacros: flags&1 != 0, exec: flags&2 != 0}
		copy(r.sum[:], sum)
		if _, dup := files[name]; dup {
			return nil, false
		}
		files[name] = r
	}
	return files, true
}
