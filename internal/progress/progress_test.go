package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a fake time source for Options.now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newManual returns a Status on a fake clock whose redraws are s.tick calls.
func newManual(w io.Writer, opt Options) (*Status, *clock) {
	c := newClock()
	opt.now = c.now
	opt.manual = true
	return New(w, opt), c
}

// screen models a terminal: it interprets text, "\r", "\n" and "\033[K",
// and returns the lines on the screen with the cursor's line last.
func screen(t *testing.T, out string) []string {
	t.Helper()
	lines := [][]rune{nil}
	col := 0
	for rs := []rune(out); len(rs) > 0; rs = rs[1:] {
		cur := &lines[len(lines)-1]
		switch r := rs[0]; r {
		case '\r':
			col = 0
		case '\n':
			lines = append(lines, nil)
			col = 0
		case '\033':
			if len(rs) < 3 || rs[1] != '[' || rs[2] != 'K' {
				t.Fatalf("unexpected escape in %q", out)
			}
			*cur = (*cur)[:min(col, len(*cur))]
			rs = rs[2:]
		default:
			for len(*cur) < col {
				*cur = append(*cur, ' ')
			}
			if col < len(*cur) {
				(*cur)[col] = r
			} else {
				*cur = append(*cur, r)
			}
			col++
		}
	}
	s := make([]string, len(lines))
	for i, l := range lines {
		s[i] = string(l)
	}
	return s
}

func TestRender(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(10 * time.Second)
	at := func(ago time.Duration, seq uint64, label string) job {
		return job{label: label, start: now.Add(-ago), seq: seq}
	}
	three := []job{
		at(2200*time.Millisecond, 1, "host"),
		at(4150*time.Millisecond, 2, "gfx90a"),
		at(3999*time.Millisecond, 3, "gfx1030"),
	}
	const full3 = "offcc: 3 jobs running: gfx90a 4.1s, gfx1030 3.9s, host 2.2s" // 59 columns
	tests := []struct {
		name  string
		prog  string
		jobs  []job
		width int
		want  string
	}{
		{"one", "offcc", []job{at(2*time.Second, 1, "sm_90")}, 80, "offcc: 1 job running: sm_90 2.0s"},
		{"longest first", "offcc", slices.Clone(three), 80, full3},
		{"exactly width-1", "offcc", slices.Clone(three), 60, full3},
		{"one more", "offcc", slices.Clone(three), 59, "offcc: 3 jobs running: gfx90a 4.1s, gfx1030 3.9s, +1 more"},
		{"two more", "offcc", slices.Clone(three), 49, "offcc: 3 jobs running: gfx90a 4.1s, +2 more"},
		{"no whole job fits", "offcc", slices.Clone(three), 40, "offcc: 3 jobs running: gfx90a 4.1s, gf…"},
		{"tiny", "offcc", slices.Clone(three), 3, "o…"},
		{"width 1", "offcc", slices.Clone(three), 1, ""},
		{"no jobs", "offcc", nil, 80, ""},
		{"no prog", "", []job{at(time.Second, 1, "link")}, 80, "1 job running: link 1.0s"},
		{"same start in Start order", "offcc", []job{at(time.Second, 2, "b"), at(time.Second, 1, "a"), at(time.Second, 3, "c")}, 80,
			"offcc: 3 jobs running: a 1.0s, b 1.0s, c 1.0s"},
		{"control characters", "offcc", []job{at(time.Second, 1, "a\nb\033")}, 80, "offcc: 1 job running: a?b? 1.0s"},
		{"long run", "offcc", []job{at(75*time.Second+360*time.Millisecond, 1, "host")}, 80, "offcc: 1 job running: host 75.3s"},
		{"non-ASCII counted as one column", "offcc", []job{at(time.Second, 1, "gfx90a:xnack+"), at(time.Second, 2, "ünï")}, 52,
			"offcc: 2 jobs running: gfx90a:xnack+ 1.0s, ünï 1.0s"},
		{"many", "offcc", func() []job {
			var js []job
			for i := range 40 {
				js = append(js, at(time.Duration(40-i)*time.Second, uint64(i), fmt.Sprintf("gfx%d", 900+i)))
			}
			return js
		}(), 80, "offcc: 40 jobs running: gfx900 40.0s, gfx901 39.0s, gfx902 38.0s, +37 more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(tt.prog, tt.jobs, 0, now, tt.width)
			if got != tt.want {
				t.Errorf("render(width %d) =\n%q, want\n%q", tt.width, got, tt.want)
			}
			if n := len([]rune(got)); n > tt.width-1 && got != "" {
				t.Errorf("%d columns, more than width-1 = %d", n, tt.width-1)
			}
		})
	}
}

func TestStartStopOrder(t *testing.T) {
	var out bytes.Buffer
	s, c := newManual(&out, Options{Prog: "offcc"})
	defer s.Close()
	s.Start(1, "host")
	c.advance(300 * time.Millisecond)
	s.Start(2, "gfx90a")
	s.Start(3, "gfx1030")
	c.advance(2 * time.Second)
	s.tick()
	if want := "\roffcc: 3 jobs running: host 2.3s, gfx90a 2.0s, gfx1030 2.0s\033[K"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	s.Stop(1)
	s.Stop(99) // unknown
	c.advance(100 * time.Millisecond)
	s.tick()
	if want := "\roffcc: 2 jobs running: gfx90a 2.1s, gfx1030 2.1s\033[K"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	s.tick() // unchanged: nothing written
	if out.Len() != 0 {
		t.Fatalf("unchanged line redrawn: %q", out.String())
	}
	s.Stop(2)
	s.Stop(3)
	s.tick()
	if out.String() != erase {
		t.Fatalf("no job left: got %q, want erase", out.String())
	}
	out.Reset()
	s.tick()
	if out.Len() != 0 {
		t.Fatalf("erased twice: %q", out.String())
	}
}

func TestDelay(t *testing.T) {
	tests := []struct {
		name       string
		delay      time.Duration
		beforeJobs time.Duration // from New to the first Start
		steps      []time.Duration
		wantFrom   int // first step that draws; len(steps) for none
	}{
		{"default 2s", 0, 0, []time.Duration{time.Second, 900 * time.Millisecond, 100 * time.Millisecond}, 2},
		{"counted from first Start, not New", 0, 10 * time.Second, []time.Duration{time.Second, 999 * time.Millisecond, time.Millisecond}, 2},
		{"custom", 500 * time.Millisecond, 0, []time.Duration{400 * time.Millisecond, 100 * time.Millisecond}, 1},
		{"negative: at once", -1, 0, []time.Duration{0}, 0},
		{"never long enough", 0, 0, []time.Duration{time.Second, 999 * time.Millisecond}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			s, c := newManual(&out, Options{Prog: "offcc", Delay: tt.delay})
			defer s.Close()
			c.advance(tt.beforeJobs)
			s.tick()
			s.Start("k", "host")
			for i, d := range tt.steps {
				c.advance(d)
				s.tick()
				if drawn := out.Len() > 0; drawn != (i >= tt.wantFrom) {
					t.Fatalf("step %d: drawn %v (%q), want %v", i, drawn, out.String(), i >= tt.wantFrom)
				}
			}
		})
	}
}

func TestDelayNotRestarted(t *testing.T) {
	// Once the first job has run Delay, later jobs show at once.
	var out bytes.Buffer
	s, c := newManual(&out, Options{Prog: "offcc"})
	defer s.Close()
	s.Start(1, "gfx90a")
	c.advance(2500 * time.Millisecond)
	s.Stop(1)
	s.tick()
	s.Start(2, "link")
	c.advance(100 * time.Millisecond)
	s.tick()
	if want := "\roffcc: 1 job running: link 0.1s\033[K"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

func TestClose(t *testing.T) {
	var out bytes.Buffer
	s, c := newManual(&out, Options{Prog: "offcc"})
	s.Start(1, "host")
	c.advance(3 * time.Second)
	s.tick()
	out.Reset()
	s.Close()
	if out.String() != erase {
		t.Fatalf("Close wrote %q, want erase", out.String())
	}
	out.Reset()
	s.Close()
	s.Start(2, "link")
	s.tick()
	s.Stop(1)
	if out.Len() != 0 {
		t.Fatalf("wrote %q after Close", out.String())
	}

	// Nothing drawn: Close writes nothing.
	out.Reset()
	s, _ = newManual(&out, Options{})
	s.Start(1, "host")
	s.tick()
	s.Close()
	if out.Len() != 0 {
		t.Fatalf("Close of an undrawn line wrote %q", out.String())
	}
}

func TestNil(t *testing.T) {
	var s *Status
	s.Start(1, "host")
	s.Stop(1)
	var out bytes.Buffer
	if w := s.Writer(&out); w != io.Writer(&out) {
		t.Errorf("nil Writer wrapped its writer")
	}
	s.Close()
}

func TestWriter(t *testing.T) {
	var term bytes.Buffer // stdout, stderr and the line share a terminal
	s, c := newManual(&term, Options{Prog: "offcc", Width: 40})
	defer s.Close()
	stdout, stderr := s.Writer(&term), s.Writer(&term)
	s.Start(1, "host")
	c.advance(2 * time.Second)
	s.tick()
	const line = "offcc: 1 job running: host 2.0s"

	steps := []struct {
		do     func()
		want   []string // the screen after it
		status bool     // whether the line must be drawn now
	}{
		{func() {}, []string{line}, true},
		{func() { io.WriteString(stderr, "a.c:1: warning: w\n") }, []string{"a.c:1: warning: w", ""}, false},
		{s.tick, []string{"a.c:1: warning: w", line}, true},
		{func() { io.WriteString(stdout, "partial") }, []string{"a.c:1: warning: w", "partial"}, false},
		{s.tick, []string{"a.c:1: warning: w", "partial"}, false}, // would overwrite "partial"
		{func() { io.WriteString(stderr, " line\nnext\n") }, []string{"a.c:1: warning: w", "partial line", "next", ""}, false},
		{func() { stdout.Write(nil) }, []string{"a.c:1: warning: w", "partial line", "next", ""}, false},
		{s.tick, []string{"a.c:1: warning: w", "partial line", "next", line}, true},
		{func() { stdout.Write(nil) }, []string{"a.c:1: warning: w", "partial line", "next", line}, true}, // empty write: no erase
		{func() { s.Stop(1); s.tick() }, []string{"a.c:1: warning: w", "partial line", "next", ""}, false},
		{func() { io.WriteString(stdout, "done\n") }, []string{"a.c:1: warning: w", "partial line", "next", "done", ""}, false},
	}
	for i, st := range steps {
		st.do()
		if got := screen(t, term.String()); !slices.Equal(got, st.want) {
			t.Fatalf("step %d: screen\n%q, want\n%q\nfrom %q", i, got, st.want, term.String())
		}
		if (s.drawn != "") != st.status {
			t.Fatalf("step %d: drawn = %q", i, s.drawn)
		}
	}
}

// TestWriterConcurrent writes lines through Writers while the ticker redraws
// as fast as it can: no line may come out mixed with the status line.
func TestWriterConcurrent(t *testing.T) {
	var term bytes.Buffer // written only under s.mu
	s := New(&term, Options{Prog: "offcc", Delay: -1, Interval: time.Microsecond, Width: 60})
	const writers, lines = 8, 200
	var wg sync.WaitGroup
	want := map[string]bool{}
	for i := range writers {
		w := s.Writer(&term)
		for j := range lines {
			want[fmt.Sprintf("job %d: line %d", i, j)] = true
		}
		wg.Go(func() {
			s.Start(i, fmt.Sprint("gfx", i))
			defer s.Stop(i)
			for j := range lines {
				fmt.Fprintf(w, "job %d: line %d\n", i, j)
				if j%50 == 0 {
					time.Sleep(time.Millisecond) // let the ticker draw
				}
			}
		})
	}
	wg.Wait()
	s.Close()
	out := term.String()
	if !strings.Contains(out, "\roffcc: ") {
		t.Fatalf("status line never drawn")
	}
	got := screen(t, out)
	if last := got[len(got)-1]; last != "" {
		t.Errorf("last line %q, want empty", last)
	}
	got = got[:len(got)-1]
	for _, l := range got {
		if !want[l] {
			t.Fatalf("mixed line on screen: %q", l)
		}
		delete(want, l)
	}
	if len(want) != 0 {
		t.Fatalf("%d lines missing", len(want))
	}
}

func TestNoGoroutineLeft(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 20 {
		s := New(io.Discard, Options{Delay: -1, Interval: time.Microsecond})
		s.Start(1, "host")
		time.Sleep(50 * time.Microsecond)
		s.Close()
		// Close has waited for the ticker goroutine to return.
		select {
		case <-s.done:
		default:
			t.Fatal("ticker goroutine still running after Close")
		}
		s.Close()
	}
	// Goroutines of earlier tests may still be on their way out.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); after > before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		after = runtime.NumGoroutine()
	}
	if after > before {
		t.Fatalf("%d goroutines before, %d after Close", before, after)
	}
}

func TestOutputSync(t *testing.T) {
	tests := []struct {
		makeflags string
		want      bool
	}{
		// What GNU make 4.3 puts into MAKEFLAGS ("make ARGS" in comments).
		{"", false},                       // make
		{"s --no-print-directory", false}, // make -s --no-print-directory
		{" -Otarget", true},               // make -O, make --output-sync
		{" -Oline", true},                 // make -Oline, make --output-sync=line
		{" -Otarget --no-print-directory", true},
		{"s -Otarget --no-print-directory", true},     // make -sO
		{" -j2 -Orecurse --jobserver-auth=3,4", true}, // make --output-sync=recurse -j2
		{" -j2 -Otarget --jobserver-auth=3,4", true},  // make -j2 -O
		{"ks -j4 -Oline --jobserver-auth=3,4 --no-print-directory", true},
		{" -j -l2 -Orecurse", true},                        // make -j -Orecurse -l2
		{"e -Otarget", true},                               // make -e -O
		{" -Onone", false},                                 // make -Onone, make --output-sync=none
		{" -Otarget -- V=-Oline", true},                    // make -O V=-Oline
		{" -- V=-Oline", false},                            // make V=-Oline
		{"iks -j --no-print-directory", false},             // make -j -k -s -i
		{" -j2 --jobserver-auth=3,4", false},               // make -j2
		{" -j2 --jobserver-auth=fifo:/tmp/GMfifo1", false}, // make 4.4 -j2
		// Set by hand.
		{"-O", true},
		{"-sO", true},
		{"-jO", true},
		{"-j4O", true},
		{"-ksOline", true},
		{"-Onone", false},
		{"-Oline -Onone", false},
		{"-Onone -Oline", true},
		{"--output-sync", true},
		{"--output-sync=line", true},
		{"--output-sync=none", false},
		{"--output-sync=target --output-sync=none", false},
		{"--output", true},
		{"--ou=line", true},
		{"--o", false}, // ambiguous
		{"--old-file=x", false},
		{"-C dir", false},
		{"-CO", false}, // -C O: directory "O"
		{"-fOmakefile", false},
		{"ks", false},
		{"O", true},
		{"V=O", false},
		{"--no-print-directory", false},
	}
	for _, tt := range tests {
		if got := outputSync(tt.makeflags); got != tt.want {
			t.Errorf("outputSync(%q) = %v, want %v", tt.makeflags, got, tt.want)
		}
	}
}

func TestEnabledEnv(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name string
		f    *os.File
		env  map[string]string
		want bool
	}{
		{"pipe", w, map[string]string{"TERM": "xterm"}, false},
		{"nil file", nil, map[string]string{"TERM": "xterm"}, false},
		{"forced on", w, map[string]string{"OFFCC_PROGRESS": "1", "TERM": "dumb", "MAKEFLAGS": " -Otarget"}, true},
		{"forced on without file", nil, map[string]string{"OFFCC_PROGRESS": "1"}, true},
		{"off", w, map[string]string{"OFFCC_PROGRESS": "0"}, false},
		{"other value", w, map[string]string{"OFFCC_PROGRESS": "yes"}, false},
	}
	for _, tt := range tests {
		if got := Enabled(tt.f, env(tt.env)); got != tt.want {
			t.Errorf("%s: Enabled = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// helperEnv names the variable that makes the test binary run helper
// instead of the tests (see TestMain).
const helperEnv = "PROGRESS_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		helper(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helper runs in a child process, usually on a pseudo-terminal.
func helper(mode string) {
	switch mode {
	case "enabled":
		fmt.Println(Enabled(os.Stderr, os.Getenv))
	case "draw":
		s := New(os.Stderr, Options{Prog: "offcc", Delay: 20 * time.Millisecond, Interval: 5 * time.Millisecond})
		s.Start(1, "gfx90a")
		s.Start(2, "host")
		time.Sleep(100 * time.Millisecond)
		fmt.Fprintln(s.Writer(os.Stdout), "output")
		time.Sleep(50 * time.Millisecond)
		s.Close()
	}
}

// runHelper runs the test binary in helper mode, under script(1) with a
// pseudo-terminal of cols columns when cols > 0, and returns its output.
func runHelper(t *testing.T, mode string, cols int, env ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if cols > 0 {
		if runtime.GOOS != "linux" {
			t.Skip("needs util-linux script")
		}
		script, err := exec.LookPath("script")
		if err != nil {
			t.Skip("script not found")
		}
		sh := fmt.Sprintf("stty cols %d && exec '%s'", cols, strings.ReplaceAll(exe, "'", `'\''`))
		cmd = exec.Command(script, "-qec", sh, "/dev/null")
	} else {
		cmd = exec.Command(exe)
	}
	cmd.Env = []string{
		helperEnv + "=" + mode, "SHELL=/bin/sh", "PATH=" + os.Getenv("PATH"), "TERM=xterm",
		"GORACE=atexit_sleep_ms=0", // a -race binary sleeps 1s at exit by default
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = nil
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, out)
	}
	return string(out)
}

func TestEnabledTerminal(t *testing.T) {
	tests := []struct {
		name string
		pty  bool
		env  []string
		want string
	}{
		{"terminal", true, nil, "true"},
		{"pipe", false, nil, "false"},
		{"dumb terminal", true, []string{"TERM=dumb"}, "false"},
		{"make -O", true, []string{"MAKEFLAGS= -j2 -Otarget --jobserver-auth=3,4"}, "false"},
		{"make -Onone", true, []string{"MAKEFLAGS= -Onone"}, "true"},
		{"forced off", true, []string{"OFFCC_PROGRESS=0"}, "false"},
		{"forced on", false, []string{"OFFCC_PROGRESS=1"}, "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols := 0
			if tt.pty {
				cols = 80
			}
			if got := strings.TrimSpace(runHelper(t, "enabled", cols, tt.env...)); got != tt.want {
				t.Errorf("Enabled(os.Stderr) = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDrawTerminal(t *testing.T) {
	// 45 columns: the full line (45) does not fit, so the terminal's width
	// must have been read.
	out := runHelper(t, "draw", 45)
	lineRE := `\roffcc: 2 jobs running: gfx90a 0\.\ds, \+1 more\x1b\[K`
	re := regexp.MustCompile(`^(` + lineRE + `)+\r\x1b\[Koutput\r\n(` + lineRE + `)+\r\x1b\[K$`)
	if !re.MatchString(out) {
		t.Fatalf("terminal output %q does not match %s", out, re)
	}
}

// TestRenderCached: the line counts the jobs the build cache served.
func TestRenderCached(t *testing.T) {
	now := time.Unix(1000, 0)
	jobs := []job{{label: "gfx942", start: now.Add(-time.Second), seq: 1}}
	got := render("offcc", jobs, 4, now, 80)
	if want := "offcc: 1 job running (4 cached): gfx942 1.0s"; got != want {
		t.Errorf("render = %q, want %q", got, want)
	}
}
