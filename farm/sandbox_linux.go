package farm

// The per-job sandbox of a worker (Linux).
//
// A job is a command line a client chose, run by the worker's own clang or
// lld on files the client shipped: the worker's command-line checks (check)
// and clang's VFS overlay decide what the tool is asked to do, and the
// sandbox decides what it can do should a crafted input take the tool over.
// Two independent layers confine it, each enough on its own to keep the
// job from the worker's files, network and processes:
//
//   - bubblewrap (bwrap) runs the job in new user, mount, PID, network, IPC,
//     UTS and cgroup namespaces. Its file system is a read-only tmpfs that
//     holds only the toolchain (the Roots, the tools, their ELF interpreter
//     and shared libraries, with the symbolic links on the way to them
//     recreated), /etc/ld.so.cache, a fresh /proc, a minimal read-only
//     /dev, the job's directory, writable, and the shipped inputs, bound
//     read-only (beside the job's directory, as the worker lays them out,
//     or inside it). offcc itself, whose "__farm-sandbox" step
//     runs first, is not there: it runs from a descriptor the worker
//     opened (/proc/self/fd/3), closed before the tool starts. Its network is a loopback of its own;
//     its processes see none of the host's, and all die when the job's
//     first process ends (the PID namespace dies with its init).
//
//   - Landlock, applied by offcc's "__farm-sandbox" step inside bwrap just
//     before it executes the tool, restricts the same process tree again
//     by path: it may read only beneath the Roots, the libraries, the tool,
//     its inputs and its job directory, write only beneath its job directory (and
//     /dev/null), execute only the tool (and the ELF interpreter, which
//     execve opens with execute rights), connect or bind no TCP port (ABI
//     4), and signal or reach through abstract Unix sockets no process
//     outside the job (ABI 6). Landlock forbids mounting, so it cannot be
//     set up before bwrap has built the mounts: it is the innermost step.
//     It also covers what bwrap cannot: executing a file the job wrote.
//
// The same step sets PR_SET_NO_NEW_PRIVS, a seccomp filter that fails
// socket(2) and io_uring_setup (Landlock's TCP rights do not cover MPTCP,
// UDP or Unix sockets, and vsock crosses network namespaces; the tools
// open no socket), and the job's resource limits (RLIMIT_AS, RLIMIT_CPU,
// RLIMIT_FSIZE, RLIMIT_NPROC, RLIMIT_CORE=0) right before exec, so that
// they bind the tool and everything it starts.
//
// What neither layer keeps from a job: reading the toolchain and its own
// inputs (which it may), stat(2) of paths outside its view under Landlock
// alone (Landlock restricts opening, not looking up), and code it loads
// itself with mmap or through the ELF interpreter (ld.so FILE maps any file
// it may read; a job that can do that runs code of its choice already).
// Disk space is the worker's to bound (RLIMIT_FSIZE bounds each file, not
// their number): a root worker makes each job's directory a tmpfs of a
// fixed size and number of files (see jobDir). Under Landlock alone, a
// worker that is not root cannot make read-only inputs inside the job's
// directory read-only (Landlock cannot take rights away beneath a
// directory it grants them on; the worker puts them beside it), nor bound
// its jobs' processes (see Limits).
//
// A worker running as root runs slot N's jobs (bwrap itself, so everything
// inside too) as uid and gid UIDBase+N, with no supplementary group, and
// hands the job directory (but not its read-only inputs) to that uid first:
// the kernel exempts real root from RLIMIT_NPROC, so only a job running as
// its own uid is bounded in processes; file permissions then keep the
// root-owned inputs read-only to the job even through hard links, which no
// mount flag does; and a slot's processes are all of that uid's, so none can
// signal the worker or another slot's job. A worker running as another user
// runs its jobs as itself (bwrap's user namespace makes the count of
// RLIMIT_NPROC per job).
//
// Either layer alone is used when the other is missing (no bwrap, or user
// namespaces refused; or a kernel without Landlock). Without bwrap, jobs
// have no PID namespace to die with, so "__farm-sandbox -supervise" runs
// them under a child subreaper that kills every process the job left
// behind when it ends or is cancelled. With neither layer, NewSandbox
// fails unless the worker was started with --insecure-no-sandbox.

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Sandbox runs a worker's jobs confined: in bubblewrap's namespaces, under
// Landlock, with resource limits, and (when the worker is root) as a uid of
// their slot's own. Make one with NewSandbox, then a command per job with
// Command. See the comment at the top of sandbox_linux.go for the design.
//
// SandboxOptions.Disable (the worker's OFFCC_SANDBOX_DISABLE setting) is a
// comma-separated list of layers to leave out ("bwrap", "landlock"), for
// tests and benchmarks; leaving out both needs Insecure.
type Sandbox struct {
	opt    SandboxOptions
	self   string   // Self, its real path
	selfFD *os.File // Self, open: jobs run it as /proc/self/fd/3 (selfExe)
	bwrap  string   // bwrap's path, "" when bubblewrap is not a layer
	abi    int      // the Landlock ABI jobs run under, 0 for none
	root   bool     // the worker is root: jobs run as UIDBase+slot
	tools  map[string]bool
	interp []string // ELF interpreters of the tools: executable too
	reads  []string // what Landlock lets a job read besides its directory
	fixed  []string // bwrap's arguments that are the same for every job
	layers []string
}

// Defaults of Limits and SandboxOptions.
const (
	sandboxDefaultUIDBase  = 1900000000
	sandboxDefaultCPU      = 10 * time.Minute
	sandboxDefaultMemory   = 16 << 30
	sandboxDefaultFileSize = 4 << 30
	sandboxDefaultProcs    = 64
)

// selfExe is Self as jobs run it: the descriptor Command passes as
// ExtraFiles[0] (not to be changed).
const selfExe = "/proc/self/fd/3"

// sandboxDisableEnv is the setting SandboxOptions.Disable comes from, named
// in messages.
const sandboxDisableEnv = "OFFCC_SANDBOX_DISABLE"

// NewSandbox finds the layers this machine offers, resolves what the tools
// and Self load, and checks that a sandboxed process runs (as slot 0's uid
// when the worker is root). It fails when neither layer works, unless
// opt.Insecure.
func NewSandbox(opt SandboxOptions) (*Sandbox, error) {
	if opt.UIDBase <= 0 {
		opt.UIDBase = sandboxDefaultUIDBase
	}
	l := &opt.Limits
	if l.CPU == 0 {
		l.CPU = sandboxDefaultCPU
	}
	if l.Memory == 0 {
		l.Memory = sandboxDefaultMemory
	}
	if l.FileSize == 0 {
		l.FileSize = sandboxDefaultFileSize
	}
	if l.Procs == 0 {
		// lld runs a thread per CPU, and dies if it cannot.
		l.Procs = max(sandboxDefaultProcs, runtime.NumCPU()+32)
	}
	// An empty tool is one the worker lacks (ToolPath gives "" for a
	// CUDA tool where there is no CUDA toolkit): left out.
	opt.Tools = slices.DeleteFunc(slices.Clone(opt.Tools), func(t string) bool { return t == "" })
	s := &Sandbox{opt: opt, root: os.Geteuid() == 0, tools: map[string]bool{}}
	for _, t := range opt.Tools {
		if !filepath.IsAbs(t) {
			return nil, fmt.Errorf("sandbox: tool %s: not an absolute path", t)
		}
		s.tools[t] = true
	}
	noBwrap, noLandlock := false, false
	for _, f := range strings.Split(opt.Disable, ",") {
		switch strings.TrimSpace(f) {
		case "bwrap", "bubblewrap":
			noBwrap = true
		case "landlock":
			noLandlock = true
		case "", "tmpfs": // tmpfs: the worker's (WorkerOptions.NoTmpfs)
		default:
			return nil, fmt.Errorf("%s=%q: unknown layer %q (bwrap, landlock, tmpfs)", sandboxDisableEnv, opt.Disable, f)
		}
	}
	if opt.Self == "" {
		if !opt.Insecure {
			return nil, errors.New("no sandbox: the offcc executable (Self) is unknown")
		}
		return s, nil
	}
	m := newSandboxMounts()
	var err error
	// Self is not shown to jobs: they run it through a descriptor, which
	// also spares the slots' uids the need to reach it by its path.
	if s.self, err = newSandboxMounts().file(opt.Self); err != nil {
		return nil, fmt.Errorf("sandbox: %v", err)
	}
	if s.selfFD, err = os.Open(s.self); err != nil {
		return nil, fmt.Errorf("sandbox: %v", err)
	}
	for _, r := range opt.Roots {
		if _, err := m.root(r); err != nil {
			return nil, fmt.Errorf("sandbox: %v", err)
		}
	}
	for _, t := range opt.Tools {
		if _, err := m.file(t); err != nil {
			return nil, fmt.Errorf("sandbox: %v", err)
		}
	}
	// What the tools and Self load: their ELF interpreter and libraries.
	interps := map[string]bool{}
	for _, exe := range append([]string{s.self}, opt.Tools...) {
		interp, libs, err := elfLoads(exe)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %v", err)
		}
		for _, p := range append(libs, interp) {
			if p == "" {
				continue
			}
			real, err := m.file(p)
			if err != nil {
				return nil, fmt.Errorf("sandbox: %s: %v", exe, err)
			}
			if p == interp && exe != s.self {
				interps[real] = true
			}
		}
		if interp != "" {
			m.file("/etc/ld.so.cache") // absent on some systems: then unneeded
		}
	}
	for p := range interps {
		s.interp = append(s.interp, p)
	}
	sort.Strings(s.interp)
	s.reads = m.readable()

	if !noLandlock {
		s.abi = SandboxABI()
	}
	var bwrapErr error
	if noBwrap {
		bwrapErr = fmt.Errorf("switched off by %s", sandboxDisableEnv)
	} else if s.bwrap, bwrapErr = exec.LookPath("bwrap"); bwrapErr == nil {
		s.fixed = m.bwrapArgs()
		if bwrapErr = s.probe(true); bwrapErr != nil {
			s.bwrap = ""
		}
	}
	if s.bwrap == "" && s.abi > 0 {
		// Landlock alone: check it holds, and that Self runs as the slot's uid.
		if err := s.probe(false); err != nil {
			return nil, fmt.Errorf("sandbox: %v", err)
		}
	}
	if s.bwrap != "" {
		s.layers = append(s.layers, "bubblewrap")
	}
	if s.abi > 0 {
		s.layers = append(s.layers, fmt.Sprintf("landlock-abi-%d", s.abi))
	}
	if len(s.layers) == 0 && !opt.Insecure {
		kernel := "the kernel has no Landlock"
		if noLandlock {
			kernel = "Landlock is switched off by " + sandboxDisableEnv
		}
		return nil, fmt.Errorf("no sandbox: bubblewrap cannot run here (%v) and %s; give --insecure-no-sandbox to run jobs unconfined", bwrapErr, kernel)
	}
	return s, nil
}

// Layers returns the layers jobs run under, e.g. []string{"bubblewrap",
// "landlock-abi-6"}; none means insecure.
func (s *Sandbox) Layers() []string { return slices.Clone(s.layers) }

// probe runs the sandbox's inner step with no job and no tool, as slot 0,
// in bwrap or not: it applies everything a job gets, then says so.
func (s *Sandbox) probe(inBwrap bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	inner := s.innerArgs("", nil, inBwrap)
	inner = append(inner, "-probe")
	var argv []string
	if inBwrap {
		argv = append([]string{s.bwrap}, s.fixed...)
		argv = append(argv, "--remount-ro", "/", "--chdir", "/", "--", selfExe, "__farm-sandbox")
		argv = append(argv, inner...)
	} else {
		argv = append([]string{selfExe, "__farm-sandbox"}, inner...)
	}
	// Worker side: the worker's own executor starts its jobs here, not
	// through a client build's actions.Shell (deliberately).
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = "/"
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{s.selfFD}
	cmd.SysProcAttr = s.procAttr(0)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.HasPrefix(out, []byte("offcc-sandbox-ok")) {
		what := "bubblewrap"
		if !inBwrap {
			what = "offcc __farm-sandbox"
		}
		msg := strings.TrimSpace(string(out))
		if err == nil {
			err = errors.New("no answer")
		}
		if msg != "" {
			return fmt.Errorf("%s: %v: %s", what, err, msg)
		}
		return fmt.Errorf("%s: %v", what, err)
	}
	return nil
}

// procAttr returns the attributes of the sandbox's first process for slot:
// its own process group, killed with the worker, and the slot's uid when
// the worker is root.
func (s *Sandbox) procAttr(slot int) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.root {
		id := uint32(s.opt.UIDBase + slot)
		a.Credential = &syscall.Credential{Uid: id, Gid: id, Groups: []uint32{}}
	}
	return a
}

// innerArgs returns the options of "__farm-sandbox" for a job in jobDir
// ("" for the probe) reading the read-only directories ro.
func (s *Sandbox) innerArgs(jobDir string, ro []string, inBwrap bool) []string {
	var a []string
	if s.abi > 0 {
		a = append(a, "-landlock")
		for _, p := range s.reads {
			a = append(a, "-read", p)
		}
		for _, p := range s.interp {
			a = append(a, "-exec", p)
		}
		for _, d := range ro {
			if !within(jobDir, d) {
				a = append(a, "-read", d) // beneath jobDir: read with it
			}
		}
		if jobDir != "" {
			a = append(a, "-write", jobDir)
		}
		if inBwrap {
			a = append(a, "-proc", "all") // a procfs of the job's own
		} else {
			a = append(a, "-proc", "self")
		}
	}
	if s.bwrap != "" || s.abi > 0 {
		a = append(a, "-nosockets")
	}
	l := s.opt.Limits
	if l.CPU > 0 {
		a = append(a, "-cpu", strconv.FormatInt(int64((l.CPU+time.Second-1)/time.Second), 10))
	}
	if l.Memory > 0 {
		a = append(a, "-as", strconv.FormatInt(l.Memory, 10))
	}
	if l.FileSize > 0 {
		a = append(a, "-fsize", strconv.FormatInt(l.FileSize, 10))
	}
	// RLIMIT_NPROC counts a user's processes: per job in bwrap's user
	// namespace or as the slot's uid, but the worker's own and every
	// other job's too for a worker that is not root running jobs
	// outside bwrap, where it is left alone.
	if l.Procs > 0 && (inBwrap || s.root) {
		a = append(a, "-nproc", strconv.Itoa(l.Procs))
	}
	return a
}

// Command returns the command that runs tool with args for one job: slot
// is the worker slot (0..n-1) running it, jobDir the job's private
// directory (its working directory, the only place it may write), readOnly
// directories that the job may read but never write (the shipped inputs):
// inside jobDir, or beside it (inside jobDir's parent, not holding
// jobDir); env the job's whole environment. The caller sets Stdout and
// Stderr and runs it; cancelling ctx kills every process of the job.
//
// When the worker is root, Command first hands jobDir and everything in it
// but the readOnly directories to the slot's uid, and makes what is in the
// readOnly directories readable by others (r-- for files, r-x for
// directories: jobDir, 0700 and the slot's, keeps others out of those in
// it, and a readOnly directory beside it becomes root's, of the slot's
// group, mode 0750; files linked from the blob cache change mode there
// too, which its 0700 directory keeps to root). The directories above
// jobDir must be searchable by others. Each slot must run one job at a
// time, and its directory is the job's from then on. The command passes
// offcc to the sandbox as ExtraFiles[0]: leave ExtraFiles alone.
func (s *Sandbox) Command(ctx context.Context, slot int, jobDir string, readOnly []string, tool string, args []string, env []string) (*exec.Cmd, error) {
	if slot < 0 {
		return nil, fmt.Errorf("sandbox: bad slot %d", slot)
	}
	if !filepath.IsAbs(jobDir) || filepath.Clean(jobDir) != jobDir || jobDir == "/" {
		return nil, fmt.Errorf("sandbox: job directory %q: not a clean absolute path", jobDir)
	}
	if fi, err := os.Lstat(jobDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("sandbox: job directory %s: not a directory", jobDir)
	}
	ro := make([]string, 0, len(readOnly))
	for _, d := range readOnly {
		d, err := readOnlyDir(jobDir, d)
		if err != nil {
			return nil, err
		}
		ro = append(ro, d)
	}
	sort.Strings(ro) // a directory before those inside it
	if !s.tools[tool] {
		return nil, fmt.Errorf("sandbox: %s is not one of the sandbox's tools", tool)
	}
	if s.root {
		if err := s.CheckDir(filepath.Dir(jobDir)); err != nil {
			return nil, err
		}
		if err := s.handOver(slot, jobDir, ro); err != nil {
			return nil, err
		}
	}
	var argv []string
	inBwrap := s.bwrap != ""
	switch {
	case s.self == "":
		argv = append([]string{tool}, args...) // insecure, and no offcc to limit the job
	case inBwrap:
		argv = append(argv, s.bwrap)
		argv = append(argv, s.fixed...)
		argv = append(argv, "--bind", jobDir, jobDir)
		for _, d := range ro {
			argv = append(argv, "--ro-bind", d, d)
		}
		argv = append(argv, "--remount-ro", "/", "--chdir", jobDir)
		for _, kv := range env {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				argv = append(argv, "--setenv", k, v)
			}
		}
		argv = append(argv, "--", selfExe, "__farm-sandbox")
		argv = append(argv, s.innerArgs(jobDir, ro, true)...)
		argv = append(argv, "--", tool)
		argv = append(argv, args...)
	default:
		// No PID namespace: a supervisor kills what the job leaves.
		argv = append(argv, selfExe, "__farm-sandbox", "-supervise")
		argv = append(argv, s.innerArgs(jobDir, ro, false)...)
		argv = append(argv, "--", tool)
		argv = append(argv, args...)
	}
	// Worker side: the worker's own executor starts its jobs here, not
	// through a client build's actions.Shell (deliberately).
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if s.self != "" {
		cmd.ExtraFiles = []*os.File{s.selfFD}
		if !inBwrap {
			cmd.Args[0] = s.self
		}
	}
	cmd.Dir = jobDir
	cmd.Env = slices.Clip(env)
	if inBwrap {
		cmd.Env = []string{} // bwrap --clearenv, then --setenv each of env
	}
	cmd.SysProcAttr = s.procAttr(slot)
	uid := -1
	if s.root {
		uid = s.opt.UIDBase + slot
	}
	supervised := !inBwrap && s.self != ""
	cmd.Cancel = func() error {
		if supervised {
			// The supervisor kills the job's every process, then exits.
			syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		} else {
			// bwrap's process group; its sandbox dies with it
			// (--die-with-parent), and all in it with the sandbox's init.
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		if uid >= 0 {
			killUID(uid)
		}
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	return cmd, nil
}

// readOnlyDir returns d, a read-only directory of a job in jobDir, once
// checked: a clean absolute path inside jobDir or inside its parent, not
// holding jobDir, reached through directories only (no symbolic link).
func readOnlyDir(jobDir, d string) (string, error) {
	base := jobDir
	if !within(jobDir, d) || d == jobDir {
		base = filepath.Dir(jobDir)
	}
	rel, err := filepath.Rel(base, d)
	if !filepath.IsAbs(d) || filepath.Clean(d) != d || err != nil || rel == "." || rel == ".." ||
		strings.HasPrefix(rel, "../") || within(d, jobDir) || base == "/" {
		return "", fmt.Errorf("sandbox: read-only directory %s: neither inside the job directory %s nor beside it", d, jobDir)
	}
	p := base
	for _, part := range strings.Split(rel, "/") {
		p = filepath.Join(p, part)
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("sandbox: read-only directory %s: not a directory", p)
		}
	}
	return d, nil
}

// within reports whether path p is dir or beneath it.
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// CheckDir returns why jobs made in dir could not run, or nil: when the
// worker is root, jobs run as their slot's uid, which must be able to
// search dir and every directory above it.
func (s *Sandbox) CheckDir(dir string) error {
	if !s.root {
		return nil
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("sandbox: the jobs' uids (%d and up) cannot reach %s: %s is not searchable by other users (chmod o+x it, or give another --dir)", s.opt.UIDBase, dir, d)
		}
		if d == "/" {
			return nil
		}
	}
}

// handOver gives jobDir and everything in it but the readOnly directories
// to slot's uid, and makes what is in the readOnly directories readable by
// it: those beside jobDir become root's, of the slot's group, mode 0750,
// which keeps other users out.
func (s *Sandbox) handOver(slot int, jobDir string, ro []string) error {
	id := s.opt.UIDBase + slot
	err := filepath.WalkDir(jobDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if _, found := slices.BinarySearch(ro, p); found {
			// Root's, read-only: only make it readable.
			if err := readableByAll(p); err != nil {
				return err
			}
			return filepath.SkipDir
		}
		if err := os.Lchown(p, id, id); err != nil {
			return fmt.Errorf("sandbox: %v", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range ro {
		if within(jobDir, d) {
			continue
		}
		if err := readableByAll(d); err != nil {
			return err
		}
		if err := os.Lchown(d, 0, id); err != nil {
			return fmt.Errorf("sandbox: %v", err)
		}
		if err := os.Chmod(d, 0o750); err != nil {
			return fmt.Errorf("sandbox: %v", err)
		}
	}
	return nil
}

// readableByAll makes the files beneath dir readable by others (r--), and
// the directories searchable (r-x), without making them writable.
func readableByAll(dir string) error {
	return filepath.WalkDir(dir, func(q string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		want := fs.FileMode(0o004) // files: r for others
		if e.IsDir() {
			want = 0o005 // r-x
		} else if !e.Type().IsRegular() {
			return nil
		}
		fi, err := e.Info()
		if err == nil && fi.Mode().Perm()&want != want {
			err = os.Chmod(q, fi.Mode().Perm()|want)
		}
		return err
	})
}

// killUID kills every process of uid (a slot's, whose processes are all
// its job's), a few rounds in case some were forking.
func killUID(uid int) {
	for range 3 {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		n := 0
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if procUID(pid) == uid {
				syscall.Kill(pid, syscall.SIGKILL)
				n++
			}
		}
		if n == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// procUID returns the real uid of process pid, -1 if it cannot tell (the
// owner of /proc/PID is root for a process that is not dumpable).
func procUID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if uid, err := strconv.Atoi(f[0]); err == nil {
					return uid
				}
			}
		}
	}
	return -1
}

// sandboxMounts collects what a sandbox shows of the host: directories and files,
// by their real paths, and the symbolic links on the way to them.
type sandboxMounts struct {
	roots []string          // real directories, shown whole
	files map[string]bool   // real files
	links map[string]string // link path -> its target, as written
}

// newSandboxMounts returns an empty set of mounts.
func newSandboxMounts() *sandboxMounts {
	return &sandboxMounts{files: map[string]bool{}, links: map[string]string{}}
}

// resolve returns p's real path, recording the links on the way, as the
// kernel follows them (".." after a link leads above its target).
func (m *sandboxMounts) resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%s: not an absolute path", p)
	}
	todo := strings.Split(p, "/")
	cur := "/"
	for hops := 0; len(todo) > 0; {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		m.links[next] = target
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return cur, nil
}

// root adds directory r.
func (m *sandboxMounts) root(r string) (string, error) {
	real, err := m.resolve(r)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("root %s: not a directory", r)
	}
	m.roots = append(m.roots, real)
	return real, nil
}

// file adds file f.
func (m *sandboxMounts) file(f string) (string, error) {
	real, err := m.resolve(f)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a file", f)
	}
	m.files[real] = true
	return real, nil
}

// under reports whether p is one of the roots or beneath one.
func (m *sandboxMounts) under(p string) bool {
	for _, r := range m.roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// bwrapArgs returns bwrap's arguments that do not depend on the job: the
// namespaces, the toolchain's mounts, /proc and /dev.
func (m *sandboxMounts) bwrapArgs() []string {
	a := []string{
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--clearenv", "--hostname", "offcc-job",
	}
	roots := slices.Clone(m.roots)
	sort.Strings(roots)
	roots = slices.Compact(roots)
	for i, r := range roots {
		if i > 0 && strings.HasPrefix(r, roots[i-1]+"/") {
			roots[i] = roots[i-1] // inside another: shown with it
		}
	}
	roots = slices.Compact(roots)
	for _, r := range roots {
		a = append(a, "--ro-bind", r, r)
	}
	for _, f := range sandboxSortedKeys(m.files) {
		if !m.under(f) {
			a = append(a, "--ro-bind", f, f)
		}
	}
	for _, l := range sandboxSortedKeys(m.links) {
		if !m.under(l) {
			a = append(a, "--symlink", m.links[l], l)
		}
	}
	return append(a, "--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev")
}

// readable returns what Landlock lets a job read: the roots and the files.
func (m *sandboxMounts) readable() []string {
	r := slices.Clone(m.roots)
	for _, f := range sandboxSortedKeys(m.files) {
		if !m.under(f) {
			r = append(r, f)
		}
	}
	sort.Strings(r)
	return slices.Compact(r)
}

// sandboxSortedKeys returns the keys of m, sorted.
func sandboxSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// elfLoads returns the ELF interpreter of exe ("" for a static executable) and
// the shared libraries it loads, as the dynamic loader finds them (ldd, or
// the interpreter's --list where there is no ldd).
func elfLoads(exe string) (interp string, libs []string, err error) {
	f, err := elf.Open(exe)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return "", nil, fmt.Errorf("%s is not an ELF executable (a script?): jobs run the toolchain's own binaries", exe)
		}
		return "", nil, err
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				f.Close()
				return "", nil, fmt.Errorf("%s: %v", exe, err)
			}
			interp = string(bytes.TrimRight(b, "\x00"))
		}
	}
	f.Close()
	if interp == "" {
		return "", nil, nil
	}
	// Worker side (the sandbox's library list), not a client build's
	// child: deliberately not through actions.Shell.
	var cmd *exec.Cmd
	if ldd, err := exec.LookPath("ldd"); err == nil {
		cmd = exec.Command(ldd, exe)
	} else {
		cmd = exec.Command(interp, "--list", exe)
	}
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("cannot list the libraries of %s: %v", exe, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if _, right, ok := strings.Cut(line, "=>"); ok {
			line = strings.TrimSpace(right)
			if strings.HasPrefix(line, "not found") {
				return "", nil, fmt.Errorf("%s: a library is not found: %s", exe, sc.Text())
			}
		}
		if i := strings.Index(line, " ("); i >= 0 {
			line = line[:i]
		}
		if strings.HasPrefix(line, "/") {
			libs = append(libs, line)
		}
	}
	return interp, libs, nil
}

// Landlock (Linux 5.13+).

const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	landlockCreateRulesetVersion = 1 << 0
	landlockRulePathBeneath      = 1

	accessExecute    = 1 << 0
	accessWriteFile  = 1 << 1
	accessReadFile   = 1 << 2
	accessReadDir    = 1 << 3
	accessRemoveDir  = 1 << 4
	accessRemoveFile = 1 << 5
	accessMakeChar   = 1 << 6
	accessMakeDir    = 1 << 7
	accessMakeReg    = 1 << 8
	accessMakeSock   = 1 << 9
	accessMakeFifo   = 1 << 10
	accessMakeBlock  = 1 << 11
	accessMakeSym    = 1 << 12
	accessRefer      = 1 << 13 // ABI 2
	accessTruncate   = 1 << 14 // ABI 3
	accessIoctlDev   = 1 << 15 // ABI 5

	accessNetBindTCP    = 1 << 0 // ABI 4
	accessNetConnectTCP = 1 << 1 // ABI 4

	scopeAbstractUnixSocket = 1 << 0 // ABI 6
	scopeSignal             = 1 << 1 // ABI 6

	prSetPdeathsig      = 1
	prSetNoNewPrivs     = 38
	prSetChildSubreaper = 36
	oPath               = 0x200000 // O_PATH

	landlockFileAccess = accessExecute | accessWriteFile | accessReadFile | accessTruncate | accessIoctlDev
)

// SandboxABI returns the Landlock ABI version the kernel offers, 0 when it
// offers none (too old, or disabled).
func SandboxABI() int {
	v, _, errno := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, landlockCreateRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// writeAccess is every write-type right the ABI knows.
func writeAccess(abi int) uint64 {
	a := uint64(accessWriteFile | accessRemoveDir | accessRemoveFile | accessMakeChar | accessMakeDir |
		accessMakeReg | accessMakeSock | accessMakeFifo | accessMakeBlock | accessMakeSym)
	if abi >= 2 {
		a |= accessRefer
	}
	if abi >= 3 {
		a |= accessTruncate
	}
	return a
}

// landlock is a ruleset being built.
type landlock struct {
	fd      int
	handled uint64
}

// rulesetAttr is struct landlock_ruleset_attr (its later fields zero
// where the ABI does not know them).
type rulesetAttr struct {
	fs     uint64 // handled file system rights
	net    uint64 // handled network rights (ABI 4)
	scoped uint64 // scopes (ABI 6)
}

// newLandlock creates a ruleset that handles fs and, when all, every TCP
// right and scope the ABI knows, and that allows nothing yet.
func newLandlock(abi int, fs uint64, all bool) (*landlock, error) {
	attr := rulesetAttr{fs: fs}
	if all && abi >= 4 {
		attr.net = accessNetBindTCP | accessNetConnectTCP
	}
	if all && abi >= 6 {
		attr.scoped = scopeAbstractUnixSocket | scopeSignal
	}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return nil, fmt.Errorf("landlock_create_ruleset: %v", errno)
	}
	return &landlock{fd: int(fd), handled: fs}, nil
}

// allow lets the ruleset's domain have access beneath path (on a file:
// its file rights only).
func (l *landlock) allow(path string, access uint64) error {
	pfd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("landlock: %s: %v", path, err)
	}
	defer syscall.Close(pfd)
	var st syscall.Stat_t
	if err := syscall.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("landlock: %s: %v", path, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		access &= landlockFileAccess
	}
	access &= l.handled
	if access == 0 {
		return nil
	}
	var rule [12]byte // struct landlock_path_beneath_attr, packed
	*(*uint64)(unsafe.Pointer(&rule[0])) = access
	*(*int32)(unsafe.Pointer(&rule[8])) = int32(pfd)
	if _, _, errno := syscall.Syscall6(sysLandlockAddRule, uintptr(l.fd), landlockRulePathBeneath, uintptr(unsafe.Pointer(&rule[0])), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %v", path, errno)
	}
	return nil
}

// restrict confines the calling thread (which must then execute the tool:
// Landlock binds threads, and exec keeps it) and closes the ruleset.
func (l *landlock) restrict() error {
	defer syscall.Close(l.fd)
	if err := setNoNewPrivs(); err != nil {
		return err
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, uintptr(l.fd), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %v", errno)
	}
	return nil
}

// setNoNewPrivs sets PR_SET_NO_NEW_PRIVS on the calling thread.
func setNoNewPrivs() error {
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %v", errno)
	}
	return nil
}

// SandboxMain is "offcc __farm-sandbox [OPTIONS] -- TOOL ARGS...", the
// sandbox's innermost step, run by Sandbox.Command's command (inside bwrap
// when that is a layer): it sets PR_SET_NO_NEW_PRIVS and, with -landlock,
// confines the process with Landlock to its options' paths, sets the
// resource limits, and executes TOOL. Its options:
//
//	-landlock       apply Landlock (else only the limits)
//	-read PATH      may read beneath PATH (repeated)
//	-exec PATH      may execute PATH besides TOOL (the ELF interpreter; repeated)
//	-write DIR      may write beneath DIR, the job's directory
//	-proc all|self  may read /proc (a procfs of the job's own) or /proc/self only
//	-cpu SECONDS, -as BYTES, -fsize BYTES, -nproc N: RLIMIT_CPU, _AS, _FSIZE, _NPROC
//	-nosockets      deny socket(2) (EACCES) and io_uring with seccomp
//	-supervise      run the rest as a child and kill every process it leaves
//	                behind (as child subreaper) when it ends or on SIGTERM
//	-probe          apply everything, then print "offcc-sandbox-ok" and exit
//
// The older form "offcc __farm-sandbox DIR -- TOOL ARGS..." only restricts
// writes to DIR (and /dev/null) with Landlock, then executes TOOL.
// SandboxMain returns only on failure, with an exit status.
func SandboxMain(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "offcc: error: __farm-sandbox: "+format+"\n", a...)
		return 2
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if len(args) < 3 || args[1] != "--" {
			return fail("usage: __farm-sandbox DIR -- TOOL ARGS...")
		}
		dir, argv := args[0], args[2:]
		if err := restrictWrites(dir); err != nil {
			return fail("%v", err)
		}
		err := syscall.Exec(argv[0], argv, os.Environ())
		return fail("cannot run %s: %v", argv[0], err)
	}
	var o sandboxInnerOptions
	fl := flag.NewFlagSet("__farm-sandbox", flag.ContinueOnError)
	fl.SetOutput(os.Stderr)
	fl.BoolVar(&o.landlock, "landlock", false, "apply Landlock")
	fl.Func("read", "may read beneath `PATH`", func(v string) error { o.reads = append(o.reads, v); return nil })
	fl.Func("exec", "may execute `PATH`", func(v string) error { o.execs = append(o.execs, v); return nil })
	fl.StringVar(&o.write, "write", "", "may write beneath `DIR`")
	fl.StringVar(&o.proc, "proc", "", "may read /proc (all) or /proc/self (self)")
	fl.Int64Var(&o.cpu, "cpu", 0, "RLIMIT_CPU `seconds`")
	fl.Int64Var(&o.as, "as", 0, "RLIMIT_AS `bytes`")
	fl.Int64Var(&o.fsize, "fsize", 0, "RLIMIT_FSIZE `bytes`")
	fl.Int64Var(&o.nproc, "nproc", 0, "RLIMIT_NPROC")
	fl.BoolVar(&o.noSockets, "nosockets", false, "deny socket() and io_uring with seccomp")
	fl.BoolVar(&o.supervise, "supervise", false, "kill what the job leaves behind")
	fl.BoolVar(&o.probe, "probe", false, "apply everything, then say so")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	argv := fl.Args()
	if len(argv) == 0 && !o.probe {
		return fail("usage: __farm-sandbox [OPTIONS] -- TOOL ARGS...")
	}
	if o.supervise {
		opts := args[:len(args)-len(argv)] // up to the "--" before TOOL
		rest := slices.DeleteFunc(slices.Clone(opts), func(a string) bool {
			return a == "-supervise" || a == "--supervise"
		})
		return superviseJob(append(rest, argv...))
	}
	if !o.probe && !filepath.IsAbs(argv[0]) {
		return fail("%s: not an absolute path", argv[0])
	}
	runtime.LockOSThread() // never unlocked: this thread execs
	if err := setNoNewPrivs(); err != nil {
		return fail("%v", err)
	}
	closeOnExec() // offcc's descriptor (selfExe), and any other
	if o.landlock {
		if err := o.confine(argv); err != nil {
			return fail("%v", err)
		}
	}
	if o.noSockets {
		if err := denySockets(); err != nil {
			return fail("%v", err)
		}
	}
	if o.probe {
		if err := setLimits(o.limits()); err != nil {
			return fail("%v", err)
		}
		fmt.Printf("offcc-sandbox-ok landlock-abi-%d\n", SandboxABI())
		return 0
	}
	err := execWithLimits(argv[0], argv, os.Environ(), o.limits())
	return fail("cannot run %s: %v", argv[0], err)
}

// sandboxInnerOptions are SandboxMain's options.
type sandboxInnerOptions struct {
	landlock, noSockets   bool
	supervise, probe      bool
	reads, execs          []string
	write, proc           string
	cpu, as, fsize, nproc int64
}

// confine applies the Landlock ruleset of the options to the calling
// thread, for running argv.
func (o *sandboxInnerOptions) confine(argv []string) error {
	abi := SandboxABI()
	if abi == 0 {
		return errors.New("Landlock is not available")
	}
	read := uint64(accessReadFile | accessReadDir)
	write := writeAccess(abi)
	handled := read | accessExecute | write
	if abi >= 5 {
		handled |= accessIoctlDev
	}
	l, err := newLandlock(abi, handled, true)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			syscall.Close(l.fd)
		}
	}()
	for _, p := range o.reads {
		if err := l.allow(p, read); err != nil {
			return err
		}
	}
	execs := o.execs
	if len(argv) > 0 {
		execs = append(execs, argv[0])
	}
	for _, p := range execs {
		if err := l.allow(p, accessReadFile|accessExecute); err != nil {
			return err
		}
	}
	if o.write != "" {
		if err := l.allow(o.write, read|write); err != nil {
			return err
		}
	}
	switch o.proc {
	case "all":
		if err := l.allow("/proc", read); err != nil {
			return err
		}
	case "self":
		// This process's own directory: the tool's, after exec.
		if err := l.allow(fmt.Sprintf("/proc/%d", os.Getpid()), read); err != nil {
			return err
		}
	}
	for _, d := range []string{"/dev/zero", "/dev/random", "/dev/urandom"} {
		if _, err := os.Stat(d); err == nil {
			if err := l.allow(d, accessReadFile); err != nil {
				return err
			}
		}
	}
	if err := l.allow(os.DevNull, accessReadFile|accessWriteFile|accessTruncate); err != nil {
		return err
	}
	ok = true
	return l.restrict()
}

// denySockets installs a seccomp filter on the calling thread (which must
// then execute the tool) that fails socket(2) with EACCES and io_uring_setup
// (whose requests seccomp would not see) with ENOSYS, as any system call of
// another ABI (i386, x32). The tools open no socket; the filter closes
// what the other layers leave open: Landlock's TCP rights do not cover
// MPTCP, nor UDP or Unix sockets, and vsock is not network-namespaced.
// On architectures other than amd64 and arm64 it does nothing.
func denySockets() error {
	var arch, socket uint32
	const ioUringSetup = 425
	switch runtime.GOARCH {
	case "amd64":
		arch, socket = 0xc000003e, 41 // AUDIT_ARCH_X86_64
	case "arm64":
		arch, socket = 0xc00000b7, 198 // AUDIT_ARCH_AARCH64
	default:
		return nil
	}
	type sockFilter struct {
		code   uint16
		jt, jf uint8
		k      uint32
	}
	const (
		ldAbs    = 0x20 // BPF_LD|BPF_W|BPF_ABS
		jeq      = 0x15 // BPF_JMP|BPF_JEQ|BPF_K
		jge      = 0x35 // BPF_JMP|BPF_JGE|BPF_K
		ret      = 0x06 // BPF_RET|BPF_K
		retAllow = 0x7fff0000
		retErrno = 0x00050000
	)
	prog := []sockFilter{
		{ldAbs, 0, 0, 4},           // 0: seccomp_data.arch
		{jeq, 0, 6, arch},          // 1: another ABI: 8
		{ldAbs, 0, 0, 0},           // 2: seccomp_data.nr
		{jge, 4, 0, 0x40000000},    // 3: x32: 8
		{jeq, 2, 0, socket},        // 4: 7
		{jeq, 2, 0, ioUringSetup},  // 5: 8
		{ret, 0, 0, retAllow},      // 6
		{ret, 0, 0, retErrno | 13}, // 7: EACCES
		{ret, 0, 0, retErrno | 38}, // 8: ENOSYS
	}
	fprog := struct {
		len    uint16
		filter *sockFilter
	}{uint16(len(prog)), &prog[0]}
	const prSetSeccomp, seccompModeFilter = 22, 2
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetSeccomp, seccompModeFilter, uintptr(unsafe.Pointer(&fprog)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_SECCOMP): %v", errno)
	}
	runtime.KeepAlive(prog)
	return nil
}

// closeOnExec marks every descriptor but stdin, stdout and stderr
// close-on-exec, so that the tool inherits none of them.
func closeOnExec() {
	const sysCloseRange, closeRangeCloexec = 436, 4 // Linux 5.11
	if _, _, errno := syscall.RawSyscall(sysCloseRange, 3, ^uintptr(0)>>1, closeRangeCloexec); errno == 0 {
		return
	}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// sandboxRlimit is one resource limit to set.
type sandboxRlimit struct {
	resource int
	cur, max uint64
}

// limits returns the resource limits of the options (RLIMIT_CORE 0 always).
func (o *sandboxInnerOptions) limits() []sandboxRlimit {
	l := []sandboxRlimit{{resource: syscall.RLIMIT_CORE}}
	if o.cpu > 0 {
		// SIGXCPU at the limit, SIGKILL a second later.
		l = append(l, sandboxRlimit{syscall.RLIMIT_CPU, uint64(o.cpu), uint64(o.cpu) + 1})
	}
	if o.as > 0 {
		l = append(l, sandboxRlimit{syscall.RLIMIT_AS, uint64(o.as), uint64(o.as)})
	}
	if o.fsize > 0 {
		l = append(l, sandboxRlimit{syscall.RLIMIT_FSIZE, uint64(o.fsize), uint64(o.fsize)})
	}
	if o.nproc > 0 {
		const rlimitNproc = 6 // RLIMIT_NPROC but on alpha, mips and sparc
		l = append(l, sandboxRlimit{rlimitNproc, uint64(o.nproc), uint64(o.nproc)})
	}
	return l
}

// setLimits sets limits on this process (raw prlimit64: none of them may
// change what the Go runtime has set up).
func setLimits(limits []sandboxRlimit) error {
	for i := range limits {
		r := &limits[i]
		lim := [2]uint64{r.cur, r.max}
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, uintptr(r.resource), uintptr(unsafe.Pointer(&lim)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("setrlimit(%d): %v", r.resource, errno)
		}
	}
	return nil
}

// execWithLimits sets limits and executes path. Everything that allocates
// happens first: RLIMIT_AS may be below what the Go runtime has reserved,
// so that no allocation may come between the limits and the exec.
func execWithLimits(path string, argv, envv []string, limits []sandboxRlimit) error {
	pathp, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envvp, err := syscall.SlicePtrFromStrings(envv)
	if err != nil {
		return err
	}
	if err := setLimits(limits); err != nil {
		return err
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(pathp)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envvp[0])))
	runtime.KeepAlive(pathp)
	runtime.KeepAlive(argvp)
	runtime.KeepAlive(envvp)
	return errno
}

// superviseJob runs "offcc __farm-sandbox args" as its child and returns its
// exit status (128+N for signal N), having killed every process the child
// left behind: as a child subreaper, the supervisor becomes the parent of
// the job's orphans, daemons included, so that they are all its children
// once the job ends. SIGTERM, SIGINT or SIGHUP kill the job the same way.
func superviseJob(args []string) int {
	runtime.LockOSThread() // the child's parent-death signal follows this thread
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0); errno != 0 {
		fmt.Fprintf(os.Stderr, "offcc: error: __farm-sandbox: prctl(PR_SET_CHILD_SUBREAPER): %v\n", errno)
		return 2
	}
	syscall.RawSyscall6(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(syscall.SIGKILL), 0, 0, 0, 0)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// This very executable, which the slot's uid may not reach by its path.
	// Worker side: the worker's own executor starts its jobs here, not
	// through a client build's actions.Shell (deliberately).
	cmd := exec.Command("/proc/self/exe", append([]string{"__farm-sandbox"}, args...)...)
	cmd.Args[0] = "offcc"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "offcc: error: __farm-sandbox: %v\n", err)
		return 2
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	code := 0
	select {
	case <-done:
	case sig := <-sigs:
		cmd.Process.Kill()
		<-done
		code = 128 + int(sig.(syscall.Signal))
	}
	if code == 0 {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = cmd.ProcessState.ExitCode()
		}
	}
	killOrphans()
	return code
}

// killOrphans kills and reaps this process's children until it has none:
// a subreaper's children include every orphan of its descendants.
func killOrphans() {
	me := os.Getpid()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR || pid > 0:
			continue
		case err != nil: // ECHILD: none left
			return
		}
		for _, c := range childrenOf(me) {
			syscall.Kill(c, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond)
	}
}

// childrenOf returns the processes whose parent is pid.
func childrenOf(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var kids []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold anything but ')'s end.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil && ppid == pid {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// restrictWrites applies the older form's ruleset to the calling thread,
// which must then execute the tool: writes beneath dir and to /dev/null
// only.
func restrictWrites(dir string) error {
	abi := SandboxABI()
	if abi == 0 {
		return errors.New("Landlock is not available")
	}
	runtime.LockOSThread() // never unlocked: this thread execs
	l, err := newLandlock(abi, writeAccess(abi), false)
	if err != nil {
		return err
	}
	if err := l.allow(dir, l.handled); err != nil {
		syscall.Close(l.fd)
		return err
	}
	if err := l.allow(os.DevNull, accessWriteFile|accessTruncate); err != nil {
		syscall.Close(l.fd)
		return err
	}
	return l.restrict()
}
