// Package redistest starts a throw-away redis-server for tests. Without
// redis-server a test is skipped, except where OFFCC_REQUIRE_REDIS=1 (set
// by CI): there it fails, so that a machine without Redis cannot pass by
// skipping (as internal/llvmtest does for OFFCC_REQUIRE_LLVM).
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvRequire names the variable that turns skips into failures.
const EnvRequire = "OFFCC_REQUIRE_REDIS"

// Required reports whether tests must fail rather than skip when
// redis-server is missing.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// Server is a running redis-server on a loopback port, without
// persistence, in a temporary directory.
type Server struct {
	// URL is redis://127.0.0.1:<port>.
	URL string
	// Addr is 127.0.0.1:<port>.
	Addr string

	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
}

// Start starts a redis-server and waits until it answers PING. It is
// stopped when the test ends. Without redis-server on PATH the test is
// skipped (failed under OFFCC_REQUIRE_REDIS=1); like t.Skip, Start must be
// called from the test's goroutine.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if Required() {
			t.Fatalf("redis-server is not installed: %v (and %s=1)", err, EnvRequire)
		}
		t.Skipf("redis-server is not installed: %v", err)
	}
	var last error
	for attempt := 0; attempt < 3; attempt++ { // the free port may be taken meanwhile
		s, err := start(t, bin)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		last = err
	}
	t.Fatalf("starting redis-server: %v", last)
	return nil
}

func start(t testing.TB, bin string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	logName := filepath.Join(dir, "redis.log")
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", logName)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{
		URL:  fmt.Sprintf("redis://127.0.0.1:%d", port),
		Addr: fmt.Sprintf("127.0.0.1:%d", port),
		cmd:  cmd,
		done: make(chan struct{}),
	}
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ping(s.Addr) == nil {
			return s, nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(logName)
			return nil, fmt.Errorf("redis-server exited: %s; log:\n%s", cmd.ProcessState, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Kill()
			log, _ := os.ReadFile(logName)
			return nil, fmt.Errorf("redis-server on port %d does not answer PING; log:\n%s", port, log)
		}
	}
}

// ping sends PING in the inline protocol and expects +PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Stop stops the server (SIGTERM) and waits for it to exit. Later calls
// do nothing.
func (s *Server) Stop() { s.end(syscall.SIGTERM) }

// Kill kills the server (SIGKILL) and waits for it to exit. Later calls
// do nothing.
func (s *Server) Kill() { s.end(syscall.SIGKILL) }

// Pause stops the server's process (SIGSTOP): connections are accepted by
// the kernel but nothing answers, as with a hung server. Stop, Kill and
// the test's end resume it first.
func (s *Server) Pause() { s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.cmd.Process.Signal(syscall.SIGCONT) }

func (s *Server) end(sig syscall.Signal) {
	s.once.Do(func() {
		s.cmd.Process.Signal(sig)
		s.cmd.Process.Signal(syscall.SIGCONT)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	})
}
