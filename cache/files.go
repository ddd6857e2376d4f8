package cache

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// FileStat is what a stat says of a file, enough to tell that it has not
// changed since its digest was taken (as ccache's manifests do).
type FileStat struct {
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"` // nanoseconds since the epoch
	Ctime int64  `json:"ctime"`
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
}

// StatOf returns what a stat says of a file, enough to tell that it has
// not changed (its size, times, device and inode).
func StatOf(fi os.FileInfo) FileStat { return statOf(fi) }

// Settled reports whether a file with this stat, looked at now, had been
// left alone for at least d: a file changed within the last moments can
// change again within the same timestamp tick, so its stat vouches for
// nothing (ccache's "racy" rule).
func (st FileStat) Settled(now time.Time, d time.Duration) bool {
	limit := now.Add(-d).UnixNano()
	return st.Mtime < limit && st.Ctime < limit
}

func statOf(fi os.FileInfo) FileStat {
	st := FileStat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Ctime = sys.Ctim.Sec*1e9 + sys.Ctim.Nsec
		st.Dev, st.Ino = uint64(sys.Dev), sys.Ino
	}
	return st
}

// fileInfo is a file's digest, taken at one stat.
type fileInfo struct {
	stat FileStat
	sum  Sum
	// timeMacros: the bytes mention __DATE__, __TIME__ or __TIMESTAMP__.
	timeMacros bool
	// mentionsTemp: the bytes name a path in the build's temporary
	// directory (a generated registration module's .incbin).
	mentionsTemp bool
	// exec: the file is executable (its mode is restored with it).
	exec bool
	// settled: the file had been left alone for trustStatAge when it was
	// hashed, so a later stat equal to stat vouches for sum.
	settled bool
	err     error
}

// fileDigests hashes files once per build: the headers five device
// compiles read are hashed once, not five times.
type fileDigests struct {
	mu    sync.Mutex
	files map[string]*fileInfo
	// temp is the temporary directory's path with a trailing slash,
	// looked for in every file hashed.
	temp []byte
	// now is the clock a digest's settled mark is taken by (tests move
	// it); nil is time.Now.
	now func() time.Time
	// memo keeps digests across builds; nil for none.
	memo *digestMemo
}

// newFileDigests returns a build's digests, kept across builds in memo
// (nil for none).
func newFileDigests(tempDir string, memo *digestMemo) *fileDigests {
	return &fileDigests{files: map[string]*fileInfo{}, temp: []byte(tempDir + "/"), memo: memo}
}

// get returns the digest of name (as the build saw it first).
func (d *fileDigests) get(name string) *fileInfo {
	d.mu.Lock()
	fi := d.files[name]
	d.mu.Unlock()
	if fi != nil {
		return fi
	}
	keep := d.memo != nil && memoable(name, d.temp)
	if keep {
		fi = d.memo.lookup(name)
	}
	if fi == nil {
		clock := time.Now
		if d.now != nil {
			clock = d.now
		}
		fi = hashFile(name, d.temp)
		fi.settled = fi.err == nil && fi.stat.trusted(clock())
		if keep {
			d.memo.add(name, fi)
		}
	}
	d.mu.Lock()
	if old := d.files[name]; old != nil {
		fi = old
	} else {
		d.files[name] = fi
	}
	d.mu.Unlock()
	return fi
}

// set records a digest the build knows without reading the file (an
// output it wrote or restored).
func (d *fileDigests) set(name string, fi *fileInfo) {
	d.mu.Lock()
	d.files[name] = fi
	d.mu.Unlock()
}

// current returns the digest of name as it is now: what the build knows,
// when a stat finds the file as it was when hashed and it had settled by
// then (ccache's racy rule), else the file hashed again.
func (d *fileDigests) current(name string) *fileInfo {
	if fi := d.peek(name); fi != nil && fi.settled && fi.err == nil {
		if st, err := statPath(name); err == nil && st == fi.stat {
			return fi
		}
	}
	d.forget(name)
	return d.get(name)
}

// forget drops what is known of name (a file an action rewrote).
func (d *fileDigests) forget(name string) {
	d.mu.Lock()
	delete(d.files, name)
	d.mu.Unlock()
}

var timeMacroNames = [][]byte{[]byte("__DATE__"), []byte("__TIME__"), []byte("__TIMESTAMP__")}

// hashFile reads a file once, for its digest and whether it mentions a
// time macro or temp (when not empty).
func hashFile(name string, temp []byte) *fileInfo {
	f, err := os.Open(name)
	if err != nil {
		return &fileInfo{err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return &fileInfo{err: err}
	}
	fi := &fileInfo{stat: statOf(st), exec: st.Mode()&0o111 != 0}
	scan := func(b []byte) {
		for _, m := range timeMacroNames {
			fi.timeMacros = fi.timeMacros || bytes.Contains(b, m)
		}
		fi.mentionsTemp = fi.mentionsTemp || len(temp) > 0 && bytes.Contains(b, temp)
	}
	// What a match across two reads needs of the first: the longest
	// needle less a byte.
	keep := max(len(temp), len("__TIMESTAMP__")) - 1
	h := sha256.New()
	// (A small file needs no 64 KiB buffer: a build hashes tens.)
	buf := make([]byte, min(64<<10, max(512, st.Size()+1)))
	tail := make([]byte, 0, 2*keep)
	for {
		n, rerr := f.Read(buf)
		if n > 0 {
			h.Write(buf[:n])
			if len(tail) > 0 {
				scan(append(tail, buf[:min(n, keep)]...))
			}
			scan(buf[:n])
			tail = append(tail[:0], buf[max(0, n-keep):n]...)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return &fileInfo{err: rerr}
		}
	}
	copy(fi.sum[:], h.Sum(nil))
	return fi
}

// trustStatAge: a file's stat stands for its digest in a manifest only if
// the file was last changed at least this long before the digest was
// taken; a file changed within timestamp granularity of the hash could
// change again with the same stat (ccache's inode cache uses 2 s).
const trustStatAge = 2 * time.Second

// trusted reports whether st may later stand for the digest taken at now.
func (st FileStat) trusted(now time.Time) bool {
	limit := now.Add(-trustStatAge).UnixNano()
	return st.Mtime < limit && st.Ctime < limit
}

// changedSince reports whether the file changed at or after t (it may have
// been edited while an action read it).
func (st FileStat) changedSince(t time.Time) bool {
	n := t.UnixNano()
	return st.Mtime >= n || st.Ctime >= n
}

// peek returns what the build knows of name, or nil.
func (d *fileDigests) peek(name string) *fileInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.files[name]
}

// statPath stats a file, following links as the compiler opening it does.
// (A lookup stats every header a compile read: the system call alone,
// without os.Stat's FileInfo.)
func statPath(name string) (FileStat, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Stat(name, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return FileStat{}, &os.PathError{Op: "stat", Path: name, Err: err}
		}
		break
	}
	return FileStat{Size: st.Size, Mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, Ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec, Dev: uint64(st.Dev), Ino: st.Ino}, nil
}
