package farm

import (
	"os"
	"path/filepath"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/ompinfo"
	"github.com/offcc/offcc/options"
)

// OpenMP front ends on workers.
//
// clang names an OpenMP kernel (and its offload entry) after the file of
// its target region: __omp_offloading_<dev>_<file>_<function>_l<line>,
// with the file's device and inode numbers where the name clang knows it
// by exists, else (clang 21 and later) with a hash of that name and the
// device 0xdeadf17e. The host front end and each device compile must
// agree on every name: a device image whose kernel the host does not name
// alike is silently never launched.
//
// offcc's driver runs every OpenMP front end in an empty directory
// (Action.Dir) with "-working-directory W" just before its final "-x LANG
// INPUT", and names the sources and include directories relative to W:
// clang finds the files through W, while their relative names exist no
// more from the process's directory, so the kernel names are hashes of
// the names alone. A worker runs clang in its job's private directory
// with the same -working-directory and a VFS overlay that shows the
// client's absolute paths only: the relative names exist there no more
// either, and the worker's kernel names are the client's.
//
// A target region in a file named by an absolute path (a system header,
// a header of an include directory outside W) keeps an inode name: on a
// worker the inode of its copy, another name. The client does not use
// such a result (the action runs locally), and sends no device compile
// whose host IR holds such a name (the local host's names are inodes
// only the client's files have).

// stableWorkDir returns W when a's command runs, in a directory of its
// own (a.Dir), with offcc's "-working-directory W" just before its final
// "-x LANG INPUT" and W absolute and clean; else "".
func stableWorkDir(a *actions.Action) string {
	argv := a.Command
	n := len(argv)
	if a.Dir == "" || n < 7 || argv[n-5] != "-working-directory" || argv[n-3] != "-x" {
		return ""
	}
	w := argv[n-4]
	if !filepath.IsAbs(w) || filepath.Clean(w) != w {
		return ""
	}
	return w
}

// isOpenMPFrontEnd reports whether a is an OpenMP compile from source
// whose kernel names clang derives from its files: the host front end or
// a device compile, clang -cc1.
func isOpenMPFrontEnd(a *actions.Action) bool {
	return a.Offload == actions.OpenMP && (a.Kind == actions.HostFrontend || a.Kind == actions.DeviceCompile) &&
		len(a.Command) > 1 && a.Command[1] == "-cc1"
}

// hostIRFile returns the host IR an OpenMP device compile's cc1 command
// reads (-fopenmp-host-ir-file-path), read with cc1, its clang's option
// table, or "".
func hostIRFile(cc1 *options.Table, argv []string) string {
	if len(argv) < 2 {
		return ""
	}
	args, err := cc1.Parse(argv[2:])
	if err != nil {
		return ""
	}
	for _, a := range args {
		if !a.IsUnknown() && a.Option.ID == "fopenmp_host_ir_file_path" {
			return a.Value()
		}
	}
	return ""
}

// memoNamed is inodeNamed's verdict on a file and the stat it was
// computed under.
type memoNamed struct {
	size  int64
	mtime time.Time
	named bool
}

// inodeNamed reports whether the file at path (relative to offcc's
// directory) holds an OpenMP kernel name made from a file's inode (see
// ompinfo.InodeNamed), memoised while its size and modification time
// stay the same: the device compiles of one host IR read it once.
func (c *Client) inodeNamed(path string) (bool, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.cwd, path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	if m, ok := c.named.Load(path); ok {
		if mn := m.(memoNamed); mn.size == fi.Size() && mn.mtime.Equal(fi.ModTime()) {
			return mn.named, nil
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	named := ompinfo.InodeNamed(data)
	if int64(len(data)) == fi.Size() {
		c.named.Store(path, memoNamed{size: fi.Size(), mtime: fi.ModTime(), named: named})
	}
	return named, nil
}

// inodeNamedOutput returns the first of the outputs of a remote OpenMP
// front end (targets, absolute, fetched into files; its dependency file
// aside) that holds an inode-named kernel, or "". A file it cannot read
// counts as one.
func (c *Client) inodeNamedOutput(a *actions.Action, targets, files []string) string {
	dep := a.DepFile
	if dep != "" && !filepath.IsAbs(dep) {
		dep = filepath.Join(c.cwd, dep)
	}
	for i, p := range targets {
		if p == dep {
			continue
		}
		data, err := os.ReadFile(files[i])
		if err != nil || ompinfo.InodeNamed(data) {
			return p
		}
	}
	return ""
}
