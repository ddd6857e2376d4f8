package actions

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
)

// noSpaceWords are what tools print when a write finds the disk full:
// strerror(ENOSPC), and LLVM's raw_fd_ostream error, which says no more
// ("fatal error: error in backend: IO failure on output stream").
var noSpaceWords = [][]byte{[]byte("No space left on device"), []byte("IO failure on output stream")}

// stderrWatch passes a command's standard error on, with the hidden
// temporaries that stand for the user's outputs (.heavy.o.offcc-123)
// named as the outputs (heavy.o), and notes whether the command said a
// disk was full.
type stderrWatch struct {
	w io.Writer
	// names maps each hidden temporary to the output it stands for.
	names map[string]string
	// full is set when the command said a disk was full.
	full bool
}

// newStderrWatch returns a stderrWatch writing to w; renames are the
// command's hidden temporaries, each with the output it becomes.
func newStderrWatch(w io.Writer, temps map[string]string) *stderrWatch {
	return &stderrWatch{w: w, names: temps}
}

func (s *stderrWatch) Write(p []byte) (int, error) {
	for _, w := range noSpaceWords {
		if bytes.Contains(p, w) {
			s.full = true
		}
	}
	out := p
	for tmp, name := range s.names {
		if bytes.Contains(out, []byte(tmp)) {
			out = bytes.ReplaceAll(out, []byte(tmp), []byte(name))
		}
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// reportNoSpace adds, after a's command failed, one line saying which
// output found its disk full, when the command said so or the file
// system of one of a's outputs has no free blocks left: "no space left on
// device in TMPDIR (/tmp): writing the device-compile output of heavy.c"
// for a temporary of the build, "no space left on device: writing heavy.o"
// for the user's own output. It prints nothing otherwise.
func (sh *Shell) reportNoSpace(a *Action, said bool) {
	out, free := "", uint64(0)
	for _, f := range a.Outputs {
		if f.IsStdin() || strings.HasPrefix(f.Path, "/dev/") {
			continue
		}
		avail, ok := freeBytes(filepath.Dir(absPath(f.Path)))
		if !ok {
			continue
		}
		if out == "" || avail < free {
			out, free = f.Path, avail
		}
	}
	if out == "" || !said && free > 0 {
		return
	}
	sh.Printf("%s\n", noSpaceMessage(a, out, sh.opt.TempDir))
}

// noSpaceMessage is reportNoSpace's line for a's output out; tempDir is
// the build's private directory (in TMPDIR).
func noSpaceMessage(a *Action, out, tempDir string) string {
	if tempDir != "" && strings.HasPrefix(out, tempDir+string(filepath.Separator)) {
		return fmt.Sprintf("offcc: error: no space left on device in TMPDIR (%s): writing %s", filepath.Dir(tempDir), role(a))
	}
	return fmt.Sprintf("offcc: error: no space left on device: writing %s", out)
}

// role names a's output as the user knows the step: "the device-compile
// x86_64-pc-linux-gnu output of heavy.c".
func role(a *Action) string {
	s := "the " + a.Kind.String()
	if a.Device {
		if a.Target.Arch != "" {
			s += " " + a.Target.Arch
		} else if a.Target.Triple != "" {
			s += " " + a.Target.Triple
		}
	}
	s += " output"
	for _, f := range a.Inputs {
		if !f.IsStdin() && f.Producer() == nil {
			return s + " of " + filepath.Base(f.Path)
		}
	}
	return s
}

// freeBytes returns the bytes an unprivileged user may still write on the
// file system of dir.
func freeBytes(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}
