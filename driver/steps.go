package driver

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/linkerwrapper"
	"github.com/offcc/offcc/objfile"
	"github.com/offcc/offcc/packager"
)

// ToolSteps runs offcc's own steps with the packager, objfile and
// linkerwrapper packages.
type ToolSteps struct {
	// Prog is the program name for messages ("offcc").
	Prog string
	// Clang is the clang driver the link stage runs.
	Clang string
	// LLVMDirExplicit is printed with "offcc linker-wrapper" when the user
	// chose the LLVM directory, so printed commands use the same one.
	LLVMDirExplicit string
	// Jobs and Jobserver bound the link stage's device links.
	Jobs      int
	Jobserver *actions.Jobserver
}

// statusError is a failure whose diagnostics were already printed.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// ExitCode returns the status to exit with.
func (e *statusError) ExitCode() int { return e.code }

// Package runs "offcc offload-binary" in-process.
func (s *ToolSteps) Package(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if rc := packager.Main(s.Prog, args, stdout, stderr); rc != 0 {
		return &statusError{rc}
	}
	return nil
}

// Link runs "offcc linker-wrapper" in-process.
func (s *ToolSteps) Link(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := linkerwrapper.Config{
		Clang: s.Clang, Jobs: s.Jobs, Jobserver: s.Jobserver,
		Stdout: stdout, Stderr: stderr,
	}
	if rc := linkerwrapper.Main(ctx, cfg, args); rc != 0 {
		return &statusError{rc}
	}
	return nil
}

// LinkArgsPrefix returns --llvm-dir=DIR when the user chose the directory.
func (s *ToolSteps) LinkArgsPrefix() []string {
	if s.LLVMDirExplicit != "" {
		return []string{"--llvm-dir=" + s.LLVMDirExplicit}
	}
	return nil
}

// Embed runs "offcc offload-embed" in-process.
func (s *ToolSteps) Embed(_ context.Context, out, hostObj string, blobs []string) error {
	return EmbedOffload(out, hostObj, blobs)
}

// EmbedOffload writes out: the ELF object hostObj with the concatenated
// offload binaries in blobs added as its .llvm.offloading section
// (SHT_LLVM_OFFLOADING, SHF_EXCLUDE, alignment 8), as clang's
// -fembed-offload-object does. out is replaced atomically.
func EmbedOffload(out, hostObj string, blobs []string) error {
	obj, err := os.ReadFile(hostObj)
	if err != nil {
		return err
	}
	var section []byte
	for i, b := range blobs {
		data, err := os.ReadFile(b)
		if err != nil {
			return err
		}
		if !packager.IsOffloadBinary(data) {
			return fmt.Errorf("%s: not an offload binary", b)
		}
		if i == 0 {
			section = data // the usual case: one blob, no copy
			continue
		}
		// Each blob is 8-aligned in size, so concatenation keeps every
		// blob 8-aligned, as in a section clang writes.
		section = append(section, data...)
	}
	f, err := atomicfile.Create(out)
	if err != nil {
		return err
	}
	err = objfile.WriteWithSection(f, obj, objfile.NewSection{
		Name:  ".llvm.offloading",
		Type:  objfile.SHTLLVMOffloading,
		Flags: objfile.SHFExclude,
		Align: 8,
		Data:  section,
	})
	if err != nil {
		f.Abort()
		return fmt.Errorf("%s: %v", hostObj, err)
	}
	// Objects get 0666 less the umask, as compilers create them.
	return f.Commit(0o666)
}
