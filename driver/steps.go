package driver

import (
	"io"
	"os"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/bundler"
	"github.com/offcc/offcc/linkerwrapper"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/toolchain"
)

// steps are offcc's in-process build steps. Each calls a typed API and
// writes through the build's Shell.
type steps struct {
	// clang is the clang driver the link stage runs for device links and
	// the registration module.
	clang string
	// release is the profile of that clang's release (nil: the newest
	// offcc knows): the bundler writes its bundle IDs, and the link stage
	// reads and links as its clang-linker-wrapper.
	release *toolchain.Profile
}

// pack writes the offload binary out from device image files, as
// llvm-offload-binary does.
func (s *steps) pack(sh *actions.Shell, out string, images []packager.FileImage) error {
	return sh.WriteTo(out, 0o666, func(w io.Writer) error { return packager.WriteFiles(w, images) })
}

// embed writes out: the host object with the offload binaries added as its
// .llvm.offloading section. Objects get 0666 less the umask, as compilers
// create them.
func (s *steps) embed(sh *actions.Shell, out, hostObj string, blobs []string) error {
	return sh.WriteTo(out, 0o666, func(w io.Writer) error { return packager.EmbedFiles(w, hostObj, blobs) })
}

// link plans the link stage of a parsed clang-linker-wrapper command line
// once its inputs exist. llvmWrapper is clang's own clang-linker-wrapper, which
// links what offcc's link stage cannot read (LTO bitcode).
func (s *steps) link(sh *actions.Shell, llvmWrapper string, cl *linkerwrapper.CommandLine, out *actions.Artifact) ([]*actions.Action, error) {
	return linkerwrapper.Plan(linkerwrapper.Config{
		Clang:         s.clang,
		LinkerWrapper: llvmWrapper,
		Release:       s.release,
		TempDir:       sh.TempDir(),
		Verbose:       sh.Verbose(),
	}, cl, out, sh.Stderr())
}

// bundle runs clang-offload-bundler's command line args with offcc's
// bundler as the clang's release runs it (the HIP fat binary of an
// old-driver compile). The output is a temporary of the build's.
func (s *steps) bundle(sh *actions.Shell, args []string) error {
	release := s.release
	if release == nil {
		release = toolchain.Preferred()
	}
	if rc := bundler.MainRelease(release.Major, "offcc offload-bundler", args, os.Getenv, sh.Stdout(), sh.Stderr()); rc != 0 {
		return &bundleError{code: rc}
	}
	return nil
}

// embedFatbin writes out: the HIP (hip true) or CUDA host object hostObj,
// compiled with an empty fat binary, with fatbin's bytes in its fat binary
// section. An *objfile.ReplaceError says the object cannot be laid out
// that way.
func (s *steps) embedFatbin(sh *actions.Shell, out, hostObj, fatbin string, hip bool) error {
	return sh.WriteTo(out, 0o666, func(w io.Writer) error { return packager.EmbedFatbinFile(w, hostObj, fatbin, hip) })
}
