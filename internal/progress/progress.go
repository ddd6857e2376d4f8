// Package progress draws a one-line status of a build's running jobs on an
// interactive terminal, for example on stderr:
//
//	offcc: 3 jobs running: gfx90a 4.1s, gfx1030 3.9s, host 2.2s
//
// Nothing is drawn until the build's jobs have been running for
// Options.Delay, measured from the first Start, so that fast builds never
// show the line. From then on the line is redrawn every Options.Interval,
// lists the running jobs longest-running first and is truncated so that it
// never wraps. Output written through Status.Writer first erases the line;
// the line comes back at the next redraw. Close erases it for good.
//
// A nil *Status is valid and does nothing, so callers need not test whether
// the status is enabled at every call.
package progress

import (
	"cmp"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/offcc/offcc/internal/term"
)

// Default values for the zero fields of Options.
const (
	DefaultDelay    = 2 * time.Second
	DefaultInterval = 250 * time.Millisecond
	DefaultWidth    = 80
)

// erase moves to the start of the line and clears it.
const erase = "\r\033[K"

// Options configures a Status. The zero value is usable.
type Options struct {
	// Prog prefixes the line ("offcc: ..."); empty means no prefix.
	Prog string
	// Delay is how long the jobs must have been running, counted from the
	// first Start, before anything is drawn. 0 means DefaultDelay; a
	// negative value draws from the first redraw on.
	Delay time.Duration
	// Interval is the redraw period; 0 or less means DefaultInterval.
	Interval time.Duration
	// Width is the terminal's number of columns. 0 asks the terminal at each
	// redraw (when the Writer given to New is an *os.File that is one), and
	// falls back to DefaultWidth.
	Width int

	// now replaces time.Now in tests.
	now func() time.Time
	// manual: no ticker goroutine; tests call tick.
	manual bool
}

// Status is the status line of one build. Its methods are safe for
// concurrent use. Create it with New and release it with Close.
type Status struct {
	w        io.Writer
	tty      *os.File // w, when it is an *os.File, to ask for its width
	prog     string
	delay    time.Duration
	width    int
	now      func() time.Time
	quit     chan struct{}
	done     chan struct{}
	closeOne sync.Once

	mu      sync.Mutex // serialises all writes to the terminal
	jobs    map[any]job
	cached  int // jobs whose outputs came from the build cache
	seq     uint64
	first   time.Time // of the first Start; zero before it
	drawn   string    // the line on the terminal, "" when none
	midLine bool      // the last byte written through a Writer was not '\n'
	closed  bool
}

type job struct {
	label string
	start time.Time
	seq   uint64 // Start order, to order jobs started at the same instant
}

// New returns a Status that draws on w, typically os.Stderr after Enabled
// reported true for it, and starts its redraw goroutine; call Close to stop
// it.
func New(w io.Writer, opt Options) *Status {
	s := &Status{
		w:     w,
		prog:  opt.Prog,
		delay: opt.Delay,
		width: opt.Width,
		now:   opt.now,
		jobs:  make(map[any]job),
	}
	if s.delay == 0 {
		s.delay = DefaultDelay
	}
	if s.now == nil {
		s.now = time.Now
	}
	if f, ok := w.(*os.File); ok && s.width <= 0 {
		s.tty = f
	}
	if !opt.manual {
		interval := opt.Interval
		if interval <= 0 {
			interval = DefaultInterval
		}
		s.quit = make(chan struct{})
		s.done = make(chan struct{})
		go s.loop(time.NewTicker(interval))
	}
	return s
}

func (s *Status) loop(t *time.Ticker) {
	defer close(s.done)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.tick()
		}
	}
}

// Start records that the job key, shown as label ("gfx90a", "sm_90",
// "host", "link"), began now. key must be comparable (a pointer to the job
// is a good key); starting a key again restarts it.
func (s *Status) Start(key any, label string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	now := s.now()
	if s.first.IsZero() {
		s.first = now
	}
	s.seq++
	s.jobs[key] = job{label: label, start: now, seq: s.seq}
}

// Cached records that a job's outputs came from the build cache; the line
// counts such jobs ("3 cached").
func (s *Status) Cached() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cached++
}

// Stop records that the job key ended. Unknown keys are ignored. The line
// changes at the next redraw; when no job is left it is erased then.
func (s *Status) Stop(key any) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.jobs, key)
}

// Writer wraps inner, one of the build's output streams (typically stdout
// and stderr, which share the terminal with the line), so that each
// non-empty write first erases the status line (on the writer given to New). The line is redrawn at the next redraw, but
// only once the output written through all wrapped writers ends with a
// newline, so that a partial line is never overwritten. Writes and redraws
// never interleave. On a nil Status, Writer returns inner.
func (s *Status) Writer(inner io.Writer) io.Writer {
	if s == nil {
		return inner
	}
	return &writer{s: s, inner: inner}
}

type writer struct {
	s     *Status
	inner io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(p) > 0 {
		s.show("")
	}
	n, err := w.inner.Write(p)
	if n > 0 {
		s.midLine = p[n-1] != '\n'
	}
	return n, err
}

// Close stops the redraw goroutine, waits for it to end and erases the line
// if it is drawn; nothing is drawn after. Close is idempotent. The writers
// returned by Writer keep passing output through after Close.
func (s *Status) Close() {
	if s == nil {
		return
	}
	s.closeOne.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.show("")
		s.mu.Unlock()
		if s.quit != nil {
			close(s.quit)
			<-s.done
		}
	})
}

// tick redraws the line.
func (s *Status) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	now := s.now()
	line := ""
	if len(s.jobs) > 0 && !s.midLine && now.Sub(s.first) >= s.delay {
		jobs := make([]job, 0, len(s.jobs))
		for _, j := range s.jobs {
			jobs = append(jobs, j)
		}
		line = render(s.prog, jobs, s.cached, now, s.columns())
	}
	s.show(line)
}

// show puts line ("" to erase) on the terminal unless it is there already.
// s.mu must be held.
func (s *Status) show(line string) {
	if line == s.drawn {
		return
	}
	if line == "" {
		io.WriteString(s.w, erase)
	} else {
		// Overwrite, then clear what is left of a longer old line: no
		// flicker.
		io.WriteString(s.w, "\r"+line+"\033[K")
	}
	s.drawn = line
}

func (s *Status) columns() int {
	if s.width > 0 {
		return s.width
	}
	if s.tty != nil {
		if c := term.Width(s.tty); c > 0 {
			return c
		}
	}
	return DefaultWidth
}

// render returns the status line for jobs at now, at most width-1 columns
// wide so that it never wraps, or "" when nothing fits. It sorts jobs.
// cached, when not 0, is the number of jobs the cache has served so far.
func render(prog string, jobs []job, cached int, now time.Time, width int) string {
	limit := width - 1
	if len(jobs) == 0 || limit < 1 {
		return ""
	}
	slices.SortFunc(jobs, func(a, b job) int {
		return cmp.Or(a.start.Compare(b.start), cmp.Compare(a.seq, b.seq))
	})
	var b strings.Builder
	if prog != "" {
		b.WriteString(clean(prog))
		b.WriteString(": ")
	}
	b.WriteString(strconv.Itoa(len(jobs)))
	if len(jobs) == 1 {
		b.WriteString(" job running")
	} else {
		b.WriteString(" jobs running")
	}
	if cached > 0 {
		b.WriteString(" (" + strconv.Itoa(cached) + " cached)")
	}
	b.WriteString(": ")
	header := b.String()
	items := make([]string, len(jobs))
	for i, j := range jobs {
		items[i] = clean(j.label) + " " + seconds(now.Sub(j.start))
	}
	full := header + strings.Join(items, ", ")
	if utf8.RuneCountInString(full) <= limit {
		return full
	}
	// As many whole jobs as fit with a "+N more" for the rest.
	for i := len(items) - 1; i > 0; i-- {
		line := header + strings.Join(items[:i], ", ") + ", +" + strconv.Itoa(len(items)-i) + " more"
		if utf8.RuneCountInString(line) <= limit {
			return line
		}
	}
	// Not even one job fits whole: cut it.
	r := []rune(full)
	return string(r[:limit-1]) + "…"
}

// seconds formats d as seconds with one decimal, truncated: "4.1s".
func seconds(d time.Duration) string {
	d = max(d, 0).Truncate(100 * time.Millisecond)
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
}

// clean replaces control characters, which would break the line.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}
