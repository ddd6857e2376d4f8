package cache

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// toolDigests gives tools' content digests. Hashing libLLVM (over 100 MB)
// on every build would cost more than many cache hits save, so a digest
// is memoised twice: in the process, and in the store under the file's
// identity (path, size, times, device, inode), which any package upgrade
// changes. Keys then name a tool by its bytes, the same on every machine
// with the same toolchain.
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
	idKey := Sum(sha256.Sum256([]byte(fmt.Sprintf("offcc tool v1\n%q %d %d %d %d %d", real, st.Size, st.Mtime, st.Ctime, st.Dev, st.Ino))))
	if t.store != nil {
		if e, err := t.store.Get(idKey); err == nil && e.Kind == KindTool && strings.HasPrefix(string(e.Record), "sha256=") {
			return string(e.Record)
		}
	}
	h := hashFile(real)
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
