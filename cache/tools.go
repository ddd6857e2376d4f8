package cache

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// toolDigests gives tools' digests: what keys name a tool (an executable
// or a library it loads) by. An ELF file with a GNU build ID (every LLVM
// tool and library Debian ships, and offcc) is named by that ID and its
// size: the linker computes the ID from the file's contents, so it is the
// same on every machine with the same toolchain, and reading it costs a
// header read where hashing libLLVM's 150 MB would cost 80 ms. Other
// files are named by their bytes' SHA-256, memoised twice: in the process,
// and in the store under the file's identity (path, size, times, device,
// inode), which any package upgrade changes.
type toolDigests struct {
	store Store // nil: memoise in the process only
	write bool  // memoise new digests in store
	mu    sync.Mutex
	memo  map[string]string
}

func newToolDigests(store Store, write bool) *toolDigests {
	return &toolDigests{store: store, write: write, memo: map[string]string{}}
}

// digest returns "sha256=HEX" for the file path leads to, or why there is
// none ("absent", "unreadable").
func (t *toolDigests) digest(path string) string {
	t.mu.Lock()
	d, ok := t.memo[path]
	t.mu.Unlock()
	if ok {
		return d
	}
	d = t.compute(path)
	t.mu.Lock()
	t.memo[path] = d
	t.mu.Unlock()
	return d
}

func (t *toolDigests) compute(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "absent"
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return "absent"
	}
	st := statOf(fi)
	if id := elfBuildID(real); id != "" {
		return fmt.Sprintf("elf-build-id=%s size=%d", id, st.Size)
	}
	idKey := Sum(sha256.Sum256([]byte(fmt.Sprintf("offcc tool v1\n%q %d %d %d %d %d", real, st.Size, st.Mtime, st.Ctime, st.Dev, st.Ino))))
	if t.store != nil {
		if e, err := t.store.Get(idKey); err == nil && e.Kind == KindTool && strings.HasPrefix(string(e.Record), "sha256=") {
			return string(e.Record)
		}
	}
	h := hashFile(real, nil)
	if h.err != nil {
		return "unreadable"
	}
	if h.stat != st {
		// Replaced while read: use the bytes, but do not memoise them
		// under an identity they may not have.
		return "sha256=" + h.sum.String()
	}
	d := "sha256=" + h.sum.String()
	if t.store != nil && t.write {
		t.store.Put(idKey, &Entry{Kind: KindTool, Record: []byte(d)}) // best effort
	}
	return d
}

// elfBuildID returns the hex GNU build ID of an ELF file, or "".
func elfBuildID(name string) string {
	f, err := elf.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	var notes [][]byte
	if sec := f.Section(".note.gnu.build-id"); sec != nil {
		if data, err := sec.Data(); err == nil {
			notes = append(notes, data)
		}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_NOTE && p.Filesz < 1<<16 {
			data := make([]byte, p.Filesz)
			if _, err := p.ReadAt(data, 0); err == nil {
				notes = append(notes, data)
			}
		}
	}
	for _, data := range notes {
		if id := findBuildID(data, f.ByteOrder); id != "" {
			return id
		}
	}
	return ""
}

// findBuildID walks ELF notes (namesz, descsz, type, name, desc, each
// padded to 4 bytes) for NT_GNU_BUILD_ID (3) of owner "GNU".
func findBuildID(data []byte, bo binary.ByteOrder) string {
	for len(data) >= 12 {
		namesz, descsz, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
		data = data[12:]
		nameEnd := (uint64(namesz) + 3) &^ 3
		descEnd := nameEnd + (uint64(descsz)+3)&^3
		if descEnd > uint64(len(data)) || uint64(namesz) > nameEnd {
			return ""
		}
		name := data[:namesz]
		desc := data[nameEnd : nameEnd+uint64(descsz)]
		if typ == 3 && string(name) == "GNU\x00" && len(desc) >= 8 {
			return hex.EncodeToString(desc)
		}
		data = data[descEnd:]
	}
	return ""
}

// ToolIdentity names an executable as build-cache keys do: its digest (ELF
// build ID and size, else content hash) and those of the libLLVM and
// libclang-cpp libraries it loads, one "name digest" line each. Two
// machines whose tools have the same identity produce the same outputs
// from the same command lines; the build farm matches workers by it.
func ToolIdentity(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	t := newToolDigests(nil, false)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", filepath.Base(real), t.digest(real))
	for _, l := range DriverLibraries(real) {
		if len(l) >= 2 {
			fmt.Fprintf(&b, "%s %s\n", l[0], t.digest(l[1]))
		}
	}
	return b.String()
}
