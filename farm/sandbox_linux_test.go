package farm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/llvmtest"
)

// sandboxEnv is what the sandbox tests share: Self (testdata/sandbox-self,
// offcc's "__farm-sandbox" step alone), the attacker tool
// (testdata/sandbox-attacker, static), LLVM 22's clang and lld where
// installed, and the limits of their jobs.
type sandboxEnv struct {
	dir      string // holds attacker; searchable by everyone
	self     string // in a directory of mode 0700
	attacker string
	clang    string // "" without LLVM 22
	lld      string
	roots    []string
	limits   Limits
}

// sandboxTestLimits are the tests' job limits: small enough to hit quickly.
var sandboxTestLimits = Limits{CPU: time.Second, Memory: 2 << 30, FileSize: 16 << 20, Procs: 32}

// newSandboxEnv builds Self and the attacker into a temporary directory,
// skipping the test where bwrap is missing.
func newSandboxEnv(tb testing.TB) *sandboxEnv {
	tb.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		tb.Skip("bubblewrap (bwrap) is not installed")
	}
	e := &sandboxEnv{dir: sandboxTempDir(tb), limits: sandboxTestLimits}
	// offcc where only root may reach it (as in /root/go/bin): jobs run it
	// through a descriptor, as other uids when the worker is root.
	e.self = filepath.Join(sandboxPrivateDir(tb), "offcc-self")
	e.attacker = filepath.Join(e.dir, "attacker")
	goTool := "go"
	if p, err := exec.LookPath("go"); err == nil {
		goTool = p
	}
	for _, b := range []struct {
		out, pkg string
		env      []string
	}{
		{e.self, "./testdata/sandbox-self", nil},
		{e.attacker, "./testdata/sandbox-attacker", []string{"CGO_ENABLED=0"}},
	} {
		cmd := exec.Command(goTool, "build", "-o", b.out, b.pkg)
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	if llvmtest.Installed() {
		e.clang = llvmtest.Tool(tb, "clang")
		e.lld = llvmtest.Tool(tb, "lld")
		e.roots = []string{filepath.Dir(llvmtest.Bin)}
	}
	return e
}

// sandboxTempDir returns a new temporary directory that every user may
// search (a root worker's jobs run as other uids), as is the one above it.
func sandboxTempDir(tb testing.TB) string {
	tb.Helper()
	d := tb.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return d
}

// sandboxPrivateDir returns a new temporary directory of mode 0700.
func sandboxPrivateDir(tb testing.TB) string {
	tb.Helper()
	d, err := os.MkdirTemp(tb.TempDir(), "private-")
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// testUIDBase is the jobs' uids of this test process (as root): not the
// default, which workers the e2e tests start use at the same time. Their
// jobs' processes would count against this process's jobs' RLIMIT_NPROC,
// which is per uid.
var testUIDBase = sandboxDefaultUIDBase + 1000 + os.Getpid()%100000*16

func (e *sandboxEnv) options() SandboxOptions {
	opt := SandboxOptions{Self: e.self, Tools: []string{e.attacker}, Roots: e.roots, Limits: e.limits, UIDBase: testUIDBase}
	if e.clang != "" {
		opt.Tools = append(opt.Tools, e.clang, e.lld)
	}
	return opt
}

// sandboxMode is a set of layers the tests run jobs under.
type sandboxMode struct {
	name    string
	disable string // OFFCC_SANDBOX_DISABLE
	bwrap   bool
	ll      bool
}

var sandboxModes = []sandboxMode{
	{"bwrap+landlock", "", true, true},
	{"bwrap", "landlock", true, false},
	{"landlock", "bwrap", false, true},
}

// sandbox returns a Sandbox with mode's layers, skipping the test where
// this machine lacks one of them.
func (e *sandboxEnv) sandbox(t *testing.T, m sandboxMode) *Sandbox {
	t.Helper()
	if m.ll && SandboxABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	opt := e.options()
	opt.Disable = m.disable
	sb, err := NewSandbox(opt)
	if err != nil {
		if m.bwrap {
			t.Skipf("no sandbox here (user namespaces refused?): %v", err)
		}
		t.Fatal(err)
	}
	want := []string{}
	if m.bwrap {
		want = append(want, "bubblewrap")
	}
	if m.ll {
		want = append(want, fmt.Sprintf("landlock-abi-%d", SandboxABI()))
	}
	if got := sb.Layers(); !slices.Equal(got, want) {
		if m.bwrap && !slices.Contains(got, "bubblewrap") {
			t.Skipf("bubblewrap cannot run here (user namespaces refused?): layers %v", got)
		}
		t.Fatalf("layers %v, want %v", got, want)
	}
	return sb
}

// sandboxJob is one job's directory: dir (the job's, mode 0700 as the
// worker's os.MkdirTemp makes it) and in (its read-only inputs, holding
// input.txt), in a searchable temporary directory.
type sandboxJob struct {
	dir, in, input string
}

// newSandboxJob makes a job directory as the worker would.
func newSandboxJob(t testing.TB) sandboxJob {
	t.Helper()
	j := sandboxJob{dir: filepath.Join(sandboxTempDir(t), "job")}
	j.in = filepath.Join(j.dir, "in")
	j.input = filepath.Join(j.in, "input.txt")
	if err := os.Mkdir(j.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(j.in, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(j.input, []byte("input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return j
}

// sandboxJobEnv is the environment the tests give jobs.
var sandboxJobEnv = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}

// sandboxResult is what a job did.
type sandboxResult struct {
	code           int // exit status, 128+N for signal N, -1 if it could not run
	stdout, stderr string
	err            error
}

func (r sandboxResult) String() string {
	return fmt.Sprintf("status %d (%v)\nstdout:\n%s\nstderr:\n%s", r.code, r.err, r.stdout, r.stderr)
}

// sandboxRun runs tool with args as a job of slot in j under sb.
func sandboxRun(t testing.TB, sb *Sandbox, slot int, j sandboxJob, tool string, args ...string) sandboxResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, err := sb.Command(ctx, slot, j.dir, []string{j.in}, tool, args, sandboxJobEnv)
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	r := sandboxResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.code = 128 + int(ws.Signal())
		}
	default:
		r.code = -1
	}
	return r
}

// TestSandbox runs the attacker tool's attacks as jobs under each set of
// layers (both, bubblewrap alone, Landlock alone): each must fail, and
// leave no trace; legitimate work (reading inputs, writing outputs, clang
// compiling, lld linking) must succeed under the same confinement.
func TestSandbox(t *testing.T) {
	e := newSandboxEnv(t)
	for _, m := range sandboxModes {
		t.Run(m.name, func(t *testing.T) {
			sb := e.sandbox(t, m)
			t.Run("Attacks", func(t *testing.T) { testSandboxAttacks(t, e, sb, m) })
			t.Run("Limits", func(t *testing.T) { testSandboxLimits(t, e, sb) })
			t.Run("Daemon", func(t *testing.T) { testSandboxDaemon(t, e, sb) })
			t.Run("Cancel", func(t *testing.T) { testSandboxCancel(t, e, sb) })
			t.Run("Clang", func(t *testing.T) { testSandboxClang(t, e, sb) })
			t.Run("UID", func(t *testing.T) { testSandboxUID(t, e, sb) })
		})
	}
	t.Run("Layers", func(t *testing.T) { testSandboxLayers(t, e) })
	t.Run("BwrapCommandLine", func(t *testing.T) { testSandboxCommandLine(t, e) })
}

// sandboxAttack is one attack: the attacker's arguments, where it applies,
// and a check of its effects beyond the attacker's exit status.
type sandboxAttack struct {
	name    string
	args    []string
	applies func(m sandboxMode) bool // nil: always
	check   func(t *testing.T)       // nil: none
}

// testSandboxAttacks runs each attack that applies to m as a job of sb:
// it must fail, and its check must find no effect.
func testSandboxAttacks(t *testing.T, e *sandboxEnv, sb *Sandbox, m sandboxMode) {
	root := os.Geteuid() == 0
	j := newSandboxJob(t)

	// Legitimate work first, so that refusals below are the sandbox's and
	// not a job that cannot run at all.
	out := filepath.Join(j.dir, "out.txt")
	if r := sandboxRun(t, sb, 0, j, e.attacker, "noop", j.input, out); r.code != 0 {
		t.Fatalf("a job could not read its input and write its output:\n%s", r)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "out\n" {
		t.Fatalf("the job's output: %q, %v", b, err)
	}
	if r := sandboxRun(t, sb, 0, j, e.attacker, "env", "LC_ALL"); r.code != 0 {
		t.Errorf("the job's environment lacks LC_ALL:\n%s", r)
	}

	// Secrets and files outside the job, readable by anyone.
	outside := sandboxTempDir(t)
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(outside, "victim.txt")
	if err := os.WriteFile(victim, []byte("victim\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(victim, 0o666)
	t.Setenv("OFFCC_SANDBOX_TEST_SECRET", "s3cret")
	hostTmp, err := os.CreateTemp("", "offcc-sandbox-host-")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp.Close()
	defer os.Remove(hostTmp.Name())

	// A TCP and a UDP listener on the host's loopback.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("token\n"))
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	udpGot := make(chan string, 10)
	go func() {
		buf := make([]byte, 100)
		for {
			n, addr, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			udpGot <- string(buf[:n])
			udp.WriteTo([]byte("token\n"), addr)
		}
	}()

	inputUnchanged := func(t *testing.T) {
		fi, err := os.Stat(j.input)
		if err != nil {
			t.Errorf("the read-only input is gone: %v", err)
			return
		}
		if b, _ := os.ReadFile(j.input); string(b) != "input\n" || fi.Mode().Perm() != 0o644 {
			t.Errorf("the read-only input changed: %q, mode %v", b, fi.Mode())
		}
	}
	absent := func(p string) func(t *testing.T) {
		return func(t *testing.T) {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%s was written", p)
				os.Remove(p)
			}
		}
	}
	withLandlock := func(m sandboxMode) bool { return m.ll }
	withoutBwrap := func(m sandboxMode) bool { return !m.bwrap } // with it, a port of its own network
	// Landlock cannot keep a job from a subdirectory of its own: there
	// the inputs are read-only by their owner (root) or bwrap's mount.
	readOnlyHolds := func(m sandboxMode) bool { return m.bwrap || root }
	testPID := strconv.Itoa(os.Getpid())
	token := fmt.Sprintf("offcc-pwned-%d", time.Now().UnixNano())
	tmpFile := filepath.Join(os.TempDir(), token)

	attacks := []sandboxAttack{
		{name: "read /etc/passwd", args: []string{"read", "/etc/passwd"}},
		{name: "read /etc/hostname", args: []string{"read", "/etc/hostname"}},
		{name: "list /root", args: []string{"readdir", "/root"}},
		{name: "list /home", args: []string{"readdir", "/home"}},
		{name: "list /etc", args: []string{"readdir", "/etc", "passwd"}},
		{name: "list /tmp", args: []string{"readdir", os.TempDir(), filepath.Base(hostTmp.Name())}},
		{name: "read a secret outside", args: []string{"read", secret}},
		{name: "list a directory outside", args: []string{"readdir", outside}},
		{name: "read the worker's environment", args: []string{"read", "/proc/" + testPID + "/environ"}},
		{name: "read the worker's command line", args: []string{"read", "/proc/" + testPID + "/cmdline"}},
		{name: "read offcc", args: []string{"read", e.self}},
		{name: "inherit the worker's environment", args: []string{"env", "OFFCC_SANDBOX_TEST_SECRET"}},

		{name: "write outside", args: []string{"write", filepath.Join(outside, "new.txt")}, check: absent(filepath.Join(outside, "new.txt"))},
		{name: "overwrite outside", args: []string{"write", victim}, check: func(t *testing.T) {
			if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
				t.Errorf("victim overwritten: %q", b)
			}
		}},
		{name: "write in /tmp", args: []string{"write", tmpFile}, check: absent(tmpFile)},
		{name: "write beside the job", args: []string{"write", filepath.Join(filepath.Dir(j.dir), "x")}, check: absent(filepath.Join(filepath.Dir(j.dir), "x"))},
		{name: "write in /", args: []string{"write", "/" + token}, check: absent("/" + token)},
		{name: "write in /dev", args: []string{"write", "/dev/" + token}, check: absent("/dev/" + token)},
		{name: "write in /dev/shm", args: []string{"write", "/dev/shm/" + token}, check: absent("/dev/shm/" + token)},
		{name: "overwrite the tool", args: []string{"append", e.attacker}},
		{name: "overwrite offcc", args: []string{"append", e.self}},

		{name: "write an input", args: []string{"append", j.input}, applies: readOnlyHolds, check: inputUnchanged},
		{name: "truncate an input", args: []string{"write", j.input}, applies: readOnlyHolds, check: inputUnchanged},
		{name: "chmod an input", args: []string{"chmod", j.input}, applies: readOnlyHolds, check: inputUnchanged},
		{name: "remove an input", args: []string{"remove", j.input}, applies: readOnlyHolds, check: inputUnchanged},
		{name: "rename an input", args: []string{"rename", j.input, filepath.Join(j.dir, "moved")}, applies: readOnlyHolds, check: inputUnchanged},
		{name: "add an input", args: []string{"write", filepath.Join(j.in, "new.txt")}, applies: readOnlyHolds, check: absent(filepath.Join(j.in, "new.txt"))},
		{name: "write an input through a hard link", args: []string{"link-write", j.input, filepath.Join(j.dir, "link")}, applies: readOnlyHolds, check: inputUnchanged},

		{name: "connect to the host", args: []string{"connect", ln.Addr().String()}},
		{name: "connect to the host over MPTCP", args: []string{"connect-mptcp", ln.Addr().String()}},
		{name: "talk to the host over UDP", args: []string{"udp", udp.LocalAddr().String(), token}, check: func(t *testing.T) {
			select {
			case got := <-udpGot:
				t.Errorf("the host received %q over UDP", got)
			default:
			}
		}},
		{name: "listen on TCP", args: []string{"listen", "127.0.0.1:0"}, applies: withoutBwrap},
		{name: "open a Unix socket", args: []string{"socket", "1"}},
		{name: "open a vsock socket", args: []string{"socket", "40"}},

		{name: "exec /bin/sh", args: []string{"exec", "/bin/sh", "sh", "-c", "exit 0"}},
		{name: "exec /usr/bin/env", args: []string{"exec", "/usr/bin/env", "env"}},
		{name: "exec offcc", args: []string{"exec", e.self, "offcc", "__farm-sandbox", "-probe"}},
		{name: "exec offcc's descriptor", args: []string{"exec", "/proc/self/fd/3", "offcc", "__farm-sandbox", "-probe"}},
		{name: "read offcc's descriptor", args: []string{"read", "/proc/self/fd/3"}},
		{name: "exec a file the job wrote", args: []string{"exec-copy", j.dir}, applies: withLandlock},

		{name: "see the host's processes", args: []string{"proc", filepath.Base(os.Args[0])}},
		{name: "signal the worker", args: []string{"kill", testPID}},
	}
	if e.clang != "" {
		attacks = append(attacks, sandboxAttack{name: "exec another tool", args: []string{"exec", e.clang, "clang", "--version"}, applies: withLandlock})
	}
	for _, a := range attacks {
		if a.applies != nil && !a.applies(m) {
			continue
		}
		t.Run(a.name, func(t *testing.T) {
			r := sandboxRun(t, sb, 0, j, e.attacker, a.args...)
			if r.code == 0 || strings.Contains(r.stdout, "ATTACK SUCCEEDED") {
				t.Errorf("the attack succeeded:\n%s", r)
			} else {
				t.Logf("refused: %s", strings.TrimSpace(r.stdout+r.stderr))
			}
			if a.check != nil {
				a.check(t)
			}
		})
	}
}

// testSandboxLimits: a job cannot pass its limits, and works within them.
func testSandboxLimits(t *testing.T, e *sandboxEnv, sb *Sandbox) {
	j := newSandboxJob(t)
	big := filepath.Join(j.dir, "big")
	for _, c := range []struct {
		name     string
		ok, over []string
	}{
		{"Procs", []string{"fork", "2"}, []string{"fork", "100"}},
		{"Memory", []string{"alloc", strconv.Itoa(100 << 20)}, []string{"alloc", strconv.FormatInt(e.limits.Memory+(1<<30), 10)}},
		{"FileSize", []string{"bigfile", big, strconv.Itoa(1 << 20)}, []string{"bigfile", big, strconv.FormatInt(e.limits.FileSize*4, 10)}},
		{"CPU", nil, []string{"cpu", "10"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.ok != nil {
				if r := sandboxRun(t, sb, 0, j, e.attacker, c.ok...); r.code != 0 {
					t.Errorf("within the limit, %v failed:\n%s", c.ok, r)
				}
			}
			start := time.Now()
			r := sandboxRun(t, sb, 0, j, e.attacker, c.over...)
			if r.code == 0 || strings.Contains(r.stdout, "ATTACK SUCCEEDED") {
				t.Errorf("%v passed the limit:\n%s", c.over, r)
			} else {
				t.Logf("stopped after %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(sandboxLastLine(r.stdout+r.stderr)))
			}
			if c.name == "FileSize" {
				if fi, err := os.Stat(big); err == nil && fi.Size() > e.limits.FileSize {
					t.Errorf("the job wrote %d bytes, limit %d", fi.Size(), e.limits.FileSize)
				}
			}
		})
	}
}

// sandboxLastLine returns the last line of s.
func sandboxLastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// sandboxProcessesWith returns the host's processes whose command line holds s.
func sandboxProcessesWith(s string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// sandboxGoneSoon checks that no process holding token in its command line is
// left a moment after its job ended, killing any that is.
func sandboxGoneSoon(t *testing.T, token string) {
	t.Helper()
	var left []int
	for range 100 {
		if left = sandboxProcessesWith(token); len(left) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("processes %v of the job outlived it", left)
	for _, p := range left {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// testSandboxDaemon: a setsid, double-forked child of the job does not
// outlive it.
func testSandboxDaemon(t *testing.T, e *sandboxEnv, sb *Sandbox) {
	j := newSandboxJob(t)
	token := fmt.Sprintf("daemon-%d", time.Now().UnixNano())
	r := sandboxRun(t, sb, 0, j, e.attacker, "daemon", token)
	if r.code != 0 {
		t.Fatalf("the job could not start its daemon (which it may):\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(j.dir, "daemon.pid")); err != nil {
		t.Fatalf("the daemon left no pid file: %v", err)
	}
	sandboxGoneSoon(t, token)
}

// testSandboxCancel: cancelling a job's context kills it, its daemon
// included, at once.
func testSandboxCancel(t *testing.T, e *sandboxEnv, sb *Sandbox) {
	j := newSandboxJob(t)
	token := fmt.Sprintf("daemon-%d", time.Now().UnixNano())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd, err := sb.Command(ctx, 1, j.dir, []string{j.in}, e.attacker, []string{"daemon-wait", token}, sandboxJobEnv)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(j.dir, "daemon.pid")); err == nil {
			break
		}
		if i == 500 {
			cancel()
			cmd.Wait()
			t.Fatalf("the daemon did not start:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	err = cmd.Wait()
	if err == nil {
		t.Errorf("a cancelled job succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the cancelled job took %v to end", d)
	}
	sandboxGoneSoon(t, token)
}

// testSandboxClang: LLVM 22's clang compiles and lld links in the sandbox,
// reading shipped inputs from a read-only directory; clang cannot write
// outside its job.
func testSandboxClang(t *testing.T, e *sandboxEnv, sb *Sandbox) {
	if e.clang == "" {
		llvmtest.Missing(t, "LLVM 22 is not installed")
	}
	j := newSandboxJob(t)
	os.WriteFile(filepath.Join(j.in, "k.h"), []byte("#define SCALE 3\n"), 0o644)
	os.WriteFile(filepath.Join(j.in, "k.c"), []byte("#include \"k.h\"\nint scale(int x) { return SCALE * x; }\n"), 0o644)
	obj := filepath.Join(j.dir, "k.o")
	r := sandboxRun(t, sb, 0, j, e.clang, "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-O2",
		"-I", j.in, "-o", obj, filepath.Join(j.in, "k.c"))
	if r.code != 0 {
		t.Fatalf("clang failed in the sandbox:\n%s", r)
	}
	if b, err := os.ReadFile(obj); err != nil || !bytes.HasPrefix(b, []byte("\x7fELF")) {
		t.Fatalf("clang's object: %v", err)
	}
	so := filepath.Join(j.dir, "k.so")
	r = sandboxRun(t, sb, 0, j, e.lld, "-flavor", "gnu", "-shared", "-o", so, obj)
	if r.code != 0 {
		t.Fatalf("lld failed in the sandbox:\n%s", r)
	}
	if b, err := os.ReadFile(so); err != nil || !bytes.HasPrefix(b, []byte("\x7fELF")) {
		t.Fatalf("lld's output: %v", err)
	}
	// Asked to write elsewhere, clang cannot.
	outside := filepath.Join(sandboxTempDir(t), "k.o")
	r = sandboxRun(t, sb, 0, j, e.clang, "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj",
		"-I", j.in, "-o", outside, filepath.Join(j.in, "k.c"))
	if r.code == 0 {
		t.Errorf("clang wrote outside its job:\n%s", r)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("clang wrote %s", outside)
	}
	// Nor read what is not the toolchain's or the job's.
	r = sandboxRun(t, sb, 0, j, e.clang, "-cc1", "-triple", "x86_64-pc-linux-gnu", "-E", "-o", filepath.Join(j.dir, "p.i"), "/etc/passwd")
	if r.code == 0 {
		t.Errorf("clang read /etc/passwd:\n%s", r)
	}
}

// testSandboxUID: as root, slot N's job runs as UIDBase+N with no
// supplementary groups and owns its directory, not its inputs.
func testSandboxUID(t *testing.T, e *sandboxEnv, sb *Sandbox) {
	j := newSandboxJob(t)
	// Inputs the worker wrote private (its overlay file, a client's 0600
	// source) are made readable to the job, still not writable.
	private := filepath.Join(j.in, "private.txt")
	if err := os.WriteFile(private, []byte("private\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := sandboxRun(t, sb, 3, j, e.attacker, "noop", private); r.code != 0 {
		t.Errorf("the job cannot read its 0600 input:\n%s", r)
	}
	if r := sandboxRun(t, sb, 3, j, e.attacker, "append", private); r.code == 0 {
		t.Errorf("the job wrote its 0600 input:\n%s", r)
	}
	r := sandboxRun(t, sb, 3, j, e.attacker, "id")
	if r.code != 0 {
		t.Fatalf("id:\n%s", r)
	}
	uid := os.Getuid()
	if os.Geteuid() == 0 {
		uid = testUIDBase + 3
	}
	want := fmt.Sprintf("uid=%d gid=%d euid=%d groups=[]", uid, uid, uid)
	if os.Geteuid() != 0 {
		want = fmt.Sprintf("uid=%d ", uid)
	}
	if !strings.Contains(r.stdout, want) {
		t.Errorf("the job's ids: %q, want %q", strings.TrimSpace(r.stdout), want)
	}
	if os.Geteuid() == 0 {
		for p, owner := range map[string]int{j.dir: uid, j.in: 0, j.input: 0} {
			var st syscall.Stat_t
			if err := syscall.Stat(p, &st); err != nil || int(st.Uid) != owner {
				t.Errorf("%s is owned by %d, want %d", p, st.Uid, owner)
			}
		}
	}
}

// testSandboxLayers: OFFCC_SANDBOX_DISABLE, the error without any layer,
// Insecure, and Command's checks of its arguments.
func testSandboxLayers(t *testing.T, e *sandboxEnv) {
	opt := e.options()
	opt.Disable = "bwrap,landlock"
	_, err := NewSandbox(opt)
	if err == nil || !strings.HasPrefix(err.Error(), "no sandbox: bubblewrap cannot run here (") ||
		!strings.HasSuffix(err.Error(), "; give --insecure-no-sandbox to run jobs unconfined") {
		t.Errorf("without a layer: %v", err)
	}
	opt.Insecure = true
	sb, err := NewSandbox(opt)
	if err != nil {
		t.Fatalf("insecure: %v", err)
	}
	if l := sb.Layers(); len(l) != 0 {
		t.Errorf("insecure layers %v", l)
	}
	j := newSandboxJob(t)
	if r := sandboxRun(t, sb, 0, j, e.attacker, "noop", j.input, filepath.Join(j.dir, "o")); r.code != 0 {
		t.Errorf("insecure: %s", r)
	}
	opt = e.options()
	opt.Disable = "seccomp"
	if _, err := NewSandbox(opt); err == nil || !strings.Contains(err.Error(), `unknown layer "seccomp"`) {
		t.Errorf("an unknown layer: %v", err)
	}

	sb, err = NewSandbox(e.options())
	if err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	ctx := context.Background()
	if _, err := sb.Command(ctx, 0, j.dir, nil, "/bin/sh", nil, sandboxJobEnv); err == nil {
		t.Errorf("Command ran a tool that is not the sandbox's")
	}
	if _, err := sb.Command(ctx, 0, j.dir, []string{filepath.Dir(j.dir)}, e.attacker, nil, sandboxJobEnv); err == nil {
		t.Errorf("Command took a read-only directory outside the job")
	}
	if _, err := sb.Command(ctx, 0, "job", nil, e.attacker, nil, sandboxJobEnv); err == nil {
		t.Errorf("Command took a relative job directory")
	}
	if os.Geteuid() == 0 {
		hidden := filepath.Join(sandboxPrivateDir(t), "job")
		os.Mkdir(hidden, 0o700)
		if _, err := sb.Command(ctx, 0, hidden, nil, e.attacker, nil, sandboxJobEnv); err == nil || !strings.Contains(err.Error(), "is not searchable by other users") {
			t.Errorf("Command took a job directory its uid cannot reach: %v", err)
		}
	}
	if code := SandboxMain(nil); code != 2 {
		t.Errorf("SandboxMain without arguments: %d", code)
	}
	if code := SandboxMain([]string{j.dir}); code != 2 {
		t.Errorf("SandboxMain DIR: %d", code)
	}
}

// testSandboxCommandLine logs bwrap's command line for a clang job and
// checks what it must and must not show.
func testSandboxCommandLine(t *testing.T, e *sandboxEnv) {
	if e.clang == "" {
		llvmtest.Missing(t, "LLVM 22 is not installed")
	}
	sb := e.sandbox(t, sandboxModes[0])
	j := newSandboxJob(t)
	cmd, err := sb.Command(context.Background(), 0, j.dir, []string{j.in}, e.clang,
		[]string{"-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-o", filepath.Join(j.dir, "k.o"), filepath.Join(j.in, "k.c")}, sandboxJobEnv)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bwrap command line:\n%s", sandboxShellQuote(cmd.Args))
	line := " " + strings.Join(cmd.Args, " ") + " "
	for _, want := range []string{" --unshare-all ", " --die-with-parent ", " --new-session ", " --cap-drop ALL ", " --clearenv ",
		" --proc /proc ", " --dev /dev ", " --bind " + j.dir + " " + j.dir + " ", " --ro-bind " + j.in + " " + j.in + " ",
		" --setenv LC_ALL C ", " -landlock ", " -write " + j.dir + " "} {
		if !strings.Contains(line, want) {
			t.Errorf("bwrap's command line lacks %q", want)
		}
	}
	for _, bad := range []string{" /usr /usr ", " /etc /etc ", " /tmp /tmp ", " / / ", " /home "} {
		if strings.Contains(line, bad) {
			t.Errorf("bwrap's command line has %q", bad)
		}
	}
}

// sandboxShellQuote returns args as a shell command line, an option a line.
func sandboxShellQuote(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			if strings.HasPrefix(a, "--") {
				b.WriteString(" \\\n  ")
			} else {
				b.WriteByte(' ')
			}
		}
		if a == "" || strings.ContainsAny(a, " '\"\\$*?") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		b.WriteString(a)
	}
	return b.String()
}

// BenchmarkSandboxOverhead measures one job's cost under each set of
// layers: each iteration runs "clang -cc1 -version" directly, then as a
// sandboxed job (as slot 0's uid when root, its directory handed over
// included). ms/direct and ms/sandboxed are the median runs, ms/overhead
// the median of the differences (pairs, so that a busy moment of the
// machine weighs on both sides).
func BenchmarkSandboxOverhead(b *testing.B) {
	e := newSandboxEnv(b)
	if e.clang == "" {
		b.Skip("LLVM 22 is not installed")
	}
	median := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	for _, m := range sandboxModes {
		b.Run(m.name, func(b *testing.B) {
			if m.ll && SandboxABI() == 0 {
				b.Skip("this kernel has no Landlock")
			}
			opt := e.options()
			opt.Disable = m.disable
			sb, err := NewSandbox(opt)
			if err != nil {
				b.Skip(err)
			}
			j := newSandboxJob(b)
			timed := func(c *exec.Cmd) time.Duration {
				start := time.Now()
				if out, err := c.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				return time.Since(start)
			}
			var direct, boxed, over []time.Duration
			for b.Loop() {
				c := exec.Command(e.clang, "-cc1", "-version")
				c.Dir, c.Env = j.dir, sandboxJobEnv
				d := timed(c)
				c, err := sb.Command(context.Background(), 0, j.dir, []string{j.in}, e.clang, []string{"-cc1", "-version"}, sandboxJobEnv)
				if err != nil {
					b.Fatal(err)
				}
				s := timed(c)
				direct, boxed, over = append(direct, d), append(boxed, s), append(over, s-d)
			}
			b.ReportMetric(median(direct), "ms/direct")
			b.ReportMetric(median(boxed), "ms/sandboxed")
			b.ReportMetric(median(over), "ms/overhead")
		})
	}
}

// TestSandboxResolve: the links on the way to a file are recorded as
// written and followed as the kernel does, ".." after a link leading above
// its target.
func TestSandboxResolve(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"real/lib", "real/deep/er", "other"} {
		os.MkdirAll(filepath.Join(d, p), 0o755)
	}
	os.WriteFile(filepath.Join(d, "real/lib/libx.so.1.2"), nil, 0o644)
	os.WriteFile(filepath.Join(d, "real/deep/f"), nil, 0o644)
	os.Symlink("real", filepath.Join(d, "lib"))                       // d/lib -> real
	os.Symlink("libx.so.1.2", filepath.Join(d, "real/lib/libx.so.1")) // a versioned name
	os.Symlink("real/deep/er", filepath.Join(d, "er"))                // er/.. is real/deep, not d
	os.Symlink(filepath.Join(d, "lib", "lib"), filepath.Join(d, "other/abs"))
	m := newSandboxMounts()
	for in, want := range map[string]string{
		filepath.Join(d, "lib/lib/libx.so.1"):   filepath.Join(d, "real/lib/libx.so.1.2"),
		d + "/er/../f":                          filepath.Join(d, "real/deep/f"),
		filepath.Join(d, "other/abs/libx.so.1"): filepath.Join(d, "real/lib/libx.so.1.2"),
	} {
		got, err := m.file(in)
		if err != nil || got != want {
			t.Errorf("resolve %s = %q, %v; want %q", in, got, err, want)
		}
	}
	wantLinks := map[string]string{
		filepath.Join(d, "lib"):                "real",
		filepath.Join(d, "real/lib/libx.so.1"): "libx.so.1.2",
		filepath.Join(d, "er"):                 "real/deep/er",
		filepath.Join(d, "other/abs"):          filepath.Join(d, "lib", "lib"),
	}
	if fmt.Sprint(m.links) != fmt.Sprint(wantLinks) {
		t.Errorf("links %v, want %v", m.links, wantLinks)
	}
	if _, err := m.file(filepath.Join(d, "real/lib")); err == nil {
		t.Errorf("a directory taken for a file")
	}
	os.Symlink("loop", filepath.Join(d, "loop"))
	if _, err := m.file(filepath.Join(d, "loop")); err == nil {
		t.Errorf("a loop of links resolved")
	}
}

// newSandboxJobBeside makes a job directory as the worker does: base/work
// (the job's, a tmpfs when root) and base/in (its inputs, beside it).
func newSandboxJobBeside(t testing.TB) sandboxJob {
	t.Helper()
	d, err := newJobDir(sandboxTempDir(t), os.Geteuid() == 0, 64<<20, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.remove() })
	j := sandboxJob{dir: d.work, in: d.in, input: filepath.Join(d.in, "input.txt")}
	if err := os.WriteFile(j.input, []byte("input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return j
}

// TestSandboxInputsBeside: a job whose inputs are beside its directory
// (the worker's layout, its directory a tmpfs as root) reads them and
// never writes them, under every set of layers, Landlock alone and not
// root included (it is granted no write beneath them); as root the
// inputs' directory is kept to root and the slot's group.
func TestSandboxInputsBeside(t *testing.T) {
	e := newSandboxEnv(t)
	for _, m := range sandboxModes {
		t.Run(m.name, func(t *testing.T) {
			sb := e.sandbox(t, m)
			j := newSandboxJobBeside(t)
			out := filepath.Join(j.dir, "out.txt")
			if r := sandboxRun(t, sb, 2, j, e.attacker, "noop", j.input, out); r.code != 0 {
				t.Fatalf("a job could not read its input and write its output:\n%s", r)
			}
			if b, err := os.ReadFile(out); err != nil || string(b) != "out\n" {
				t.Fatalf("the job's output: %q, %v", b, err)
			}
			for _, a := range [][]string{
				{"append", j.input}, {"write", j.input}, {"chmod", j.input}, {"remove", j.input},
				{"rename", j.input, filepath.Join(j.dir, "moved")}, {"write", filepath.Join(j.in, "new.txt")},
				{"link-write", j.input, filepath.Join(j.dir, "link")},
				{"write", filepath.Join(filepath.Dir(j.dir), "x")},
			} {
				if r := sandboxRun(t, sb, 2, j, e.attacker, a...); r.code == 0 || strings.Contains(r.stdout, "ATTACK SUCCEEDED") {
					t.Errorf("%v succeeded:\n%s", a, r)
				}
			}
			fi, err := os.Stat(j.input)
			if b, _ := os.ReadFile(j.input); err != nil || string(b) != "input\n" || fi.Mode().Perm() != 0o644 {
				t.Errorf("the read-only input changed: %q, %v", b, err)
			}
			for _, p := range []string{filepath.Join(j.in, "new.txt"), filepath.Join(filepath.Dir(j.dir), "x")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
			if os.Geteuid() == 0 {
				var st syscall.Stat_t
				syscall.Stat(j.in, &st)
				id := uint32(testUIDBase + 2)
				if st.Uid != 0 || st.Gid != id || st.Mode&0o777 != 0o750 {
					t.Errorf("the inputs' directory: uid %d gid %d mode %o, want 0 %d 750", st.Uid, st.Gid, st.Mode&0o777, id)
				}
				syscall.Stat(j.dir, &st)
				if st.Uid != id {
					t.Errorf("the job's directory is owned by %d, want %d", st.Uid, id)
				}
			}
		})
	}
	t.Run("CommandLine", func(t *testing.T) {
		sb := e.sandbox(t, sandboxModes[0])
		j := newSandboxJobBeside(t)
		cmd, err := sb.Command(context.Background(), 0, j.dir, []string{j.in}, e.attacker, []string{"noop"}, sandboxJobEnv)
		if err != nil {
			t.Fatal(err)
		}
		line := " " + strings.Join(cmd.Args, " ") + " "
		for _, want := range []string{" --bind " + j.dir + " " + j.dir + " ", " --ro-bind " + j.in + " " + j.in + " ",
			" -read " + j.in + " ", " -write " + j.dir + " "} {
			if !strings.Contains(line, want) {
				t.Errorf("the command line lacks %q:\n%s", want, sandboxShellQuote(cmd.Args))
			}
		}
		// Neither the parent, nor the job's own directory, nor outside.
		for _, bad := range []string{filepath.Dir(j.dir), j.dir, "/etc", filepath.Join(filepath.Dir(j.dir), "..", "x")} {
			if _, err := sb.Command(context.Background(), 0, j.dir, []string{bad}, e.attacker, nil, sandboxJobEnv); err == nil {
				t.Errorf("Command took the read-only directory %s", bad)
			}
		}
	})
}
