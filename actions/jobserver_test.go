package actions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fdOf returns f's descriptor without switching it to blocking mode.
func fdOf(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	rc.Control(func(u uintptr) { fd = int(u) })
	return fd
}

// drain reads every byte currently in r (a pollable file).
func drain(t *testing.T, r *os.File) string {
	t.Helper()
	var got []byte
	buf := make([]byte, 64)
	for {
		r.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal(err)
			}
			return string(got)
		}
	}
}

// server simulates make -jN: a pipe or fifo holding N-1 distinct tokens.
type server struct {
	r, w      *os.File
	makeflags string
	tokens    string
}

func newPipeServer(t *testing.T, n int) *server {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	s := &server{r: r, w: w, tokens: "+abcdefghij"[:n-1]}
	s.makeflags = fmt.Sprintf(" -j%d --jobserver-auth=%d,%d", n, fdOf(t, r), fdOf(t, w))
	w.WriteString(s.tokens)
	return s
}

func newFifoServer(t *testing.T, n int) *server {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	s := &server{r: f, w: f, tokens: "+abcdefghij"[:n-1]}
	s.makeflags = fmt.Sprintf("-j%d --jobserver-auth=fifo:%s", n, path)
	f.WriteString(s.tokens)
	return s
}

func (s *server) check(t *testing.T) {
	t.Helper()
	got := []byte(drain(t, s.r))
	slices.Sort(got)
	if string(got) != s.tokens {
		t.Errorf("tokens back %q, want %q", got, s.tokens)
	}
}

func TestJobserverConcurrency(t *testing.T) {
	for _, style := range []string{"pipe", "fifo"} {
		for _, n := range []int{1, 3} {
			t.Run(fmt.Sprint(style, n), func(t *testing.T) {
				var s *server
				if style == "pipe" {
					s = newPipeServer(t, n)
				} else {
					s = newFifoServer(t, n)
				}
				js, err := JobserverFromEnv(s.makeflags)
				if err != nil || js == nil {
					t.Fatalf("JobserverFromEnv(%q) = %v, %v", s.makeflags, js, err)
				}
				var g Graph
				var r recorder
				for i := range 20 {
					r.job(&g, fmt.Sprint("j", i), 0, 20*time.Millisecond)
				}
				if err := Execute(context.Background(), &g, quietShell(), Options{Jobs: 8, Jobserver: js}); err != nil {
					t.Fatal(err)
				}
				if r.max != n {
					t.Errorf("max concurrency %d, want %d", r.max, n)
				}
				if err := js.Close(); err != nil {
					t.Error(err)
				}
				s.check(t)
			})
		}
	}
}

func TestJobserverTokensBackAfterFailureAndCancel(t *testing.T) {
	for _, mode := range []string{"failure", "cancel"} {
		t.Run(mode, func(t *testing.T) {
			s := newPipeServer(t, 4)
			js, err := JobserverFromEnv(s.makeflags)
			if err != nil || js == nil {
				t.Fatal(js, err)
			}
			defer js.Close()
			var g Graph
			var r recorder
			d := time.Minute
			if mode == "failure" {
				// A failure lets independent actions finish.
				d = 60 * time.Millisecond
				g.MustAdd(&Action{Tool: "fail", Cost: 100, Command: []string{"sh", "-c", "sleep 0.1; exit 2"}})
			}
			for i := range 10 {
				r.job(&g, fmt.Sprint("j", i), 0, d)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if mode == "cancel" {
				time.AfterFunc(100*time.Millisecond, cancel)
			}
			defer cancel()
			err = Execute(ctx, &g, quietShell(), Options{Jobs: 8, Jobserver: js})
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("err = %v", err)
			}
			if mode == "failure" && ee.Code != 2 || mode == "cancel" && !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v (code %d)", err, ee.Code)
			}
			if mode == "failure" && (r.max > 4 || len(r.order) != 10) || mode == "cancel" && r.max != 4 {
				t.Errorf("max in-process concurrency %d, %d ran", r.max, len(r.order))
			}
			s.check(t)
		})
	}
}

func TestJobserverAcquireCancel(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprint("fallback=", fallback), func(t *testing.T) {
			var fds [2]int
			if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil { // blocking fds, like make's
				t.Fatal(err)
			}
			r := os.NewFile(uintptr(fds[0]), "r")
			w := os.NewFile(uintptr(fds[1]), "w")
			defer r.Close()
			defer w.Close()
			reopenViaProc = !fallback
			defer func() { reopenViaProc = true }()
			js, err := JobserverFromEnv(fmt.Sprintf("-j2 --jobserver-auth=%d,%d", fds[0], fds[1]))
			if err != nil || js == nil {
				t.Fatal(js, err)
			}
			if js.pollable == fallback {
				t.Fatalf("pollable = %v", js.pollable)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if err := js.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Acquire on empty jobserver: %v", err)
			}
			w.Write([]byte{'x'})
			if err := js.Acquire(context.Background()); err != nil {
				t.Fatal(err)
			}
			js.Release()
			js.Release() // no token held: no-op
			// Cancelled again with a pending read, then closed: the token
			// that arrives later still goes back.
			ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel2()
			var one [1]byte
			r.Read(one[:]) // take the token ourselves
			if err := js.Acquire(ctx2); err == nil {
				t.Fatal("Acquire succeeded on an empty jobserver")
			}
			if err := js.Close(); err != nil {
				t.Error(err)
			}
			w.Write(one[:])
			time.Sleep(50 * time.Millisecond)
			syscall.SetNonblock(fds[0], true)
			n, _ := syscall.Read(fds[0], make([]byte, 8))
			if n != 1 {
				t.Errorf("%d tokens in the pipe, want 1", n)
			}
			if err := js.Acquire(context.Background()); !errors.Is(err, ErrJobserverClosed) {
				t.Errorf("Acquire after Close: %v", err)
			}
		})
	}
}

func TestJobserverUnavailable(t *testing.T) {
	s := newPipeServer(t, 2)
	for mf, want := range map[string]bool{
		"":                                true,
		"-j4":                             true,
		"--jobserver-auth=-2,-2":          true,
		"--jobserver-auth=fifo:/tmp/x":    true,
		s.makeflags:                       true,
		"--jobserver-auth=987,988":        false,
		"-j2 --jobserver-fds=987,988":     false,
		"--jobserver-auth=987,988 -- X=1": false,
	} {
		why := JobserverUnavailable(mf)
		if (why == "") != want {
			t.Errorf("JobserverUnavailable(%q) = %q", mf, why)
		}
		if why != "" && !strings.Contains(why, "'+'") {
			t.Errorf("JobserverUnavailable(%q) = %q, does not name the '+' fix", mf, why)
		}
	}
}

func TestJobserverFromEnv(t *testing.T) {
	for _, mf := range []string{"", "-j4", " -- X=--jobserver-auth=3,4", "--jobserver-auth=-2,-2", "--jobserver-auth=987,988"} {
		if js, err := JobserverFromEnv(mf); js != nil || err != nil {
			t.Errorf("JobserverFromEnv(%q) = %v, %v; want nil, nil", mf, js, err)
		}
	}
	for _, mf := range []string{"--jobserver-auth=3", "--jobserver-auth=a,b", "--jobserver-auth=fifo:/nonexistent/f", "--jobserver-auth=gmake_semaphore_1"} {
		if js, err := JobserverFromEnv(mf); js != nil || err == nil {
			t.Errorf("JobserverFromEnv(%q) = %v, %v; want an error", mf, js, err)
		}
	}
	// The last option wins; a regular file's fds are not a jobserver.
	s := newPipeServer(t, 2)
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ffd := fdOf(t, f)
	if js, err := JobserverFromEnv(fmt.Sprintf("--jobserver-auth=%d,%d", ffd, ffd)); js != nil || err != nil {
		t.Errorf("regular file accepted: %v %v", js, err)
	}
	js, err := JobserverFromEnv(fmt.Sprintf("--jobserver-fds=%d,%d --jobserver-auth=987,988 %s", ffd, ffd, s.makeflags))
	if err != nil || js == nil {
		t.Fatalf("last option: %v %v", js, err)
	}
	js.Close()
}

// TestMakeHelper runs inside GNU make in TestGNUMake.
func TestMakeHelper(t *testing.T) {
	if os.Getenv("OFFCC_MAKE_HELPER") == "" {
		t.Skip("helper for TestGNUMake")
	}
	js, err := JobserverFromEnv(os.Getenv("MAKEFLAGS"))
	if err != nil || js == nil {
		t.Fatalf("MAKEFLAGS=%q: %v %v", os.Getenv("MAKEFLAGS"), js, err)
	}
	defer js.Close()
	var g Graph
	var r recorder
	for i := range 12 {
		r.job(&g, fmt.Sprint("j", i), 0, 30*time.Millisecond)
	}
	if err := Execute(context.Background(), &g, quietShell(), Options{Jobs: 8, Jobserver: js}); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("maxconc=%d\n", r.max)
}

func TestGNUMake(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	dir := t.TempDir()
	mk := "all:\n\t+@$(TEST_BINARY) -test.run='^TestMakeHelper$$' -test.v\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o666); err != nil {
		t.Fatal(err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(makePath, "-s", "-j3", "-C", dir, "TEST_BINARY="+bin)
	cmd.Env = append(os.Environ(), "OFFCC_MAKE_HELPER=1", "MAKEFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "maxconc=3\n") {
		t.Errorf("make -j3 output:\n%s", out)
	}
}
