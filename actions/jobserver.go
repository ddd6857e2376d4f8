package actions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Jobserver is a client of the GNU make jobserver (DRIVER.md §6). Every
// process owns one implicit slot; each extra concurrent job must Acquire a
// token (one byte) and Release it (the same byte) when done.
//
// Acquire is cancellable. The jobserver file is opened as a new, pollable,
// non-blocking file description (the fifo itself, or /proc/self/fd/R for
// inherited pipe fds), so a pending read is interrupted with a read deadline
// and never consumes a token nobody takes. Where that is impossible it falls
// back to one background blocking read whose byte, if Acquire was cancelled,
// is kept for the next Acquire or written back by Close. The blocking mode of
// make's own file description is never changed.
//
// A Jobserver is safe for concurrent use.
type Jobserver struct {
	r, w     *os.File // may be the same file
	pollable bool

	readSem chan struct{} // serialises reads (and guards pending)
	pending chan readResult

	mu     sync.Mutex
	held   []byte // bytes acquired and not yet released
	closed bool
}

type readResult struct {
	b   byte
	err error
}

// reopenViaProc may be turned off by tests to exercise the fallback path.
var reopenViaProc = true

// pastDeadline is a deadline in the past, used to interrupt reads.
var pastDeadline = time.Unix(1, 0)

// JobserverFromEnv parses the last --jobserver-auth= (or the older
// --jobserver-fds=) option in makeflags, the value of MAKEFLAGS, and opens
// the jobserver it names. It understands "fifo:PATH" (make ≥ 4.4) and "R,W"
// (inherited pipe fds). It returns nil, nil when makeflags names no
// jobserver, when the fds are negative (jobserver disabled) and when they are
// not open pipe ends of the right direction (make warns in that case: the
// recipe was probably not marked with '+'). Options after a "--" word
// (command-line variable definitions) are ignored.
func JobserverFromEnv(makeflags string) (*Jobserver, error) {
	auth := jobserverAuth(makeflags)
	if auth == "" {
		return nil, nil
	}
	if path, ok := strings.CutPrefix(auth, "fifo:"); ok {
		return openFifo(path)
	}
	rs, ws, ok := strings.Cut(auth, ",")
	if !ok {
		return nil, fmt.Errorf("actions: unsupported jobserver style %q", auth)
	}
	rfd, err1 := strconv.Atoi(rs)
	wfd, err2 := strconv.Atoi(ws)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("actions: malformed jobserver fds %q", auth)
	}
	if rfd < 0 || wfd < 0 {
		return nil, nil
	}
	if !isPipeFd(rfd, syscall.O_RDONLY) || !isPipeFd(wfd, syscall.O_WRONLY) {
		return nil, nil
	}
	return openFds(rfd, wfd)
}

// jobserverAuth returns the value of the last --jobserver-auth= (or
// --jobserver-fds=) option in makeflags before any "--" word.
func jobserverAuth(makeflags string) string {
	auth := ""
	for _, f := range strings.Fields(makeflags) {
		if f == "--" {
			break
		}
		for _, p := range []string{"--jobserver-auth=", "--jobserver-fds="} {
			if v, ok := strings.CutPrefix(f, p); ok {
				auth = v
			}
		}
	}
	return auth
}

// JobserverUnavailable explains why JobserverFromEnv found no jobserver
// although makeflags names one by pipe file descriptors: they are not open
// in this process, which is what make before 4.4 does to a recipe line not
// marked with '+' (or not naming $(MAKE)). It returns "" otherwise.
func JobserverUnavailable(makeflags string) string {
	auth := jobserverAuth(makeflags)
	rs, ws, ok := strings.Cut(auth, ",")
	if !ok {
		return ""
	}
	rfd, err1 := strconv.Atoi(rs)
	wfd, err2 := strconv.Atoi(ws)
	if err1 != nil || err2 != nil || rfd < 0 || wfd < 0 {
		return ""
	}
	if isPipeFd(rfd, syscall.O_RDONLY) && isPipeFd(wfd, syscall.O_WRONLY) {
		return ""
	}
	return fmt.Sprintf("make's jobserver (--jobserver-auth=%s) is not open in this process: "+
		"make before 4.4 passes its jobserver pipe only to recipe lines marked with '+' or naming $(MAKE)", auth)
}

// isPipeFd reports whether fd is open, is a pipe or fifo, and is open for
// the given direction (or read-write).
func isPipeFd(fd, mode int) bool {
	fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		return false
	}
	acc := int(fl) & syscall.O_ACCMODE
	if acc != mode && acc != syscall.O_RDWR {
		return false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return false
	}
	return st.Mode&syscall.S_IFMT == syscall.S_IFIFO
}

func openFifo(path string) (*Jobserver, error) {
	// O_RDWR never blocks on a fifo and gives a pollable non-blocking file.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("actions: jobserver: %w", err)
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		f.Close()
		return nil, fmt.Errorf("actions: jobserver: %s is not a fifo", path)
	}
	return newJobserver(f, f), nil
}

func openFds(rfd, wfd int) (*Jobserver, error) {
	if reopenViaProc {
		// A new open file description of the same pipe: we may make it
		// non-blocking without affecting make and the other clients.
		if f, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(rfd), os.O_RDWR, 0); err == nil {
			if f.SetReadDeadline(time.Time{}) == nil {
				return newJobserver(f, f), nil
			}
			f.Close()
		}
	}
	// Fallback: duplicates of the inherited fds (so that Close and the
	// finalizers never close make's fds), used in whatever mode they are in.
	r, err := dupFile(rfd, "jobserver-r")
	if err != nil {
		return nil, err
	}
	w, err := dupFile(wfd, "jobserver-w")
	if err != nil {
		r.Close()
		return nil, err
	}
	return newJobserver(r, w), nil
}

func dupFile(fd int, name string) (*os.File, error) {
	syscall.ForkLock.RLock()
	nfd, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("actions: jobserver: dup %d: %w", fd, err)
	}
	return os.NewFile(uintptr(nfd), name), nil
}

func newJobserver(r, w *os.File) *Jobserver {
	return &Jobserver{
		r:        r,
		w:        w,
		pollable: r.SetReadDeadline(time.Time{}) == nil,
		readSem:  make(chan struct{}, 1),
	}
}

// ErrJobserverClosed is returned by Acquire after Close.
var ErrJobserverClosed = errors.New("actions: jobserver closed")

// Acquire takes one token: it reads one byte from the jobserver, remembering
// it for Release. It blocks until a token is available or ctx is done, in
// which case it returns ctx.Err() and no token is taken. Each successful
// Acquire must be paired with one Release.
func (j *Jobserver) Acquire(ctx context.Context) error {
	select {
	case j.readSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-j.readSem }()
	if j.isClosed() {
		return ErrJobserverClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var res readResult
	if j.pollable {
		res = j.readPollable(ctx)
	} else {
		if j.pending == nil {
			ch := make(chan readResult, 1)
			j.pending = ch
			go func() { ch <- readByte(j.r) }()
		}
		select {
		case res = <-j.pending:
			j.pending = nil
		case <-ctx.Done():
			// The read stays pending; its byte goes to the next Acquire
			// or back to the jobserver on Close.
			return ctx.Err()
		}
	}
	if res.err != nil {
		return fmt.Errorf("actions: jobserver read: %w", res.err)
	}
	j.mu.Lock()
	if j.closed {
		// Close is waiting for us; the file is still open.
		j.mu.Unlock()
		writeByte(j.w, res.b)
		return ErrJobserverClosed
	}
	j.held = append(j.held, res.b)
	j.mu.Unlock()
	return nil
}

func (j *Jobserver) readPollable(ctx context.Context) readResult {
	for {
		if err := ctx.Err(); err != nil {
			return readResult{err: err}
		}
		if err := j.r.SetReadDeadline(time.Time{}); err != nil {
			return readResult{err: err}
		}
		if j.isClosed() {
			return readResult{err: ErrJobserverClosed}
		}
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			j.r.SetReadDeadline(pastDeadline)
			close(fired)
		})
		res := readByte(j.r)
		if !stop() {
			<-fired
		}
		if res.err == nil {
			return res // got a token, even if ctx is now done: caller releases it
		}
		if errors.Is(res.err, os.ErrDeadlineExceeded) {
			if err := ctx.Err(); err != nil {
				return readResult{err: err}
			}
			continue // spurious or Close; the loop checks
		}
		return res
	}
}

func (j *Jobserver) isClosed() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.closed
}

func readByte(f *os.File) readResult {
	var b [1]byte
	for {
		n, err := f.Read(b[:])
		if n == 1 {
			return readResult{b: b[0]}
		}
		if err == nil {
			continue
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return readResult{err: err}
	}
}

// Release gives back one token acquired by Acquire, writing back the byte
// that was read. It does nothing if no token is held.
func (j *Jobserver) Release() {
	j.mu.Lock()
	defer j.mu.Unlock() // held across the write so that Close cannot close the file under it
	if len(j.held) == 0 {
		return
	}
	b := j.held[len(j.held)-1]
	j.held = j.held[:len(j.held)-1]
	writeByte(j.w, b)
}

func writeByte(f *os.File, b byte) {
	for {
		n, err := f.Write([]byte{b})
		if n == 1 || (err != nil && !errors.Is(err, syscall.EINTR)) {
			return
		}
	}
}

// Close gives back every token still held (and, on the fallback path, the
// byte of a pending read once it arrives) and closes the jobserver's own
// file descriptors; fds inherited from make stay open. It interrupts a
// concurrent Acquire on the pollable path and otherwise waits for it.
func (j *Jobserver) Close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	j.mu.Unlock()
	if j.pollable {
		// Interrupt a concurrent Acquire, then wait for it to finish.
		j.r.SetReadDeadline(pastDeadline)
	}
	j.readSem <- struct{}{}
	defer func() { <-j.readSem }()
	j.mu.Lock()
	held := j.held
	j.held = nil
	j.mu.Unlock()
	for _, b := range held {
		writeByte(j.w, b)
	}
	if j.pending != nil {
		pending, r, w := j.pending, j.r, j.w
		j.pending = nil
		go func() {
			res := <-pending
			if res.err == nil {
				writeByte(w, res.b)
			}
			r.Close()
			if w != r {
				w.Close()
			}
		}()
		return nil
	}
	err := j.r.Close()
	if j.w != j.r {
		if err2 := j.w.Close(); err == nil {
			err = err2
		}
	}
	return err
}
