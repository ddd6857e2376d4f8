package driver

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/offcc/offcc/options"
)

// The base directory (OFFCC_BASE_DIR, base_dir in offcc.conf), with the
// meaning of ccache's base_dir: before clang sees the command line, every
// absolute path under the base directory that names an input or an option's
// file or directory is rewritten relative to the working directory. Every
// later step (clang's plan, CUDA and HIP CUIDs, OpenMP kernel names, cache
// keys) then sees the same command line in any checkout of a tree and any
// build directory at the same place in it, as in ccache; and like ccache's,
// __FILE__, diagnostics, dependency files and debug information then name
// those files relatively.

// baseDir returns the base directory the environment sets, absolute and
// clean, or "" when none is set (or it is "/", which would make every path
// relative: ccache ignores it too).
func (inv *Invocation) baseDir() string {
	base := inv.getenv("OFFCC_BASE_DIR")
	if base == "" {
		return ""
	}
	abs, err := filepath.Abs(base)
	if err != nil || abs == "/" {
		return ""
	}
	return filepath.Clean(abs)
}

// rebasedOptions are the option kinds whose value is a path the base
// directory applies to.
func rebasedValue(a *options.Arg) bool {
	switch a.Option.Value {
	case options.ReadFile, options.WriteFile, options.SearchDir, options.WriteDir:
	default:
		return false
	}
	switch a.Option.ID {
	case "config":
		// A relative --config without a slash is looked up in clang's
		// configuration directories, not the working directory.
		return false
	case "remap_file", "fmodule_file":
		// Values that pair a name with a file.
		return false
	}
	return len(a.Values) == 1
}

// rebase rewrites the absolute paths under base in o's clang arguments
// relative to cwd (see above), and parses the command line again. It does
// nothing when base is "", or when the command sets -working-directory
// (relative paths would then not be relative to cwd). A path is rewritten
// only when the relative one names the same file from cwd.
func (o *Options) rebase(base, cwd string) {
	if base == "" || cwd == "" {
		return
	}
	for _, a := range o.Args {
		if a.Option.ID == "working_directory" {
			return
		}
	}
	changed := false
	var out []string
	for _, a := range o.Args {
		words := a.Words(o.ClangArgs)
		if a.IsInput() || rebasedValue(a) {
			if rel, ok := relativeUnder(a.Value(), base, cwd); ok {
				words = replaceValue(a, words, rel)
				changed = true
			}
		}
		out = append(out, words...)
	}
	if !changed {
		return
	}
	// The same words but for paths: offcc's options stay as they were.
	parsed, err := Parse(out)
	if err != nil {
		return
	}
	o.ClangArgs, o.Args, o.Inputs, o.InputArgs = parsed.ClangArgs, parsed.Args, parsed.Inputs, parsed.InputArgs
}

// relativeUnder returns p relative to cwd when p is an absolute path at or
// under base and the relative path names the same file or directory from
// cwd (or, for a file not there yet, the same directory).
func relativeUnder(p, base, cwd string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	clean := filepath.Clean(p)
	if !under(clean, base) {
		return "", false
	}
	rel, err := filepath.Rel(cwd, clean)
	if err != nil {
		return "", false
	}
	if strings.HasSuffix(p, "/") && rel != "." {
		rel += "/"
	}
	if !sameFile(clean, rel) {
		return "", false
	}
	return rel, true
}

// sameFile reports whether the absolute path abs and the relative path rel
// (which the system resolves from the process's working directory, ".."
// going to the physical parent) name the same file or directory; for one
// that does not exist yet, whether the nearest directories above that do
// are the same, the rest of the names being equal.
func sameFile(abs, rel string) bool {
	for {
		a, errA := os.Stat(abs)
		b, errB := os.Stat(rel)
		if errA == nil && errB == nil {
			return os.SameFile(a, b)
		}
		if !os.IsNotExist(errA) || !os.IsNotExist(errB) || filepath.Base(abs) != filepath.Base(rel) {
			return false
		}
		up := filepath.Dir(rel)
		if filepath.Dir(abs) == abs || up == rel {
			return false
		}
		abs, rel = filepath.Dir(abs), up
	}
}
