package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/offcc/offcc/internal/atomicfile"
)

// ShellOptions configure a build's Shell.
type ShellOptions struct {
	// Stdout and Stderr receive the build's output; nil means os.Stdout
	// and os.Stderr.
	Stdout, Stderr io.Writer
	// DryRun is -###: actions are printed in clang's -### quoting, and
	// nothing runs or is written.
	DryRun bool
	// Verbose is -v: each command is printed in clang's -v quoting just
	// before it runs.
	Verbose bool
	// TempDir is the build's private temporary directory. Files outside it
	// that a command writes with -o are written under a temporary name
	// beside them and renamed when the command succeeds.
	TempDir string
	// Stdin returns the build's standard input, for commands that read
	// "-"; it is called at most once. nil means no standard input.
	Stdin func() ([]byte, error)
	// Env is extra KEY=VALUE environment for every command (TMPDIR=...).
	Env []string
	// ArgLimit is the most bytes of arguments and environment a command
	// is started with; a longer command line of a tool that reads
	// response files is passed in one (in TempDir). 0 means ArgLimit().
	ArgLimit int
	// BaseEnv, when not nil, is the environment commands start from (Env
	// is added to it); nil means offcc's own (os.Environ()).
	BaseEnv []string
}

// Shell performs a build's side effects: it runs commands, creates,
// renames and removes files, and prints messages, honouring -### and -v.
// The executor hands each action its own Shell, whose output is collected
// and printed whole when the action ends.
type Shell struct {
	opt    *ShellOptions
	shared *shellShared
	// out and err are this action's output (the build's own writers for
	// the root Shell).
	out, err io.Writer
}

type shellShared struct {
	mu        sync.Mutex // serialises writes to the build's Stdout and Stderr
	stdinOnce sync.Once
	stdin     []byte
	stdinErr  error
}

// NewShell returns the Shell of a build.
func NewShell(opt ShellOptions) *Shell {
	if opt.Stdout == nil {
		opt.Stdout = os.Stdout
	}
	if opt.Stderr == nil {
		opt.Stderr = os.Stderr
	}
	return &Shell{opt: &opt, shared: &shellShared{}, out: opt.Stdout, err: opt.Stderr}
}

// DryRun reports whether the Shell prints actions instead of running them.
func (sh *Shell) DryRun() bool { return sh.opt.DryRun }

// Verbose reports whether commands are printed as they run.
func (sh *Shell) Verbose() bool { return sh.opt.Verbose }

// TempDir returns the build's private temporary directory.
func (sh *Shell) TempDir() string { return sh.opt.TempDir }

// Stdout returns the writer for the current action's standard output.
func (sh *Shell) Stdout() io.Writer { return sh.out }

// Stderr returns the writer for the current action's messages.
func (sh *Shell) Stderr() io.Writer { return sh.err }

// Printf writes a message to the current action's standard error.
func (sh *Shell) Printf(format string, args ...any) {
	fmt.Fprintf(sh.err, format, args...)
}

// Print writes text to the build's standard error at once, under the
// output lock, whatever action is running.
func (sh *Shell) Print(text string) {
	sh.shared.mu.Lock()
	defer sh.shared.mu.Unlock()
	io.WriteString(sh.opt.Stderr, text)
}

// ShowCommand prints argv as the next command to run: under -v in clang's
// -v quoting, under -### in its -### quoting; otherwise nothing.
func (sh *Shell) ShowCommand(argv []string) {
	switch {
	case len(argv) == 0:
	case sh.opt.DryRun:
		sh.Print(FormatHash(argv) + "\n")
	case sh.opt.Verbose:
		sh.Print(FormatVerbose(argv) + "\n")
	}
}

// forAction returns a Shell whose output goes to the given writers.
func (sh *Shell) forAction(out, err io.Writer) *Shell {
	return &Shell{opt: sh.opt, shared: sh.shared, out: out, err: err}
}

// flush writes an action's collected output to the build's writers.
func (sh *Shell) flush(out, err []byte) {
	if len(out) == 0 && len(err) == 0 {
		return
	}
	sh.shared.mu.Lock()
	defer sh.shared.mu.Unlock()
	sh.opt.Stdout.Write(out)
	sh.opt.Stderr.Write(err)
}

// OutputError is a file the build cannot create, reported as clang does:
// "unable to open output file 'PATH': 'REASON'".
type OutputError struct {
	Path string
	Err  error
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("unable to open output file '%s': '%s'", e.Path, strerror(e.Err))
}

// Unwrap returns the underlying error.
func (e *OutputError) Unwrap() error { return e.Err }

// strerror spells an error's cause as C's strerror does ("No such file or
// directory"), without Go's "open NAME:" prefix.
func strerror(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	s := err.Error()
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// WriteFile writes data to path atomically (see WriteTo).
func (sh *Shell) WriteFile(path string, data []byte, perm os.FileMode) error {
	return sh.WriteTo(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteTo writes path with the function write: the data goes to a
// temporary file beside path, renamed to path (mode perm less the umask)
// when write succeeds and removed otherwise. A file that cannot be created
// is an *OutputError. In a dry run nothing is written and WriteTo fails.
func (sh *Shell) WriteTo(path string, perm os.FileMode, write func(io.Writer) error) error {
	if sh.opt.DryRun {
		return errors.New("actions: a file written in a dry run")
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return &OutputError{Path: path, Err: err}
	}
	if err := write(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit(perm)
}

// Remove removes path; a missing file is not an error.
func (sh *Shell) Remove(path string) error {
	if sh.opt.DryRun {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readStdin returns the build's standard input, read once.
func (sh *Shell) readStdin() ([]byte, error) {
	sh.shared.stdinOnce.Do(func() {
		if sh.opt.Stdin != nil {
			sh.shared.stdin, sh.shared.stdinErr = sh.opt.Stdin()
		}
	})
	return sh.shared.stdin, sh.shared.stdinErr
}

// isPublished reports whether a command's output path is a user-visible
// file, written under a temporary name and renamed on success.
func (sh *Shell) isPublished(path string) bool {
	if path == "-" || strings.HasPrefix(path, "/dev/") {
		return false
	}
	if d := sh.opt.TempDir; d != "" && strings.HasPrefix(path, d+string(filepath.Separator)) {
		return false
	}
	return true
}

// forDiagnostics returns the Shell a's command prints through: one whose
// standard error renames files by a.FileNames when that is set (see
// FinishDepFiles), and a function that flushes it.
func (sh *Shell) forDiagnostics(a *Action) (*Shell, func()) {
	if a.FileNames == nil {
		return sh, func() {}
	}
	dw := &diagnosticWriter{names: a.FileNames, w: sh.err}
	return sh.forAction(sh.out, dw), func() { dw.Close() }
}

// FinishDepFiles rewrites the dependency files a's command wrote, after it
// succeeded, when a.FileNames is set: their file names are renamed by it,
// to the names the user's command line gives the files.
func FinishDepFiles(a *Action) error {
	if a.FileNames == nil {
		return nil
	}
	argv := a.Command
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == "-dependency-file" && argv[i+1] != "-" && !strings.HasPrefix(argv[i+1], "/dev/") {
			if err := rewriteDepFile(argv[i+1], argv, a.FileNames); err != nil {
				return err
			}
		}
	}
	return nil
}

// absPath returns path made absolute against offcc's working directory.
func absPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return abs
}

// killGrace is how long a cancelled child's process group has between
// SIGTERM and SIGKILL.
var killGrace = 2 * time.Second

// runCommand runs a's external command. Outputs named by "-o PATH" that lie
// outside the temporary directory are written under a temporary name
// beside PATH and renamed when the command succeeds; on failure nothing
// appears at PATH. mon, when not nil, is told the process's pid as it
// starts and keeps what it used (see procMonitor).
func (sh *Shell) runCommand(ctx context.Context, a *Action, mon *procMonitor) error {
	argv := append([]string(nil), a.Command...)
	type rename struct{ from, to string }
	var renames []rename
	defer func() {
		for _, r := range renames {
			os.Remove(r.from) // a no-op after a successful rename
		}
	}()
	for _, f := range a.Outputs {
		if !sh.isPublished(f.Path) {
			continue
		}
		for i := 1; i+1 < len(argv); i++ {
			// (A command run in a directory of its own names its
			// outputs by absolute paths.)
			if argv[i] != "-o" || argv[i+1] != f.Path && (a.Dir == "" || argv[i+1] != absPath(f.Path)) {
				continue
			}
			out := argv[i+1]
			tmp, err := atomicfile.TempName(out)
			if err != nil {
				return &OutputError{Path: f.Path, Err: err}
			}
			argv[i+1] = tmp
			renames = append(renames, rename{tmp, out})
			break
		}
	}
	var stdin io.Reader
	for _, f := range a.Inputs {
		if f.IsStdin() {
			data, err := sh.readStdin()
			if err != nil {
				return fmt.Errorf("cannot read standard input: %v", err)
			}
			stdin = bytes.NewReader(data)
		}
	}
	path := argv[0]
	if a.Argv0 != "" {
		argv[0] = a.Argv0
	}
	if a.Dir != "" {
		if err := os.MkdirAll(a.Dir, 0o700); err != nil {
			return &StartError{Path: path, Err: err}
		}
	}
	temps := map[string]string{}
	for _, r := range renames {
		temps[r.from] = r.to
	}
	watch := newStderrWatch(sh.err, temps) // see nospace.go
	if err := sh.exec(ctx, path, argv, a.Env, stdin, a.Dir, sh.out, watch, mon); err != nil {
		sh.reportNoSpace(a, watch.full)
		return err
	}
	for _, r := range renames {
		if err := os.Rename(r.from, r.to); err != nil {
			return &OutputError{Path: r.to, Err: err}
		}
	}
	return nil
}

// exec runs the file path with the argument vector argv (argv[0]
// included) in its own process group, in directory dir ("" for offcc's),
// with the writers stdout and stderr; mon, when not nil, follows the
// process (its pid, its peak memory, the signal that killed it).
// When ctx is done the group gets SIGTERM, then SIGKILL after killGrace.
// This is the one place a client-side child process of offcc starts.
func (sh *Shell) exec(ctx context.Context, path string, argv, env []string, stdin io.Reader, dir string, stdout, stderr io.Writer, mon *procMonitor) error {
	cmd := exec.Command(path)
	cmd.Stdin = stdin // nil reads /dev/null
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Dir = dir
	switch {
	case sh.opt.BaseEnv != nil:
		cmd.Env = append(append(slices.Clip(sh.opt.BaseEnv), sh.opt.Env...), env...)
	case len(env) > 0 || len(sh.opt.Env) > 0:
		cmd.Env = append(append(os.Environ(), sh.opt.Env...), env...)
	}
	fullEnv := cmd.Env
	if fullEnv == nil {
		fullEnv = os.Environ()
	}
	argv, cleanup, err := ResponseFileCommand(path, argv, fullEnv, sh.opt.TempDir, sh.opt.ArgLimit)
	if err != nil {
		return &StartError{Path: path, Err: &ResponseFileError{Err: err}}
	}
	defer cleanup()
	cmd.Args = argv
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err = cmd.Start(); err != nil {
		return &StartError{Path: path, Err: err}
	}
	pgid := cmd.Process.Pid
	mon.start(pgid)
	exited := make(chan struct{})
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		select {
		case <-exited:
			return
		case <-ctx.Done():
		}
		syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(killGrace)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			// The group still has a member holding our pipes (Wait has not
			// returned), so pgid cannot have been reused.
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}()
	err = cmd.Wait()
	mon.exited(cmd.ProcessState)
	close(exited)
	<-killerDone
	return err
}

// Cmd is a child process that offcc runs for its own purposes rather
// than as an action of a plan: a query whose output it reads (clang -###,
// llvm-dis) or a step inside an in-process action (spirv-link, the build
// farm's dependency scan). Shell.Run runs it as it runs actions' commands.
type Cmd struct {
	// Argv is the command line; Argv[0] is the file run.
	Argv []string
	// Argv0, when set, is the name the program is run under (argv[0]).
	Argv0 string
	// Env is KEY=VALUE environment added after the Shell's.
	Env []string
	// Dir is the directory the command runs in; "" is offcc's.
	Dir string
	// Stdin is the command's standard input; nil reads /dev/null.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output; nil discards it.
	Stdout, Stderr io.Writer
	// Quiet leaves the command out of -v's listing: for offcc's own
	// queries, which clang's -v does not list either (clang -###).
	Quiet bool
}

// Run runs c, printing it first under -v (unless c.Quiet), in its own
// process group: when ctx is done the group gets SIGTERM, then SIGKILL
// (as an action's command). A command line too long for execve goes in
// a response file (in the Shell's TempDir) for tools that read one. Run
// runs c in a dry run too: a caller runs there only what it must (the
// queries a plan needs). A command that cannot be started is a
// *StartError; one that fails is an *exec.ExitError.
func (sh *Shell) Run(ctx context.Context, c *Cmd) error {
	if len(c.Argv) == 0 {
		return errors.New("actions: Run of an empty command")
	}
	argv := slices.Clone(c.Argv)
	path := argv[0]
	if c.Argv0 != "" {
		argv[0] = c.Argv0
	}
	if sh.opt.Verbose && !sh.opt.DryRun && !c.Quiet {
		sh.Print(FormatVerbose(c.Argv) + "\n")
	}
	stdout, stderr := c.Stdout, c.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return sh.exec(ctx, path, argv, c.Env, c.Stdin, c.Dir, stdout, stderr, nil)
}

// Output runs argv as Run does and returns its standard output; its
// standard error is in the *exec.ExitError of a failure (as
// exec.Cmd.Output keeps it), and discarded otherwise.
func (sh *Shell) Output(ctx context.Context, argv ...string) ([]byte, error) {
	var out, errOut bytes.Buffer
	err := sh.Run(ctx, &Cmd{Argv: argv, Stdout: &out, Stderr: &errOut})
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ee.Stderr = errOut.Bytes()
	}
	return out.Bytes(), err
}

// ResponseFileError is a response file that could not be written for a
// command line too long to start (it is a StartError's Err).
type ResponseFileError struct{ Err error }

func (e *ResponseFileError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ResponseFileError) Unwrap() error { return e.Err }

// StartError is a command that could not be started.
type StartError struct {
	Path string
	Err  error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("unable to execute command: Executable \"%s\" %s", e.Path, startReason(e.Err))
}

// Unwrap returns the underlying error.
func (e *StartError) Unwrap() error { return e.Err }

func startReason(err error) string {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
		return "doesn't exist!"
	}
	return "cannot be run: " + strerror(err)
}
