package membudget

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Ledger shares one memory budget between the offcc processes of a
// cgroup (as under make -jN): a small file, updated under flock, of what
// each process has reserved. Entries of processes that are gone are
// dropped whenever it is read, so a killed process releases its share.
// A Ledger is safe for concurrent use.
type Ledger struct {
	path string
	me   entry

	mu   sync.Mutex
	mine int64
}

type entry struct {
	pid   int
	start uint64 // /proc/PID/stat starttime, to tell a reused pid
	id    string // tells the Ledgers of one process apart
	bytes int64
}

// OpenLedger opens (creating it if need be) the ledger of this user and
// this memory cgroup in dir (see LedgerDir).
func OpenLedger(dir string) (*Ledger, error) {
	return openLedgerFile(LedgerPath(dir))
}

func openLedgerFile(path string) (*Ledger, error) {
	pid := os.Getpid()
	start, ok := startTime(pid)
	if !ok {
		return nil, fmt.Errorf("memory ledger %s: cannot read /proc/%d/stat", path, pid)
	}
	var id [6]byte
	rand.Read(id[:])
	l := &Ledger{path: path, me: entry{pid: pid, start: start, id: hex.EncodeToString(id[:])}}
	// One pass checks that the file can be used, and drops the entries
	// of processes that are gone (the file too, when none is left).
	if err := l.update(func(int64) {}); err != nil {
		return nil, err
	}
	return l, nil
}

// Path returns the ledger file's path.
func (l *Ledger) Path() string { return l.path }

// Reserve reserves n bytes for this process when what all the processes
// of the ledger have reserved, plus n, stays within budget, or whatever
// they have when force is set; it reports whether it did. When the file
// cannot be used the error says so and the answer counts this process's
// reservations only, so that a build never fails for the ledger.
func (l *Ledger) Reserve(n, budget int64, force bool) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ok, ran := false, false
	err := l.update(func(others int64) {
		ran = true
		if force || others+l.mine+n <= budget {
			l.mine += n
			ok = true
		}
	})
	if !ran && (force || l.mine+n <= budget) {
		l.mine += n
		ok = true
	}
	return ok, err
}

// Release gives back n bytes that Reserve reserved.
func (l *Ledger) Release(n int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ran := false
	err := l.update(func(int64) { ran = true; l.mine = max(l.mine-n, 0) })
	if !ran {
		l.mine = max(l.mine-n, 0)
	}
	return err
}

// Others returns what the other processes of the ledger have reserved;
// 0 when the file cannot be read.
func (l *Ledger) Others() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var o int64
	l.update(func(others int64) { o = others })
	return o
}

// Mine returns what this Ledger has reserved.
func (l *Ledger) Mine() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mine
}

// Close removes this Ledger's entry from the file.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mine = 0
	return l.update(func(int64) {})
}

// update runs fn, under the file's lock, with what the live entries other
// than this Ledger's reserve, then writes the live entries and this
// Ledger's (l.mine, as fn left it) back. l.mu is held.
//
// The file is removed when no entry is left, so that no ledger outlives
// the builds that used it; a process that opened it before the removal
// sees, once it holds the lock, that the path names another file or none,
// and opens it again.
func (l *Ledger) update(fn func(others int64)) error {
	var f *os.File
	for try := 0; ; try++ {
		var err error
		f, err = lockedLedger(l.path)
		if err == nil {
			break
		}
		if !errors.Is(err, errLedgerMoved) || try == 10 {
			return err
		}
	}
	// Closing the file releases the lock.
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return fmt.Errorf("memory ledger %s: %v", l.path, err)
	}
	entries := parseLedger(data) // nil when corrupt: start afresh
	var live []entry
	var others int64
	for _, e := range entries {
		if e.pid == l.me.pid && e.id == l.me.id {
			continue
		}
		if e.pid != l.me.pid || e.start != l.me.start {
			if s, ok := startTime(e.pid); !ok || s != e.start {
				continue // gone, or its pid reused
			}
		}
		live = append(live, e)
		others += e.bytes
	}
	fn(others)
	if l.mine > 0 {
		me := l.me
		me.bytes = l.mine
		live = append(live, me)
	}
	if len(live) == 0 {
		if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("memory ledger %s: %v", l.path, err)
		}
		return nil
	}
	var b bytes.Buffer
	b.WriteString(ledgerHeader)
	for _, e := range live {
		fmt.Fprintf(&b, "%d %d %s %d\n", e.pid, e.start, e.id, e.bytes)
	}
	if bytes.Equal(b.Bytes(), data) {
		return nil
	}
	if _, err := f.WriteAt(b.Bytes(), 0); err != nil {
		return fmt.Errorf("memory ledger %s: %v", l.path, err)
	}
	if err := f.Truncate(int64(b.Len())); err != nil {
		return fmt.Errorf("memory ledger %s: %v", l.path, err)
	}
	return nil
}

// errLedgerMoved says that the ledger file was removed or replaced between
// its opening and its locking.
var errLedgerMoved = errors.New("memory ledger moved")

// lockedLedger opens the ledger file at path (creating it; never through
// a symbolic link) and locks it, or says errLedgerMoved when path no
// longer names the file locked.
func lockedLedger(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("memory ledger: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("memory ledger %s: lock: %v", path, err)
	}
	held, err1 := f.Stat()
	named, err2 := os.Lstat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, named) {
		f.Close()
		return nil, errLedgerMoved
	}
	return f, nil
}

// parseLedger reads a ledger file's entries; nil when it is empty or
// corrupt.
func parseLedger(data []byte) []entry {
	rest, ok := bytes.CutPrefix(data, []byte(ledgerHeader))
	if !ok {
		return nil
	}
	var out []entry
	for _, line := range strings.Split(string(rest), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil
		}
		pid, err1 := strconv.Atoi(f[0])
		start, err2 := strconv.ParseUint(f[1], 10, 64)
		n, err3 := strconv.ParseInt(f[3], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil || pid <= 0 || n < 0 {
			return nil
		}
		out = append(out, entry{pid: pid, start: start, id: f[2], bytes: n})
	}
	return out
}

// startTime returns the start time of process pid (field 22 of
// /proc/PID/stat, in clock ticks since boot); false when it is gone.
func startTime(pid int) (uint64, bool) {
	s, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, field 2, is in parentheses and may hold anything.
	i := bytes.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(s[i+1:]))
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, false
	}
	// A zombie's memory was freed when it exited: it counts as gone.
	if f[0] == "Z" {
		return 0, false
	}
	return n, true
}
